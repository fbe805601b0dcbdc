"""Every failure group of the brief opens exactly its users on Failures: the same pair of models,
the same metric, the same count. Reference: the users counted by hand from the per-user values of
the two models (plain pandas: worse than the baseline; not served, a score of 0, or else ranked
lower), and the brief's own table."""

from __future__ import annotations

import re
from pathlib import Path

import _deadlines as deadlines
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import brief_text, demo  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def _count(text: str) -> int:
    return int(re.sub(r"[^0-9]", "", text))


def _matching(at: AppTest) -> int:
    caption = next(c.value for c in at.caption if re.search(r"users? match", c.value))
    return _count(caption.split(" user")[0])


def test_every_brief_row_opens_its_users_and_the_sidebar_opens_the_pair_under_study():
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params["ties"] = "trec"  # one order of tied scores, so that every per-user metric is offered
    at.run()
    at.switch_page("views/brief.py").run()
    assert not at.exception
    rows = next(df.value for df in at.dataframe if "share of loss" in df.value.columns)
    assert len(rows)
    names = demo.MODEL_NAMES
    baseline, first_challenger = names[0], names[1]
    # by hand: the demo's per-user values over every evaluated user (the default population)
    d = demo.make_demo()
    metric = "ndcg@10"
    per_user = {n: mc.evaluate(d.runs[n], d.qrels, metrics=[metric], ties="trec").per_user[metric] for n in names}
    served = {n: set(d.runs[n]["user_id"].astype(str)) for n in names}

    at.switch_page("views/failures.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # opened from the sidebar: the decision's first challenger against its baseline
    assert at.selectbox(key="failures_model").value == first_challenger
    assert at.selectbox(key="failures_other").value == baseline
    at.selectbox(key="failures_other").set_value(baseline)
    at.selectbox(key="failures_metric").set_value(metric).run()
    for row in rows.itertuples(index=False):  # one run per row: the model and the group set together
        at.selectbox(key="failures_model").set_value(row.challenger)
        at.selectbox(key="failures_group").set_value(brief_text.FAILURES_GROUP[row.group]).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert [at.selectbox(key=k).value for k in ("failures_model", "failures_other", "failures_metric",
                                                      "failures_group")] == \
            [row.challenger, baseline, metric, brief_text.FAILURES_GROUP[row.group]]
        assert _matching(at) == _count(row.users), row
        a = per_user[baseline]
        b = per_user[row.challenger].reindex(a.index)
        worse = (b < a) & b.notna()
        unserved = ~a.index.astype(str).isin(served[row.challenger])
        group = {"not served": worse & unserved, "nothing relevant found": worse & ~unserved & (b == 0),
                 "relevant ranked lower": worse & ~unserved & (b != 0)}[row.group]
        assert int(group.sum()) == _count(row.users), row
