"""Compare offers the comparison as ranx's report, in LaTeX and in Markdown: the files' bytes, taken from
Streamlit's media storage as the browser fetches them, hold each model's mean (checked against
``mc.evaluate``), the best value in bold and a superscript letter exactly where scipy's paired t-test,
Holm-adjusted by statsmodels over the page's rows, is significant; model names are escaped."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("streamlit")
from statsmodels.stats.multitest import multipletests  # noqa: E402
from scipy.stats import ttest_rel  # noqa: E402

from test_compare_dashboard import XSS, ok, reference, uploaded_app  # noqa: E402
from test_dashboard_summary_download import media  # noqa: E402,F401  (the fixture: files by id)

METRICS = ["ndcg@10", "recall@10"]


def test_compare_downloads_the_comparison_as_latex_and_markdown(monkeypatch, tmp_path, media):
    at = uploaded_app(monkeypatch, tmp_path)
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    ok(at.multiselect(key="compare_metrics").set_value(METRICS).run())
    files = {}
    for button in at.get("download_button"):
        if button.proto.label in ("Download LaTeX table", "Download Markdown table"):
            files[button.proto.label.split()[1]] = media[button.proto.url.rsplit("/", 1)[-1].split(".")[0]].decode()
    latex, markdown = files["LaTeX"], files["Markdown"]

    ev = reference(METRICS)
    models = ["popularity", XSS, "two_tower"]  # the baseline, then the challengers: letters a, b, c
    # the reference significance: scipy's paired t-test of each challenger against the baseline over every
    # evaluated user (a missing list scores 0), Holm-adjusted over the page's four rows
    rows, pvalues = [], []
    for metric in METRICS:
        base = ev["popularity"].per_user[metric]
        for model in models[1:]:
            other = ev[model].per_user[metric].reindex(base.index)
            rows.append((metric, model))
            pvalues.append(ttest_rel(other, base).pvalue)
    significant = dict(zip(rows, multipletests(pvalues, alpha=0.05, method="holm")[0]))
    lines = {line.split(" | ")[0].strip("| "): line for line in markdown.splitlines() if line.startswith("| ")}
    for i, model in enumerate(models):
        cells = [c.strip() for c in lines["abc"[i]].strip("| ").split(" | ")]
        shown = cells[1]
        assert shown == (r"\<img src=x onerror=alert(1)\>" if model == XSS else model.replace("_", r"\_"))
        for j, metric in enumerate(METRICS):
            cell = cells[2 + j]
            value = ev[model].summary[metric]
            assert re.sub(r"<sup>.*</sup>|\*", "", cell) == f"{value:.4f}", (model, metric, cell)
            best = max(round(ev[m].summary[metric], 4) for m in models)
            assert cell.startswith("**") == (round(value, 4) == best)
            marks = re.search(r"<sup>(.*)</sup>", cell)
            marks = marks.group(1) if marks else ""
            if model == "popularity":
                beaten = [m for m in models[1:] if significant[(metric, m)]
                          and ev[m].summary[metric] < value]
                assert marks == "".join("abc"[models.index(m)] for m in beaten)
            else:
                better = significant[(metric, model)] and value > ev["popularity"].summary[metric]
                assert marks == ("a" if better else "")
    assert "paired t-test, Holm-Bonferroni correction over 4 comparisons, p < 0.05" in markdown
    assert any(significant.values())  # the data has letters to place
    # the LaTeX table: the same values and letters, booktabs layout, names escaped, and its legend
    assert latex.count("\\midrule") == 1 and "\\begin{tabular}{c|l|c|c}" in latex
    assert "two\\_tower &" in latex and "Superscripts denote significant differences" in latex
    for model in models:
        for metric in METRICS:
            assert f"{ev[model].summary[metric]:.4f}" in latex
    assert np.isfinite([ev[m].summary[x] for m in models for x in METRICS]).all()
