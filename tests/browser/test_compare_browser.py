"""The Compare verdict in a real browser: the sentence's lift, interval and adjusted p
match a computation written here (numpy delta method, scipy's paired t-test, statsmodels'
Holm) on the per-user values of the same files, and the sidebar's "Users counted" changes
the paired users from every evaluated user to the users every model served."""

from __future__ import annotations

import re

import numpy as np
import pytest

import metrics_core as mc
from dashboard import demo
from dashboard_server import assert_no_exception, choose_option, open_page, upload_runs_and_truth, wait_idle, wait_rerun

pytestmark = pytest.mark.browser


def test_verdict_matches_scipy_and_the_users_switch(app_page, streamlit_server, tmp_path):
    from scipy.stats import norm, ttest_rel
    from statsmodels.stats.multitest import multipletests

    page = app_page
    d = demo.make_demo(n_users=400, n_items=250, list_length=20, seed=21)
    runs = dict(d.runs)
    users = runs["two_tower"]["user_id"].drop_duplicates()
    runs["two_tower"] = runs["two_tower"][~runs["two_tower"]["user_id"].isin(set(users.sample(frac=0.08,
                                                                                                random_state=3)))]
    paths = {}
    for name, run in runs.items():
        paths[name] = tmp_path / f"{name}.csv"
        paths[name].write_bytes(demo.to_csv_bytes(run))
    (tmp_path / "qrels.csv").write_bytes(demo.to_csv_bytes(d.qrels))
    page.goto(streamlit_server)
    wait_idle(page)
    open_page(page, "Data")
    page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first.locator(
        'input[type="file"]').set_input_files([str(p) for p in paths.values()])
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").first.locator(
        'input[type="file"]').set_input_files(str(tmp_path / "qrels.csv"))
    wait_idle(page)
    open_page(page, "Compare")
    page.wait_for_selector('h3:has-text("Verdict")')
    assert_no_exception(page, "Compare")

    per_user = {n: mc.evaluate(r, d.qrels, metrics=["ndcg@10"]).per_user["ndcg@10"] for n, r in runs.items()}
    served = {n: set(r["user_id"].astype(str)) for n, r in runs.items()}
    rows = {}
    for challenger in ("matrix_factorization", "two_tower"):
        both = sorted(per_user["popularity"].index.astype(str))  # users counted: all (the default)
        a = per_user["popularity"].loc[both].to_numpy()
        b = per_user[challenger].loc[both].to_numpy()
        r = b.mean() / a.mean()
        grad = np.array([-b.mean() / a.mean() ** 2, 1 / a.mean()])
        se = float(np.sqrt(grad @ (np.cov(np.vstack([a, b])) / len(a)) @ grad))
        rows[challenger] = (r - 1, r - 1 - norm.ppf(0.975) * se, r - 1 + norm.ppf(0.975) * se,
                            ttest_rel(b, a).pvalue, len(both))
    adjusted = multipletests([rows[c][3] for c in rows], method="holm")[1]
    sentences = page.locator('[data-testid="stMarkdownContainer"] li').all_inner_texts()
    for (challenger, (lift, low, high, _, _)), p_adj in zip(rows.items(), adjusted):
        text = next(s for s in sentences if s.startswith(f"{challenger} "))
        found = re.search(r"by ([+-][\d.]+)% \[([+-][\d.]+)%, ([+-][\d.]+)%\]", text)
        assert found, text
        assert [float(x) for x in found.groups()] == pytest.approx([100 * lift, 100 * low, 100 * high], abs=0.051)
        shown_p = re.search(r"adjusted p (< 0\.0001|[\d.]+)", text).group(1)
        assert shown_p == ("< 0.0001" if p_adj < 1e-4 else f"{p_adj:.4f}"), text

    def paired_caption() -> int:
        cap = page.locator('[data-testid="stCaptionContainer"]', has_text="users paired (").first.inner_text()
        return int(re.search(r"([\d,]+) users paired", cap).group(1).replace(",", ""))

    # the per-user section on two_tower: its own rerun (a full run of such an address shows the same,
    # see the next test), not a new page load that redraws every chart of the page
    choose_option(page, page.locator(".st-key-compare_focus_model [data-testid='stSelectbox']"), "two_tower")
    wait_rerun(page)
    page.wait_for_selector('h3:has-text("Largest regressions")')
    assert "compare_focus_model=two_tower" in page.url
    assert paired_caption() == rows["two_tower"][4] == len(per_user["popularity"])
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Users counted")
    choose_option(page, box, "served")
    wait_rerun(page)
    assert_no_exception(page, "Compare, users counted: served")
    every = set.intersection(*served.values()) & set(per_user["popularity"].index.astype(str))
    assert paired_caption() == len(every) < len(per_user["popularity"])


def test_per_user_choice_reruns_its_section_with_the_url_and_numbers_of_a_full_run(app_page, streamlit_server,
                                                                                    tmp_path):
    """Choosing another challenger in "Per user" reruns that section alone (a fragment): the address
    carries the choice, the rest of the page keeps its numbers, and the section shows what a full
    run of the same address shows."""
    page = app_page
    d = demo.make_demo(n_users=300, n_items=200, list_length=20, seed=5)
    paths = []
    for name, run in d.runs.items():
        paths.append(tmp_path / f"{name}.csv")
        paths[-1].write_bytes(demo.to_csv_bytes(run))
    (tmp_path / "qrels.csv").write_bytes(demo.to_csv_bytes(d.qrels))
    upload_runs_and_truth(page, streamlit_server, paths, tmp_path / "qrels.csv")
    open_page(page, "Compare")
    page.wait_for_selector('h3:has-text("Largest regressions")')
    wait_idle(page)
    assert_no_exception(page, "Compare")

    def shown() -> tuple[list[str], str]:
        sentences = page.locator('[data-testid="stMarkdownContainer"] li').all_inner_texts()
        paired = page.locator('[data-testid="stCaptionContainer"]', has_text="users paired (").first.inner_text()
        return sentences, paired

    verdict_before, _ = shown()
    choose_option(page, page.locator(".st-key-compare_focus_model [data-testid='stSelectbox']"), "two_tower")
    wait_rerun(page)
    assert_no_exception(page, "Compare, per-user challenger")
    assert "compare_focus_model=two_tower" in page.url
    verdict_after, paired_after = shown()
    assert verdict_after == verdict_before
    n_users = len(mc.evaluate(d.runs["two_tower"], d.qrels, metrics=["ndcg@10"]).per_user)
    assert int(re.search(r"([\d,]+) users paired", paired_after).group(1).replace(",", "")) == n_users

    page.goto(page.url)  # a full run of the same address (the analysis id keeps the uploads)
    page.wait_for_selector('h3:has-text("Largest regressions")')
    wait_idle(page)
    assert shown() == (verdict_after, paired_after)
