"""The README's metric and conventions tables and docs/api.md's metric lists, generated from the
registry and the conventions.

A file marks each generated section with a pair of HTML comments
(``<!-- metric-table:start -->`` ... ``<!-- metric-table:end -->``, the same
for ``conventions-table`` and ``api-metric-lists``; a marker may follow a
comment sign on its line, as in docs/api.md's code block).
``python -m metrics_core.docs_tables README.md`` rewrites what lies between
them; ``--check`` only reports whether the file is up to date (exit 1 when it
is not).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import conventions, registry

SECTIONS = {
    "metric-table": registry.markdown_table,
    "conventions-table": conventions.markdown_table,
    "api-metric-lists": registry.api_lists,
}


def _markers(section: str) -> tuple[str, str]:
    return f"<!-- {section}:start -->", f"<!-- {section}:end -->"


def render(text: str) -> str:
    """``text`` with every marked section it holds replaced by its generated content (ValueError if it
    holds none, or an end marker is missing)."""
    found = 0
    for section, build in SECTIONS.items():
        start, end = _markers(section)
        i = text.find(start)
        if i < 0:
            continue
        j = text.find(end, i)
        if j < 0:
            raise ValueError(f"marker {end} not found after {start}")
        line = text.rfind("\n", 0, j) + 1  # the end marker's line keeps what precedes the marker
        text = text[: i + len(start)] + "\n" + build() + "\n" + text[line:]
        found += 1
    if not found:
        raise ValueError(f"no generated section ({', '.join(SECTIONS)}) marked in the text")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metrics_core.docs_tables", description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", default="README.md", help="the markdown file (default README.md)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not up to date; write nothing")
    args = parser.parse_args(argv)
    path = Path(args.path)
    text = path.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print(f"{path}: generated tables are out of date; run python -m metrics_core.docs_tables {path}",
                  file=sys.stderr)
            return 1
        return 0
    if new != text:
        path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
