"""JUnit XML of a regression gate's results, the test report format CI systems show.

One ``<testsuite name="metrics-core check">`` inside ``<testsuites>``; one ``<testcase>`` per
condition and model (``classname`` ``metrics-core.check.<model>``, ``name`` the condition as
written); a failed condition holds a ``<failure>`` whose message is its line; every test case
carries its line in ``<system-out>`` too, so a passing value is shown as well. Written with the
standard library's ElementTree, which escapes every text and attribute.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from .errors import MetricsError

SUITE = "metrics-core check"


def junit_xml(report) -> str:
    """The JUnit XML document of a :class:`~metrics_core.gate.CheckReport`, as text."""
    failures = len(report.failures)
    root = ET.Element("testsuites", name=SUITE, tests=str(len(report)), failures=str(failures), errors="0")
    suite = ET.SubElement(root, "testsuite", name=SUITE, tests=str(len(report)), failures=str(failures),
                          errors="0", skipped="0", time="0")
    for r in report:
        case = ET.SubElement(suite, "testcase", classname=f"metrics-core.check.{r.model}", name=r.condition,
                             time="0")
        if not r.passed:
            failure = ET.SubElement(case, "failure", message=r.line, type="ConditionFailed")
            failure.text = r.line
        ET.SubElement(case, "system-out").text = r.line
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report, path) -> Path:
    """Write :func:`junit_xml` to ``path`` (UTF-8); one-line MetricsError when it cannot be written."""
    path = Path(path)
    try:
        path.write_text(junit_xml(report), encoding="utf-8")
    except OSError as e:
        raise MetricsError(f"{path}: cannot write the JUnit file ({e.strerror or e})") from None
    return path
