"""The documentation's generated sections: docs/metrics.md's metric table, the conventions and presets
tables of docs/conventions-and-presets.md, docs/api.md's metric lists and docs/spark.md's conventions
taken at their default only, generated from the registry, the conventions and the presets.

A file marks each generated section with a pair of HTML comments
(``<!-- metric-table:start -->`` ... ``<!-- metric-table:end -->``, the same
for ``conventions-table``, ``presets-table``, ``api-metric-lists`` and ``spark-conventions``; a marker may follow a
comment sign on its line, as in docs/api.md's code block).
``python -m metrics_core.docs_tables docs/metrics.md`` rewrites what lies between
them; ``--check`` only reports whether the file is up to date (exit 1 when it
is not). Without a path it rewrites every page that holds a section (:data:`PAGES`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .metrics import conventions, registry
from .metrics.presets import PRESETS


def presets_table() -> str:
    """One row per preset of :data:`metrics_core.metrics.presets.PRESETS`: its name, the library, the conventions it
    sets away from their defaults, and how it is tested."""
    defaults = conventions.defaults()
    lines = ["| preset | library | conventions it sets (others keep their default) | checked by |",
             "| --- | --- | --- | --- |"]
    for p in PRESETS:
        changed = ", ".join(f"`{name}={value}`" for name, value in p.settings.items() if defaults.get(name) != value)
        lines.append(f"| `{p.name}` | {p.library} | {changed or 'none'} | {p.checked.replace('|', chr(92) + '|')} |")
    return "\n".join(lines)


SECTIONS = {
    "metric-table": registry.markdown_table,
    "conventions-table": conventions.markdown_table,
    "presets-table": presets_table,
    "api-metric-lists": registry.api_lists,
    "spark-conventions": conventions.spark_table,
}
#: the pages holding generated sections, rewritten by ``python -m metrics_core.docs_tables`` without a path
PAGES = ("docs/metrics.md", "docs/conventions-and-presets.md", "docs/api.md", "docs/spark.md")


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
    parser.add_argument("paths", nargs="*", metavar="path",
                        help=f"markdown files (default: {', '.join(PAGES)}, from the repository root)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a file is not up to date; write nothing")
    args = parser.parse_args(argv)
    stale = 0
    for path in map(Path, args.paths or PAGES):
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if args.check:
            if new != text:
                print(f"{path}: generated tables are out of date; run python -m metrics_core.docs_tables {path}",
                      file=sys.stderr)
                stale = 1
        elif new != text:
            path.write_text(new, encoding="utf-8")
    return stale


if __name__ == "__main__":
    sys.exit(main())
