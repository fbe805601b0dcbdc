"""The README's metric and conventions tables, generated from the registry and the conventions.

The README marks each generated table with a pair of HTML comments
(``<!-- metric-table:start -->`` ... ``<!-- metric-table:end -->``, the same
for ``conventions-table``). ``python -m metrics_core.docs_tables README.md``
rewrites what lies between them; ``--check`` only reports whether the file is
up to date (exit 1 when it is not).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import conventions, registry

SECTIONS = {
    "metric-table": registry.markdown_table,
    "conventions-table": conventions.markdown_table,
}


def _markers(section: str) -> tuple[str, str]:
    return f"<!-- {section}:start -->", f"<!-- {section}:end -->"


def render(text: str) -> str:
    """``text`` with every marked section replaced by its generated table (ValueError if a marker is missing)."""
    for section, build in SECTIONS.items():
        start, end = _markers(section)
        i, j = text.find(start), text.find(end)
        if i < 0 or j < i:
            raise ValueError(f"markers {start} ... {end} not found in order")
        text = text[: i + len(start)] + "\n" + build() + "\n" + text[j:]
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
