"""The example notebooks, one per journey (evaluate; compare and brief; failures; counterfactual), executed in a
Jupyter kernel and exported to HTML by nbconvert: no error, every figure both as plotly JSON (for
JupyterLab and VS Code) and as HTML (classic Jupyter, the export), one plotly.js in the whole page,
the comparison table whole, and the numbers those of independent references (pytrec_eval's
nDCG, scipy's paired t-test, IPS and SNIPS written here in NumPy). tests/browser/test_notebook_export_browser.py draws the pages."""

from __future__ import annotations

import html
import io
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import _notebooks as nbs
from _notebooks import outputs

#: four notebooks executed in a Jupyter kernel and exported by nbconvert: left out of the quick tier (python3 scripts/test.py --quick)
pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    pytest.importorskip("nbconvert", reason="pip install -r requirements/dev.txt")
    pytest.importorskip("plotly", reason="pip install 'metrics-core[dashboard]'")
    folder = tmp_path_factory.mktemp("notebooks")
    out = {}
    for name in nbs.JOURNEYS:
        nb = nbs.execute(name, folder)
        out[name] = (nb, nbs.export_html(nb, folder / f"{name}.html").read_text(encoding="utf-8"))
    return out


def _data_scope(nb) -> dict:
    scope: dict = {}
    exec(next(c for c in nb.cells if c.cell_type == "code").source, scope)  # noqa: S102 - the notebook's data cell
    return scope


@pytest.mark.parametrize("name", nbs.JOURNEYS)
def test_stored_without_outputs_and_runs_without_error(name, executed):
    import nbformat

    stored = nbformat.read(nbs.EXAMPLES / f"{name}.ipynb", as_version=4)
    nbformat.validate(stored)
    assert all(not c.get("outputs") for c in stored.cells if c.cell_type == "code"), "store it without outputs"
    nb, _ = executed[name]
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []


@pytest.mark.parametrize("name", nbs.JOURNEYS)
def test_every_figure_carries_json_and_html_and_the_page_one_plotlyjs(name, executed):
    from plotly.offline import get_plotlyjs

    nb, page = executed[name]
    figures = nbs.figure_cells(nb)
    assert len(figures) >= 3
    # every cell that draws carries the two types VS Code's and JupyterLab's plotly renderer and classic
    # Jupyter read: application/vnd.plotly.v1+json (with data and layout) and text/html
    drawing = [c for c in nb.cells if c.cell_type == "code" and "mc.plot" in c.source]
    assert drawing == figures and all({"data", "layout"} <= set(outputs(c)[nbs.PLOTLY_MIMETYPE]) for c in figures)
    htmls = [outputs(c)["text/html"] for c in figures]
    # the first figure of the kernel carries plotly.js, no later one does
    plotlyjs = get_plotlyjs()
    assert plotlyjs[:200] in htmls[0] and not any(plotlyjs[:200] in h for h in htmls[1:])
    for cell, shown in zip(figures, htmls):
        spec = outputs(cell)[nbs.PLOTLY_MIMETYPE]
        assert spec["data"] and len(re.findall(r"<div id='mc-plot-[0-9a-f]{32}'", shown)) == 1
        height = spec["layout"].get("height") or 450
        assert f"height:{height}px; width:100%;" in shown
    # the exported page: one plotly.js, every figure's div, and little more than plotly.js itself
    assert page.count(plotlyjs[:200]) == 1
    assert len(re.findall(r"id=[\"']mc-plot-[0-9a-f]{32}[\"']", page)) == len(figures)
    assert len(page.encode()) - len(plotlyjs.encode()) < 1_500_000, len(page)


def test_the_comparison_table_is_shown_whole(executed):
    import metrics_core as mc

    nb, page = executed["compare_and_brief"]
    shown = outputs(next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("table =")))["text/html"]
    scope = _data_scope(nb)
    runs, qrels = scope["runs"], scope["qrels"]
    table = mc.compare({n: mc.evaluate(r, qrels, ["ndcg@10", "recall@10", "mrr@10"]) for n, r in runs.items()},
                       baseline="current", tests=["t", "wilcoxon"])
    assert len(table.columns) > 20
    header = re.findall(r"<th>([^<]*)</th>", shown.split("</thead>")[0])
    assert [h for h in header if h] == list(table.columns)  # every column, no "..." column
    assert "..." not in shown and "rows ×" not in shown and "rows x" not in shown
    assert len(re.findall(r"<tr>\s*<th>\d+</th>", shown)) == len(table)

    # the numbers: nDCG@10 means from pytrec_eval, the t-test's p from scipy
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pip install -r requirements/dev.txt")
    judged = {u: dict(zip(g["item_id"], g["relevance"].astype(int))) for u, g in qrels.groupby("user_id")}
    per_user = {}
    for name, r in runs.items():
        scores = {u: dict(zip(g["item_id"], g["score"].astype(float))) for u, g in r.groupby("user_id")}
        result = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"}).evaluate(scores)
        per_user[name] = pd.Series({u: v["ndcg_cut_10"] for u, v in result.items()}).sort_index()
    row = table[table["metric"] == "ndcg@10"].iloc[0]
    assert row["baseline_mean"] == pytest.approx(per_user["current"].mean(), rel=1e-9)
    assert row["model_mean"] == pytest.approx(per_user["challenger"].mean(), rel=1e-9)
    assert row["p_t"] == pytest.approx(sps.ttest_rel(per_user["challenger"], per_user["current"]).pvalue, rel=1e-6)
    assert f"{row['model_mean']:.6f}" in shown


