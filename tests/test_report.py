"""metrics_core.outputs.report: self-contained, escaped HTML."""

import re

import numpy as np
import pandas as pd
import plotly.offline
import pytest

import metrics_core as mc
from metrics_core.analysis.compare import compare
from metrics_core.outputs.report import build_report

XSS = "<img src=x onerror=alert(1)>"


def make_evaluations(names=(XSS, "good"), users=30, items=8, seed=0):
    rng = np.random.default_rng(seed)
    rel = (rng.random((users, items)) < 0.3).astype(int)
    rel[:, 0] = 1
    rel[:, 1] = 0
    uid = [XSS if u == 0 else f"u{u}" for u in range(users)]
    qrels = pd.DataFrame([(uid[u], f"i{i}", rel[u, i]) for u in range(users) for i in range(items)],
                         columns=["user_id", "item_id", "relevance"])
    out = {}
    for j, name in enumerate(names):
        s = rng.random((users, items)) + j * 0.6 * rel
        run = pd.DataFrame([(uid[u], f"i{i}", s[u, i]) for u in range(users) for i in range(items)],
                           columns=["user_id", "item_id", "score"])
        out[name] = mc.evaluate(run, qrels, metrics=["ndcg@5", "recall@3", "auc"])
    return out


@pytest.fixture(scope="module")
def evaluations():
    return make_evaluations()


@pytest.fixture(scope="module")
def html_text(evaluations):
    return build_report(evaluations, title=f"title {XSS}", settings={"k": 5, XSS: XSS})


def test_plotly_inlined_no_external_urls(html_text):
    js = plotly.offline.get_plotlyjs()
    assert html_text.count(js) == 1
    rest = html_text.replace(js, "")
    assert not re.search(r"(?:https?:)?//[a-z0-9]", rest, re.I), re.findall(r".{40}//.{40}", rest)[:3]
    assert "<script src" not in rest and "<link" not in rest


def test_user_strings_escaped(html_text):
    js = plotly.offline.get_plotlyjs()
    rest = html_text.replace(js, "")
    assert XSS not in rest
    assert "onerror=alert(1)&gt;" in rest
    # the only tags in the page are ours
    tags = set(re.findall(r"<([a-zA-Z][a-zA-Z0-9]*)", rest))
    assert tags <= {"html", "head", "meta", "title", "style", "script", "body", "main", "h1", "h2", "p",
                    "table", "thead", "tbody", "tr", "th", "td", "span", "br", "ul", "li", "b", "div"}
    assert "<img" not in rest


def test_summary_and_comparison_values(evaluations, html_text):
    ev = evaluations["good"]
    assert f"{ev.summary['ndcg@5']:.4f}" in html_text
    assert f"{ev.summary['auc']:.4f}" in html_text
    lo, hi = mc_bootstrap(ev.per_user["ndcg@5"])
    assert f"[{lo:.4f}, {hi:.4f}]" in html_text
    cmp_ = compare(evaluations, baseline=XSS)
    row = cmp_[cmp_["metric"] == "ndcg@5"].iloc[0]
    assert f"{row['diff']:.4f}" in html_text
    assert html_text.count("class='chart'") == 1 + 2 + 2  # comparison, ROC, PR, 2 distributions


def mc_bootstrap(values):
    from test_compare import plain_bootstrap
    return plain_bootstrap(values)


def test_single_model_report_has_no_comparison():
    evs = make_evaluations(names=("only",))
    text = build_report(evs)
    assert "nothing to compare" in text and "id='comparison'" not in text


def test_report_without_plotly_message(monkeypatch, evaluations):
    import builtins
    real = builtins.__import__

    def fake(name, *a, **k):
        if name.startswith("plotly"):
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(mc.MetricsError, match="pip install"):
        build_report(evaluations)
