"""In a notebook: examples/evaluate.ipynb runs through a real Jupyter kernel (nbclient, ipykernel) and
its outputs hold the numbers the library computes here; the HTML reprs escape every user string;
``mc.plot`` draws figures whose points are the metrics computed independently."""

from __future__ import annotations

import base64
import html
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _notebooks import run_in_kernel
import metrics_core as mc
from metrics_core.brief import build as mb
from metrics_core.brief import text as bt
from metrics_core import formats as fmt
from metrics_core.errors import MetricsError

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "examples" / "evaluate.ipynb"


def _data(seed: int = 3, n_users: int = 80):
    rng = np.random.default_rng(seed)
    users = [f"u{u}" for u in range(n_users)]
    qrels = pd.DataFrame([(u, f"i{i}", 1) for u in users for i in rng.choice(40, 4, replace=False)],
                         columns=["user_id", "item_id", "relevance"])
    runs = {}
    for name, skill in (("base", 0.0), ("<script>alert(1)</script> & co", 0.6)):
        rows = []
        for u, liked in qrels.groupby("user_id")["item_id"]:
            score = rng.random(40) + skill * np.isin([f"i{i}" for i in range(40)], liked.to_numpy())
            rows += [(u, f"i{i}", float(score[i])) for i in np.argsort(-score)[:10]]
        runs[name] = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    return runs, qrels