def test_the_failures_notebook_finds_the_locale_that_loses(executed):
    nb, page = executed["failures"]
    scope = _data_scope(nb)
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", [])
                      if o.get("output_type") == "stream")
    lines = [line for line in printed.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(lines) == 4 and [line for line in lines if line.startswith("FAIL")] == [
        line for line in lines if "[locale=de]" in line]
    # the segments figure: the mean per locale of pytrec_eval's nDCG@10
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pip install -r requirements/dev.txt")
    qrels, runs, attributes = scope["qrels"], scope["runs"], scope["attributes"]
    judged = {u: dict(zip(g["item_id"], g["relevance"].astype(int))) for u, g in qrels.groupby("user_id")}
    figure = next(c for c in nbs.figure_cells(nb) if "segments(" in c.source)
    traces = outputs(figure)[nbs.PLOTLY_MIMETYPE]["data"]
    locale = attributes.set_index("user_id")["locale"]
    for name, r in runs.items():
        scores = {u: dict(zip(g["item_id"], g["score"].astype(float))) for u, g in r.groupby("user_id")}
        result = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10"}).evaluate(scores)
        means = pd.Series({u: v["ndcg_cut_10"] for u, v in result.items()}).groupby(locale).mean()
        trace = next(t for t in traces if html.unescape(t["name"]) == name)
        drawn = dict(zip(trace["x"], np.asarray(_values(trace["y"]), dtype=float)))
        assert drawn == pytest.approx(means.to_dict(), rel=1e-9)
    assert "Where the challenger loses" in page


def _softmax_ips_snips(log: pd.DataFrame, run: pd.DataFrame, temperature: float) -> tuple[float, float, float]:
    """IPS ``mean(w r)``, SNIPS ``sum(w r) / sum(w)`` and Kish's effective sample size
    ``(sum w)^2 / sum(w^2)`` with ``w = pi_e(a | x) / propensity``, ``pi_e`` the softmax of the user's
    scores at ``temperature`` (an item the run does not list for the user: probability 0)."""
    pi = {}
    for user, g in run.groupby("user_id"):
        z = g["score"].to_numpy(float) / temperature
        p = np.exp(z - z.max())
        pi.update({(user, item): q for item, q in zip(g["item_id"], p / p.sum())})
    w = np.array([pi.get((u, i), 0.0) for u, i in zip(log["user_id"], log["item_id"])]) / log["propensity"].to_numpy()
    r = log["reward"].to_numpy(float)
    return float(np.mean(w * r)), float(np.sum(w * r) / np.sum(w)), float(w.sum() ** 2 / np.dot(w, w))


def test_the_counterfactual_notebook_shows_ips_and_snips_computed_independently(executed):
    nb, page = executed["counterfactual"]
    scope = _data_scope(nb)
    log, runs, temperature = scope["log"], scope["runs"], scope["temperature"]
    expected = {name: _softmax_ips_snips(log, run, temperature) for name, run in runs.items()}
    # the estimates figure: one trace per model, a marker per estimator
    figure = next(c for c in nbs.figure_cells(nb) if c.source.startswith("mc.plot(ope)"))
    for trace in outputs(figure)[nbs.PLOTLY_MIMETYPE]["data"]:
        drawn = dict(zip(trace["y"], np.asarray(_values(trace["x"]), dtype=float)))
        ips, snips, _ = expected[html.unescape(trace.get("meta") or trace["name"])]
        assert drawn["IPS"] == pytest.approx(ips, rel=1e-9) and drawn["SNIPS"] == pytest.approx(snips, rel=1e-9)
    # the result's own view: the logging policy's value is the mean logged reward, the ESS as written above
    shown = outputs(next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("ope =")))["text/html"]
    assert f"{log['reward'].mean():.4f}" in shown
    for name, (_, _, ess) in expected.items():
        assert re.search(rf"<td>{name}</td><td class='n'>1,200</td><td class='n'>{round(ess):,}</td>", shown)
    # prepared once, estimated at four temperatures: the taste model's IPS and SNIPS at each
    sweep = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("prepared ="))
    table = pd.read_html(io.StringIO(outputs(sweep)["text/html"]))[0]
    assert sorted(table["temperature"].unique()) == [0.25, 0.5, 1.0, 2.0]
    for t, rows in table.groupby("temperature"):
        ips, snips, ess = _softmax_ips_snips(log, runs["taste"], t)
        got = rows.set_index("estimator")["value"]
        assert got["ips"] == pytest.approx(ips, abs=1e-6) and got["snips"] == pytest.approx(snips, abs=1e-6)
        assert rows["effective sample size"].iloc[0] == pytest.approx(ess, abs=1e-3)
    # the story the notebook tells: offline metrics on the logged clicks favour popularity, the estimate the taste model
    assert expected["taste"][0] > expected["popularity"][0]
    assert "Off-policy estimates" in page


def _values(value):
    import base64

    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return value
