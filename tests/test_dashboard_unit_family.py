"""The unit (users, queries, sessions) and the family of segment tests are settings of the analysis
on the dashboard: read from the address (so a saved view or a shared link carries them), shown in
the sidebar and on Compare, and used by the Brief's sentences, tables and family sentence."""

from __future__ import annotations

import re
from pathlib import Path

import _deadlines as deadlines
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def test_the_brief_names_the_rows_and_the_family_the_address_chose():
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params["unit"] = "queries"
    at.query_params["compare_family"] = "attribute"
    at.query_params["compare_correction"] = "bonferroni"
    at.run()
    at.switch_page("views/brief.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="unit").value == "queries"
    lines = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert lines and all("queries compared" in line for line in lines[:1])
    shown = " ".join([*lines, *(c.value for c in at.caption)])
    assert not re.search(r"\busers?\b", shown.replace("Users counted", "")), shown
    assert "each query attribute apart" in shown and "Bonferroni correction" in shown
    failures = next(df.value for df in at.dataframe if "share of loss" in df.value.columns)
    assert "queries" in failures.columns and "users" not in failures.columns


def _texts(at) -> str:
    return " ".join([*(c.value for c in at.caption), *(s.value for s in at.subheader), *(m.value for m in at.markdown)])


def test_failures_and_compare_name_the_rows_by_the_unit():
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params["unit"] = "sessions"
    at.run()
    at.switch_page("views/failures.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = _texts(at)
    groups = next(df.value for df in at.dataframe if "share" in df.value.columns and "group" in df.value.columns)
    assert "sessions" in groups.columns and "users" not in groups.columns
    total = sum(int(str(v).replace(",", "")) for v in groups["sessions"])
    assert f"{total:,} sessions match" in shown, shown  # every evaluated list when no group is chosen
    assert not re.search(r"\busers? match", shown) and "Worst 25 sessions of" in shown
    at.switch_page("views/compare.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    verdicts = next(df.value for df in at.dataframe if "lift [95% CI]" in df.value.columns)
    assert "sessions paired" in verdicts.columns and "users paired" not in verdicts.columns
    assert "paired over the sessions counted" in _texts(at)


def test_a_labelled_choice_reads_its_raw_value_from_the_address():
    """Every sidebar selectbox bound to the address takes a non-default option the address names, and
    Compare's labelled selectboxes (shown as "Paired t-test", kept as ``t``) take the raw value too."""
    from dashboard.controls import PRESET_KEY, USERS_KEY, UNIT_KEY, _SPECS, preset_names
    from metrics_core.analysis.population import USERS
    from metrics_core.units import UNITS

    wanted = {name: spec["options"][-1] for name, spec in _SPECS.items() if spec["widget"] != "number"}
    wanted.update({USERS_KEY: USERS[-1], UNIT_KEY: list(UNITS)[-1], PRESET_KEY: preset_names()[-1],
                   "compare_test": "wilcoxon", "compare_correction": "bonferroni", "compare_family": "segment"})
    assert all(value != _SPECS[name]["default"] for name, value in wanted.items() if name in _SPECS)
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    for key, value in wanted.items():
        at.query_params[key] = value
    at.run()
    at.switch_page("views/compare.py").run()
    assert not at.exception, at.exception
    got = {key: at.selectbox(key=key).value for key in wanted}
    assert got == wanted


def test_no_widget_binds_to_the_address_through_a_label():
    """Streamlit writes a bound selectbox's formatted label into the address and reads the address back as
    a label: a ``format_func`` on a ``bind="query-params"`` widget loses the raw value (``?unit=queries``
    is not the label "queries (search)"). Labelled choices are kept with :func:`dashboard.url.bound`."""
    import ast

    root = Path(APP).parent
    both = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                names = {k.arg for k in node.keywords}
                if {"bind", "format_func"} <= names:
                    both.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not both, both