def _array(value) -> np.ndarray:
    """A plotly JSON array: a list, or a typed array ``{"dtype", "bdata"}`` (base64 of its bytes)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


def _outputs(cell) -> dict:
    out = {}
    for o in cell.get("outputs", []):
        out.update(o.get("data", {}))
    return out


def test_the_example_notebook_runs_in_a_jupyter_kernel(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="pip install -r requirements/dev.txt")
    pytest.importorskip("nbclient", reason="pip install -r requirements/dev.txt")
    pytest.importorskip("ipykernel", reason="pip install -r requirements/dev.txt")
    pytest.importorskip("plotly", reason="pip install 'metrics-core[dashboard]'")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "store the notebook without outputs"
    run_in_kernel(nb, tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]

    # the same data and calls here, in this process
    scope: dict = {}
    exec(code[0].source, scope)  # noqa: S102 - the notebook's own data cell: the same synthetic dataset
    runs, qrels = scope["runs"], scope["qrels"]
    reference = {n: mc.evaluate(r, qrels, ["ndcg@10", "recall@10", "auc"]) for n, r in runs.items()}

    shown = _outputs(code[1])["text/html"]
    for metric, value in reference["two_tower"].summary.items():
        row = re.search(rf"<td>{re.escape(metric)}</td><td class='n'>([^<]+)</td><td>([^<]*)</td>", shown)
        assert row is not None and row.group(1) == fmt.metric(value), (metric, shown)
        if metric != "auc":  # per-user metrics have an interval around the mean
            low, high = map(float, row.group(2).strip("[]").split(", "))
            assert low <= value <= high
    assert "Settings: gain linear" in shown and "ties average" in shown

    table = mc.compare(reference, baseline="popularity", metrics=["ndcg@10", "recall@10"])
    assert "two_tower" in _outputs(code[2])["text/html"] and f"{table['lift'].iloc[0]:.6f}"[:6] in \
        _outputs(code[2])["text/html"]

    brief = mb.build_brief(reference, mc.Decision("popularity", ("two_tower",), ("ndcg@10", "recall@10")),
                           title="Two-tower against popularity")
    shown = _outputs(code[3])["text/html"]
    assert "Two-tower against popularity" in shown
    for line in bt.verdict_lines(brief):
        assert html.escape(line, quote=True) in shown

    ex = mc.explain(runs["two_tower"], qrels, "ndcg@10", presets=["trec_eval", "sklearn", "ranx"])
    shown = _outputs(code[4])["text/html"]
    for preset, value in ex.values["value"].items():
        assert f"<td>{preset}</td>" in shown and f"<td class='n'>{fmt.metric(value)}</td>" in shown

    def traces(cell) -> list[dict]:  # the figure the kernel sent
        return _outputs(cell)["application/vnd.plotly.v1+json"]["data"]

    drawn = traces(code[5])
    assert {t["name"] for t in drawn} == {"popularity", "two_tower"} and len(drawn) == 4
    for t in drawn:  # ndcg and recall at K = 10 are what evaluate gives at @10
        k = list(_array(t["x"])).index(10)
        metric = "ndcg" if t["xaxis"] == "x" else "recall"
        assert _array(t["y"])[k] == pytest.approx(reference[t["name"]].summary[f"{metric}@10"], abs=1e-12)
    assert len(traces(code[6])) == 2
    assert list(_array(traces(code[7])[0]["x"])) == pytest.approx(list(100 * table["lift"]))


def test_reprs_escape_every_user_string():
    runs, qrels = _data()
    evals = {n: mc.evaluate(r, qrels, ["ndcg@5", "recall@5"]) for n, r in runs.items()}
    hostile = next(n for n in runs if n.startswith("<"))
    brief = mb.build_brief(evals, mc.Decision("base", (hostile,), ("ndcg@5",)), title="<b>A & B</b>",
                           notes="<img src=x onerror=alert(1)>")
    shown = brief._repr_html_()
    assert "<script" not in shown and "<img" not in shown and "<b>A" not in shown
    assert html.escape(hostile) in shown and "&lt;b&gt;A &amp; B&lt;/b&gt;" in shown
    assert all(html.escape(line) in shown for line in bt.verdict_lines(brief))
    shown = mc.compare(evals, baseline="base")._repr_html_()  # a DataFrame: pandas escapes its cells
    assert "<script" not in shown and html.escape(hostile, quote=False) in shown
    shown = evals[hostile]._repr_html_()
    value = evals[hostile].summary["ndcg@5"]
    assert f"<td>ndcg@5</td><td class='n'>{fmt.metric(value)}</td>" in shown
    # the interval is the percentile bootstrap of the per-user mean: it holds the mean
    low, high = map(float, re.search(r"<td>ndcg@5</td><td class='n'>[^<]+</td><td>\[([^\]]+)\]", shown)
                    .group(1).split(", "))
    assert low < value < high


def test_plot_figures_hold_the_metrics_computed_independently():
    pytest.importorskip("plotly", reason="pip install 'metrics-core[dashboard]'")
    runs, qrels = _data()
    evals = {n: mc.evaluate(r, qrels, ["ndcg@5", "auc"]) for n, r in runs.items()}
    hostile = next(n for n in runs if n.startswith("<"))
    # ECDF: at each drawn value, the share of users at or below it
    fig = mc.plot.ecdf(evals, "ndcg@5")
    for trace in fig.data:
        values = evals[html.unescape(trace.meta or trace.name)].per_user["ndcg@5"].to_numpy()
        assert list(trace.y) == pytest.approx([(values <= x).mean() for x in trace.x])
    # plotly shows the names as text; a long one is drawn cut and kept whole in the trace's meta
    assert {t.meta or t.name for t in fig.data} == {"base", html.escape(hostile, quote=False)}
    assert all(len(t.name) <= 40 for t in fig.data)
    # ROC: the legend's AUC is evaluate's; the curve ends at (1, 1)
    fig = mc.plot.roc(evals)
    for trace in fig.data[1:]:
        assert trace.x[-1] == 1 and trace.y[-1] == 1
    assert {t.meta or t.name for t in fig.data[1:]} == {
        f"{html.escape(n, quote=False)} (AUC {evals[n].summary['auc']:.3f})" for n in evals}
    # segments: the mean per segment of the per-user values
    attributes = pd.DataFrame({"user_id": [f"u{u}" for u in range(80)], "group": ["a", "b"] * 40})
    fig = mc.plot.segments(evals, "ndcg@5", attributes, "group")
    per_user = evals["base"].per_user["ndcg@5"]
    base = next(t for t in fig.data if t.name == "base")
    for segment, mean in zip(base.x, base.y):
        users = attributes.loc[attributes["group"] == segment, "user_id"]
        assert mean == pytest.approx(per_user.reindex(users).mean())


def test_plot_errors_are_one_line():
    runs, qrels = _data()
    ev = mc.evaluate(runs["base"], qrels, ["ndcg@5"])
    with pytest.raises(MetricsError, match="not an Evaluation"):
        mc.plot.ecdf({"base": runs["base"]}, "ndcg@5")
    with pytest.raises(MetricsError, match="has no per-user 'map@5'"):
        mc.plot.ecdf({"base": ev}, "map@5")
    with pytest.raises(MetricsError, match="the table mc.compare"):
        mc.plot.lift_forest(pd.DataFrame({"x": [1]}))


def test_plot_without_plotly_names_the_extra(monkeypatch):
    runs, qrels = _data()
    ev = mc.evaluate(runs["base"], qrels, ["ndcg@5"])
    monkeypatch.setitem(sys.modules, "plotly", None)  # import plotly now fails
    with pytest.raises(MetricsError) as info:
        mc.plot.ecdf({"base": ev}, "ndcg@5")
    assert str(info.value) == "mc.plot needs plotly: pip install 'metrics-core[dashboard]'"


def test_mc_plot_is_callable_by_kind():
    pytest.importorskip("plotly", reason="pip install 'metrics-core[dashboard]'")
    runs, qrels = _data()
    evals = {n: mc.evaluate(r, qrels, ["ndcg@5", "recall@5"]) for n, r in runs.items()}
    table = mc.compare(evals, baseline="base")
    assert mc.plot(evals).to_dict() == mc.plot.metric_vs_k(evals).to_dict()
    assert mc.plot(evals, "ecdf", "ndcg@5").to_dict() == mc.plot.ecdf(evals, "ndcg@5").to_dict()
    assert mc.plot(evals["base"], "box", metric="ndcg@5").to_dict() == mc.plot.box({"model": evals["base"]},
                                                                                   "ndcg@5").to_dict()
    assert mc.plot(table).to_dict() == mc.plot.lift_forest(table).to_dict()
    assert mc.plot(table, "win_tie_loss").to_dict() == mc.plot.win_tie_loss(table).to_dict()
    for what, kind, message in ((evals, "lift_forest", "no figure 'lift_forest' of evaluations; use one of: "
                                 "metric_vs_k, roc"), (table, "ecdf", "no figure 'ecdf' of a comparison table"),
                                (42, None, "mc.plot draws {name: Evaluation}")):
        with pytest.raises(MetricsError, match=re.escape(message)) as info:
            mc.plot(what, kind)
        assert "\n" not in str(info.value)


def test_a_figure_offers_plotly_json_and_html_with_plotlyjs_once():
    pytest.importorskip("plotly", reason="pip install 'metrics-core[dashboard]'")
    from plotly.offline import get_plotlyjs

    from metrics_core.outputs.plot import notebook_figure

    runs, qrels = _data()
    evals = {n: mc.evaluate(r, qrels, ["ndcg@5"]) for n, r in runs.items()}
    notebook_figure.reset_plotlyjs()
    first, second = (mc.plot.ecdf(evals, "ndcg@5")._repr_mimebundle_() for _ in range(2))
    head = get_plotlyjs()[:200]
    assert head in first["text/html"] and head not in second["text/html"]
    assert len(second["text/html"]) < 100_000
    spec = second[notebook_figure.PLOTLY_MIMETYPE]
    assert [t.get("meta", t["name"]) for t in spec["data"]] == [
        "base", html.escape(next(n for n in runs if n != "base"), quote=False)]
    # the hostile model name cannot close the script that carries the figure
    assert "</script>alert" not in second["text/html"] and second["text/html"].count("</script>") == 1
    assert f"height:{spec['layout']['height']}px; width:100%;" in second["text/html"]


def test_a_comparison_table_shows_whole_in_ipython():
    pytest.importorskip("IPython", reason="pip install -r requirements/dev.txt")
    from IPython.core.interactiveshell import InteractiveShell

    runs, qrels = _data()
    evals = {n: mc.evaluate(r, qrels, ["ndcg@5", "recall@5"]) for n, r in runs.items()}
    shell = InteractiveShell.instance()
    try:
        with pd.option_context("display.max_columns", 20, "display.max_rows", 2):
            table = mc.compare(evals, baseline="base")
            assert len(table.columns) > 20 and "..." in table._repr_html_()  # pandas alone cuts it
            for frame in (table, table[["model", "metric", "lift"]]):
                shown, _ = shell.display_formatter.format(frame)
                assert "..." not in shown["text/html"] and all(f"<th>{c}</th>" in shown["text/html"]
                                                               for c in frame.columns)
            other = pd.DataFrame({f"c{i}": [i] * 5 for i in range(30)})
            assert shell.display_formatter.format(other)[0]["text/html"] == other._repr_html_()  # others as pandas shows them
    finally:
        InteractiveShell.clear_instance()


def test_an_off_policy_result_shows_and_draws_its_estimates():
    """Two contexts, two items logged at propensity 0.5, one model greedy on the clicked item: IPS
    (2 * 1 + 2 * 1) / 4 = 1, SNIPS the same, the logging value the mean reward 0.5, lift +100%."""
    pytest.importorskip("plotly", reason="pip install 'metrics-core[dashboard]'")
    hostile = "<img src=x onerror=alert(1)>"
    log = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
                        "reward": [1.0, 0.0, 0.0, 1.0], "propensity": 0.5})
    run = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "b"],
                        "score": [2.0, 1.0, 1.0, 2.0]})
    ope = mc.off_policy(log, {hostile: run, "flat": run.assign(score=1.0)}, policy="top1",
                        estimators=["ips", "snips"], n_bootstrap=20)
    shown = ope._repr_html_()
    assert "<img" not in shown and html.escape(hostile) in shown
    assert f"<td>{html.escape(hostile)}</td><td>IPS</td><td class='n'>1.0000</td>" in shown
    assert "<td>flat</td><td>SNIPS</td><td class='n'>0.5000</td>" in shown  # ties share: every weight 1
    assert "the mean logged reward): 0.5000 over 4 rounds" in shown
    fig = mc.plot(ope)
    assert [html.unescape(t.meta or t.name) for t in fig.data] == [hostile, "flat"]
    assert [list(t.x) for t in fig.data] == [[1.0, 1.0], [0.5, 0.5]] and list(fig.data[0].y) == ["IPS", "SNIPS"]
    assert fig.layout.shapes[0].x0 == 0.5  # the logging policy's value
    lift = mc.plot.off_policy(ope, "lift")
    assert [list(t.x) for t in lift.data] == [[100.0, 100.0], [0.0, 0.0]]
    assert mc.plot(ope, "lift").to_dict()["data"] == lift.to_dict()["data"]
    for call, message in ((lambda: mc.plot(ope, "ecdf"), "no figure 'ecdf' of an off-policy result"),
                          (lambda: mc.plot.off_policy(ope, "mean"), "measure 'mean' is not one of value, lift"),
                          (lambda: mc.plot.off_policy(log), "draws the result of mc.off_policy(...), not a DataFrame")):
        with pytest.raises(MetricsError, match=re.escape(message)) as info:
            call()
        assert "\n" not in str(info.value)
