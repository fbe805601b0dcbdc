"""JUnit XML of a regression gate's results, the test report format CI systems show.

One ``<testsuite name="metrics-core check">`` inside ``<testsuites>``; one ``<testcase>`` per
condition, model and segment (``classname`` ``metrics-core.check.<model>``, ``name`` the condition as
written, its segment in brackets: ``... in every locale [locale=de]``; ``time`` the seconds spent
deciding it, the suite's ``time`` the whole check's); a failed condition holds a ``<failure>`` whose message is its line; every test case
carries its line in ``<system-out>`` too, so a passing value is shown as well. Written with the
standard library's ElementTree, which escapes every text and attribute; characters XML 1.0 cannot
hold at all (control characters, lone surrogates, U+FFFE and U+FFFF) are first written as their
escapes (``\x1b``), as on the terminal (:func:`metrics_core.terminal.escape`), so the document
stays well formed whatever a model, segment or condition is named.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ..errors import MetricsError
from ..terminal import escape

SUITE = "metrics-core check"


def junit_xml(report) -> str:
    """The JUnit XML document of a :class:`~metrics_core.analysis.gate.CheckReport`, as text."""
    failures = len(report.failures)
    root = ET.Element("testsuites", name=SUITE, tests=str(len(report)), failures=str(failures), errors="0")
    suite = ET.SubElement(root, "testsuite", name=SUITE, tests=str(len(report)), failures=str(failures),
                          errors="0", skipped="0", time=_seconds(getattr(report, "seconds", 0.0)))
    for r in report:
        name = escape(f"{r.condition} [{r.segment}]" if r.segment else r.condition)
        line = escape(r.line)
        case = ET.SubElement(suite, "testcase", classname=f"metrics-core.check.{escape(r.model)}", name=name,
                             time=_seconds(r.seconds))
        if not r.passed:
            failure = ET.SubElement(case, "failure", message=line, type="ConditionFailed")
            failure.text = line
        ET.SubElement(case, "system-out").text = line
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _seconds(value: float) -> str:
    """Seconds as JUnit writes them: a decimal with microseconds (never exponent notation)."""
    return f"{max(float(value), 0.0):.6f}"


def write_junit(report, path) -> Path:
    """Write :func:`junit_xml` to ``path`` (UTF-8); one-line MetricsError when it cannot be written."""
    path = Path(path)
    try:
        path.write_text(junit_xml(report), encoding="utf-8")
    except OSError as e:
        raise MetricsError(f"{path}: cannot write the JUnit file ({e.strerror or e})") from None
    return path
