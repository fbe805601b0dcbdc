"""A working copy's address is not write access, in headless Chromium.

One browser uploads files; its owner secret is a cookie, not in the address, and a reload
keeps it the owner. A second browser (another context: other cookies) opening the same
address sees a read-only view: no uploaders, remove buttons disabled, and "Make my own
copy", which gives it a working copy of its own. Two tabs of the owner on one working copy:
the second change gets the "changed in another tab" message and the store keeps the first.
What the store holds is read with ``AnalysisStore`` directly."""

from __future__ import annotations

import _deadlines as deadlines
from urllib.parse import parse_qs, urlparse

import pytest

from dashboard import demo, owner
from metrics_core.store import AnalysisStore

from dashboard_server import SERVER_SCRIPT, REPO_ROOT, assert_no_exception, goto, start_server, stop_process, wait_rerun

pytestmark = pytest.mark.browser

APP = SERVER_SCRIPT


def new_page(context):
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    return page


def analysis_id(page) -> str:
    return parse_qs(urlparse(page.url).query)["analysis"][0]


def uploaders(page):
    return page.locator('[data-testid="stFileUploader"]')


def remove_button(page, model: str):
    """The model's Remove button (the one users reach: a button with a tooltip is drawn twice)."""
    return page.locator(f".st-key-remove_{model}").get_by_role("button").first


def secret_of(context) -> str | None:
    found = [c["value"] for c in context.cookies() if c["name"] == owner.COOKIE]
    return found[0] if found else None


def test_a_shared_address_is_read_only_elsewhere_and_two_tabs_do_not_overwrite(browser, tmp_path):
    d = demo.make_demo(n_users=120, n_items=100, list_length=10, seed=5)
    paths = demo.write_demo_files(tmp_path / "files", d)
    store_dir = tmp_path / "store"
    store = AnalysisStore(store_dir)
    all_files = sorted([f"{n}.csv" for n in d.runs] + [paths["qrels"].name])

    def stored(aid: str) -> list[str]:
        return sorted(f.name for f in store.load(aid).files)

    proc, base = start_server(APP, extra_env={"METRICS_CORE_STORE_DIR": str(store_dir)},
                              log_path=tmp_path / "server.log")
    try:
        mine = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = new_page(mine)
        goto(page, base + "/data")
        uploaders(page).filter(has_text="Ranked results").first.locator('input[type="file"]').set_input_files(
            [str(paths[n]) for n in d.runs])
        wait_rerun(page)
        uploaders(page).filter(has_text="Ground truth").first.locator('input[type="file"]').set_input_files(
            str(paths["qrels"]))
        wait_rerun(page)
        assert_no_exception(page, "owner after upload")
        aid = analysis_id(page)
        assert stored(aid) == all_files
        secret = secret_of(mine)
        assert secret is not None and secret not in page.url
        assert store.load(aid, owner=secret).editable  # the cookie is the secret the store knows

        page.reload()
        wait_rerun(page)
        uploaders(page).nth(4).wait_for()  # a reloaded page may report idle before its first run draws
        assert analysis_id(page) == aid and secret_of(mine) == secret
        assert uploaders(page).count() == 5 and remove_button(page, "popularity").is_enabled()

        # another browser: read-only, then its own copy
        revision = store.load(aid).revision
        theirs = browser.new_context(viewport={"width": 1400, "height": 1000})
        other = new_page(theirs)
        goto(other, f"{base}/data?analysis={aid}")
        other.get_by_text("Make my own copy").first.wait_for()
        assert_no_exception(other, "another browser")
        assert other.get_by_text("Read-only").count() >= 1
        assert uploaders(other).count() == 0
        assert remove_button(other, "popularity").is_disabled()
        assert stored(aid) == all_files and store.load(aid).revision == revision
        other.locator(".st-key-make_own_copy button").click()
        wait_rerun(other)
        copy = analysis_id(other)
        assert copy != aid and stored(copy) == all_files
        assert secret_of(theirs) not in (None, secret)
        assert store.load(copy, owner=secret_of(theirs)).editable
        assert uploaders(other).count() == 5 and remove_button(other, "popularity").is_enabled()
        remove_button(other, "popularity").click()
        wait_rerun(other)
        assert "popularity.csv" not in stored(copy) and stored(aid) == all_files
        theirs.close()

        # two tabs of the owner
        second = new_page(mine)
        goto(second, page.url)
        remove_button(second, "two_tower").wait_for()
        remove_button(page, "popularity").click()
        wait_rerun(page)
        assert "popularity.csv" not in stored(aid)
        remove_button(second, "two_tower").click()
        wait_rerun(second)
        message = second.locator('[data-testid="stAlertContentError"]', has_text="changed in another tab")
        assert message.count() == 1 and "reload" in message.inner_text()
        assert "two_tower.csv" in stored(aid) and "popularity.csv" not in stored(aid)
        second.reload()
        wait_rerun(second)
        assert second.locator('[data-testid="stAlertContentError"]').count() == 0
        remove_button(second, "two_tower").click()
        wait_rerun(second)
        assert "two_tower.csv" not in stored(aid) and analysis_id(second) == aid
        mine.close()
    finally:
        stop_process(proc)
        store.close()


def test_the_owner_cookie_is_http_only_and_a_malformed_one_is_replaced_without_reloads(browser, tmp_path):
    """The cookie the server sets: HttpOnly, SameSite=Strict, Path=/, kept 400 days, absent from
    ``document.cookie`` and not overwritten by a page script. A malformed owner cookie (which a page
    of another port of the host can set) is replaced by the server: the page loads once."""
    import time

    proc, base = start_server(APP, extra_env={"METRICS_CORE_STORE_DIR": str(tmp_path / "store")},
                              log_path=tmp_path / "server.log")
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = new_page(context)
        goto(page, base + "/data")
        (cookie,) = [c for c in context.cookies() if c["name"] == owner.COOKIE]
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        assert not cookie["secure"]  # plain HTTP here; Secure over HTTPS (tests/test_dashboard_ownership.py)
        assert abs(cookie["expires"] - (time.time() + owner.MAX_AGE_SECONDS)) < 600
        assert owner.COOKIE not in page.evaluate("document.cookie")
        page.evaluate(f"document.cookie = '{owner.COOKIE}={'Z' * 43}; Path=/'")  # a script cannot replace it
        assert secret_of(context) == cookie["value"]
        context.close()

        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.add_cookies([{"name": owner.COOKIE, "value": "not-a-secret%0A", "url": base}])
        page = new_page(context)
        loads = []
        page.on("load", lambda _: loads.append(time.monotonic()))
        goto(page, base + "/data")
        page.wait_for_timeout(5000)  # a reload loop reloaded every second or so
        assert len(loads) == 1, f"the page loaded {len(loads)} times"
        assert_no_exception(page, "malformed owner cookie")
        assert page.get_by_text("Add files").count() >= 1
        replaced = secret_of(context)
        assert replaced is not None and replaced != "not-a-secret%0A" and len(replaced) == 43
        context.close()
    finally:
        stop_process(proc)
