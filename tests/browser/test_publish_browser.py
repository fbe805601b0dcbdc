"""A link printed by ``metrics-core publish``, opened in headless Chromium: the dashboard opens on the
Brief with the published title and notes (as text, never markup) and the verdict lines the library
computes from the same files and choices."""

from __future__ import annotations

from urllib.parse import urlparse

import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo
from metrics_core.brief import build as mb
from metrics_core.brief import text as bt
from metrics_core.cli import main

from dashboard_server import SERVER_SCRIPT, REPO_ROOT, assert_no_exception, goto, start_server, stop_process, wait_idle

pytestmark = pytest.mark.browser

APP = SERVER_SCRIPT
TITLE = "Nightly *two-tower* <b>v3</b>"
NOTES = "trained on last week's clicks <img src=x onerror=alert(1)>"


def test_a_published_link_opens_on_its_brief(browser, tmp_path, capsys, monkeypatch):
    d = demo.make_demo(n_users=150, n_items=120, list_length=15, seed=3)
    paths = demo.write_demo_files(tmp_path / "files", d)
    store = tmp_path / "store"
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(store))
    code = main(["publish", "--run", str(paths["popularity"]), "--run", str(paths["two_tower"]),
                 "--run", str(paths["matrix_factorization"]), "--qrels", str(paths["qrels"]),
                 "--title", TITLE, "--notes", NOTES, "--primary", "ndcg@5,recall@5", "--gain", "exponential",
                 "--base-url", "http://dashboard.invalid"])
    out, err = capsys.readouterr()
    assert code == 0, err
    link = urlparse(out.splitlines()[0].removeprefix("link: "))

    truth = pd.read_csv(paths["qrels"], dtype={"user_id": str, "item_id": str})
    evaluations = {n: mc.evaluate(pd.read_csv(paths[n], dtype={"user_id": str, "item_id": str}), truth,
                                  metrics=["ndcg@5", "recall@5"], gain="exponential")
                   for n in ("popularity", "two_tower", "matrix_factorization")}
    expected = bt.verdict_lines(mb.build_brief(
        evaluations, mc.Decision("popularity", ("two_tower", "matrix_factorization"), ("ndcg@5", "recall@5"))))

    proc, base = start_server(APP, extra_env={"METRICS_CORE_STORE_DIR": str(store)}, log_path=tmp_path / "server.log")
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        goto(page, f"{base}{link.path}?{link.query}")
        page.get_by_role("heading", name=TITLE).wait_for()
        wait_idle(page)
        assert_no_exception(page, "published link")
        assert page.get_by_text(NOTES, exact=True).count() == 1
        assert page.locator("img[src='x']").count() == 0 and page.locator("main b", has_text="v3").count() == 0
        shown = [t.replace("\u200b", "").strip() for t in page.locator("main li").all_inner_texts()]
        assert [line for line in shown if " than popularity on " in line or " from popularity on " in line] == expected
        context.close()
    finally:
        stop_process(proc)
