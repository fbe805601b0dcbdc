"""The Counterfactual page and its tables: the verdict, the brief's line, the diagnostics and each
context's share, against ``mc.off_policy`` called directly and plain formulas written here; the page,
the Brief and Failures through Streamlit's AppTest (a log with propensities uploaded beside two runs).
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")

import metrics_core as mc  # noqa: E402
from dashboard import counterfactual_tables as cft, text  # noqa: E402
from test_dashboard_pages import app, frame_with, page  # noqa: E402

HOSTILE = "dense*[x](javascript:1)"


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def bandit(seed=0, n=600, n_users=30, n_items=6):
    """A log whose logging policy is known (softmax of random logits per user), clicks drawn from a per
    (user, item) rate, and two runs scoring every item of every user: one random, one that knows the rates
    (ids "1" and "2.0" stay text; one model name is markdown)."""
    rng = np.random.default_rng(seed)
    users = [f"u{i}" for i in range(n_users)]
    items = [str(j) if j % 2 else f"{j}.0" for j in range(n_items)]
    logging = np.exp(rng.normal(size=(n_users, n_items)))
    logging /= logging.sum(1, keepdims=True)
    u = rng.integers(0, n_users, n)
    a = np.array([rng.choice(n_items, p=logging[i]) for i in u])
    ctr = rng.uniform(0.05, 0.4, size=(n_users, n_items))
    log = pd.DataFrame({"user_id": [users[i] for i in u], "item_id": [items[j] for j in a],
                        "click": (rng.random(n) < ctr[u, a]).astype(int), "propensity": logging[u, a].round(6)})
    runs = {}
    for name, knows in (("bm25", 0.0), (HOSTILE, 1.0)):
        s = rng.normal(size=(n_users, n_items)) + knows * ctr * 10
        runs[name] = pd.DataFrame([(users[i], items[j], round(float(s[i, j]), 3)) for i in range(n_users)
                                   for j in range(n_items)], columns=["user_id", "item_id", "score"])
    return log, runs


def _csv(frame: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue().encode()


def _direct(log, runs, **kw):
    return mc.off_policy(log.rename(columns={"click": "reward"}), runs, n_bootstrap=cft.N_BOOTSTRAP, seed=0, **kw)


def test_tables_against_the_result_and_plain_formulas():
    log, runs = bandit()
    res = _direct(log, runs, policy="top1")
    verdicts = cft.verdict_table(res)
    assert list(verdicts["model"]) == list(runs)
    for _, row in verdicts.iterrows():
        e = res.estimates[(res.estimates["model"] == row["model"]) & (res.estimates["estimator"] == "dr")].iloc[0]
        assert (row["value"], row["low"], row["high"], row["lift"]) == (e["value"], e["low"], e["high"], e["lift"])
        assert row["estimator"] == "DR"
    # diagnostics: Kish's ESS and the weights written plainly (top-1 policy by loops)
    diag = cft.diagnostics_table(res).set_index("model")
    # every column has the short heading and hover text the page shows (so that the table fits its width)
    assert list(cft.DIAGNOSTICS_COLUMNS) == ["model", *diag.columns]
    assert all(len(label) <= 9 and hover for label, _, hover in cft.DIAGNOSTICS_COLUMNS.values())
    for name, run in runs.items():
        best = {u: g.loc[g["score"] == g["score"].max(), "item_id"].tolist() for u, g in run.groupby("user_id")}
        w = [(1 / len(best[u]) if i in best[u] else 0.0) / p
             for u, i, p in zip(log["user_id"], log["item_id"], log["propensity"])]
        assert diag.loc[name, "effective sample size"] == pytest.approx(sum(w) ** 2 / sum(x * x for x in w))
        assert diag.loc[name, "max weight"] == pytest.approx(max(w))
        assert diag.loc[name, "mean weight"] == pytest.approx(sum(w) / len(w))
        assert diag.loc[name, "clipping"] == "none"
        # every context's contribution to IPS adds up to the estimate; the largest comes first
        table = cft.context_table(res, name, "ips", n=10_000)
        ips = sum(x * r for x, r in zip(w, log["click"])) / len(log)
        assert table["contribution"].sum() == pytest.approx(ips)
        assert len(table) == log["user_id"].nunique()
        assert (np.diff(np.abs(table["contribution"].to_numpy())) <= 1e-15).all()
        assert cft.context_table(res, name, "ips", n=5)["user_id"].tolist() == table["user_id"].head(5).tolist()
    line = cft.brief_line(res)
    assert line.startswith("Counterfactual (DR): ")
    clipped = _direct(log, runs, policy="top1", clip=5.0, estimators=["ips"], primary="ips")
    table = cft.diagnostics_table(clipped).set_index("model")
    assert set(table["clipping"]) == {"at 5"}
    for name, run in runs.items():  # rounds cut by the clip, and the clipped IPS, counted plainly
        best = {u: g.loc[g["score"] == g["score"].max(), "item_id"].tolist() for u, g in run.groupby("user_id")}
        w = [(1 / len(best[u]) if i in best[u] else 0.0) / p
             for u, i, p in zip(log["user_id"], log["item_id"], log["propensity"])]
        assert table.loc[name, "rounds clipped"] == sum(x > 5.0 for x in w)
        ips = sum(min(x, 5.0) * r for x, r in zip(w, log["click"])) / len(w)
        got = clipped.estimates.set_index("model").loc[name, "value"]
        assert got == pytest.approx(ips, rel=1e-12)


def test_brief_line_names_the_best_model_and_the_unreliable():
    log, runs = bandit(seed=3)
    res = _direct(log, runs, policy="top1", estimators=["ips", "snips"], primary="snips")
    table = cft.verdict_table(res)
    line = cft.brief_line(res)
    better = table[table["verdict"] == "better"]
    if len(better):
        assert better.loc[better["lift"].idxmax(), "model"] in line
    else:
        assert "no model is clearly better" in line
    assert ("unreliable" in line) == table["verdict"].str.contains("unreliable").any()
    assert cft.estimators_for(cft.LARGE_LOG_ROWS + 1) == ["ips", "snips"] and cft.estimators_for(10) is None


def test_page_brief_and_failures_show_the_counterfactual_verdict():
    log, runs = bandit()
    at = app()
    files = [(f"{name}.csv", _csv(run), "text/csv") for name, run in runs.items()]
    at.file_uploader(key="upload_runs_0").set_value(files).run()
    at.file_uploader(key="upload_logged_0").set_value(("clicks.csv", _csv(log), "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    page(at, "counterfactual")
    assert not at.error, [e.value for e in at.error]
    shown = frame_with(at, "verdict").set_index("model")
    ref = _direct(log, runs, policy="softmax", temperature=1.0)
    for _, row in ref.verdicts.iterrows():
        e = ref.estimates[(ref.estimates["model"] == row["model"]) & (ref.estimates["estimator"] == "dr")].iloc[0]
        assert shown.loc[row["model"], "value"] == pytest.approx(e["value"], rel=1e-12)
        assert shown.loc[row["model"], "lift low"] == pytest.approx(e["lift_low"], rel=1e-12)
        assert shown.loc[row["model"], "verdict"] == row["verdict"]
    assert any(t.value == cft.brief_line(ref) for t in at.text)
    assert set(frame_with(at, "effective sample size")["model"]) == set(runs)
    for w in at.warning:  # model names are shown as text: the markdown link is escaped
        assert "](javascript" not in w.value
    # a clip: the diagnostics say so and the estimates follow
    at.number_input(key="ope_clip").set_value(3.0).run()
    assert set(frame_with(at, "rounds clipped")["clipping"]) == {"at 3"}
    at.number_input(key="ope_clip").set_value(0.0).run()
    # another policy: the table follows
    at.selectbox(key="ope_policy").set_value("top1").run()
    top1 = _direct(log, runs, policy="top1")
    got = frame_with(at, "verdict").set_index("model")
    for name in runs:
        e = top1.estimates[(top1.estimates["model"] == name) & (top1.estimates["estimator"] == "dr")].iloc[0]
        assert got.loc[name, "value"] == pytest.approx(e["value"], rel=1e-12)
    # the Brief opens on the same verdict; Failures breaks it down per context
    page(at, "brief")
    assert any(t.value == cft.brief_line(top1) for t in at.text)
    lines = [m.value for m in at.markdown if m.value.startswith("- ") and "estimated value" in m.value]
    assert len(lines) == 2 and "](javascript" not in "".join(lines)
    assert any(text.md(HOSTILE) in line for line in lines)  # the model name shown as its characters
    page(at, "failures")
    contexts = frame_with(at, "contribution")
    assert contexts["user_id"].tolist() == cft.context_table(top1, "bm25", "dr")["user_id"].tolist()


def test_a_log_without_propensity_is_one_line_on_the_page():
    log, runs = bandit()
    at = app()
    at.file_uploader(key="upload_runs_0").set_value([("bm25.csv", _csv(runs["bm25"]), "text/csv")]).run()
    at.file_uploader(key="upload_logged_0").set_value(
        ("clicks.csv", _csv(log.drop(columns="propensity")), "text/csv")).run()
    page(at, "counterfactual")
    assert len(at.error) == 1 and "propensity" in at.error[0].value and "\n" not in at.error[0].value


def test_the_figure_of_every_estimator_offers_what_mc_plot_draws():
    from metrics_core.outputs import plot

    assert list(cft.FIGURE_MEASURES) == list(plot.OFF_POLICY_MEASURES)
    log, runs = bandit()
    res = _direct(log, runs, policy="top1")
    for measure in cft.FIGURE_MEASURES:
        figure = cft.estimates_figure(res, measure)
        drawn = {trace.name for trace in figure.data if trace.name}
        assert set(runs) <= drawn, (measure, drawn)
