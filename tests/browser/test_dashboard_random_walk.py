"""A seeded random walk over the dashboard in headless Chromium.

On the demo data and on an uploaded data set, each walk clicks random widgets
(select boxes, multiselects, number inputs, toggles, sliders, buttons, table
rows, expanders, text fields), switches pages, reloads, and reopens the current
address in a new browser context. Every step must end with a finished script run
and no exception element. The seeds make a failing walk reproducible: the
assertion message lists the steps taken."""

from __future__ import annotations

import _deadlines as deadlines
import os
import random
import re
import time

import pytest

from dashboard import demo
from dashboard_server import ROW_HEIGHT

pytestmark = pytest.mark.browser

PAGES = ["Overview", "Data", "Curves", "Distributions", "Failures", "Compare", "Share"]
RUN_TIMEOUT = deadlines.SCRIPT_RUN_MS
PROFILE = bool(os.environ.get("RANDOM_WALK_PROFILE"))
# (seed, uploaded data set?, steps): 72 steps in all in the suite, one walk on the demo and two on an
# upload (a step costs a worker about 3.7 s of a CPU-bound run); RANDOM_WALK_STEPS sets every walk's
# length for a longer search
WALKS = [(1, False, 24), (3, True, 24), (4, True, 24)]
if os.environ.get("RANDOM_WALK_STEPS"):
    WALKS = [(s, u, int(os.environ["RANDOM_WALK_STEPS"])) for s, u, _ in WALKS]
TEXTS = ["", "K=5 check", "![x](http://127.0.0.1:9/p.png)", "=1+1", "line\nbreak", "x" * 300]
SKIP_BUTTONS = re.compile(r"Deploy|Download|Browse files|Clear|Main menu|Collapse|Expand|Close", re.I)


# messages each page has sent to the server over its websockets (see watch_messages)
SENT: dict = {}


def watch_messages(page) -> None:
    """Count what ``page`` sends to the server: an action that changes a widget or the page sends
    a message asking for a rerun; an action that sends nothing starts none (see rerun_done)."""
    SENT[page] = 0

    def on_socket(socket):
        def on_frame(_payload):
            SENT[page] += 1
        socket.on("framesent", on_frame)
    page.on("websocket", on_socket)


def asked_for_rerun(page, sent_before: int) -> bool:
    """Whether ``page`` sent the server a message since it had sent ``sent_before``, looking for up to
    RERUN_REQUEST_MS (the page's events are handled while it waits)."""
    end = time.monotonic() + deadlines.RERUN_REQUEST_MS / 1000
    while SENT[page] <= sent_before:
        if time.monotonic() >= end:
            return False
        page.wait_for_timeout(25)
    return True


def rerun_done(page, where: str, sent_before: int | None = None) -> None:
    """Wait for the rerun an action may start (0.2-0.5 s later), then for it to finish. With
    ``sent_before`` (the page's count of sent messages before the action), an action that sent
    the server nothing is taken to have started no rerun, without waiting for one."""
    running = '[data-testid="stApp"][data-test-script-state="running"]'
    idle = '[data-testid="stApp"][data-test-script-state="notRunning"]'
    if sent_before is None or asked_for_rerun(page, sent_before):
        try:
            page.wait_for_selector(running, timeout=deadlines.RERUN_START_MS)
        except Exception:  # noqa: BLE001 - the action started no rerun
            pass
    try:
        page.wait_for_selector(idle, timeout=RUN_TIMEOUT)
        page.wait_for_timeout(120)  # a switch_page or st.rerun starts a second run at once
        page.wait_for_selector(idle, timeout=RUN_TIMEOUT)
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(f"{where}: the script run did not finish within {RUN_TIMEOUT} ms") from exc
    exc_box = page.locator('[data-testid="stException"]')
    if exc_box.count():
        raise AssertionError(f"{where}: exception shown: {exc_box.first.inner_text()[:600]}")


def visible(locator, limit: int = 40) -> list:
    out = []
    for el in locator.all()[:limit]:
        try:
            if el.is_visible():
                out.append(el)
        except Exception:  # noqa: BLE001 - detached while looking
            continue
    return out


def main(page):
    return page.locator('[data-testid="stMain"]')


def act_page(page, rng):
    title = rng.choice(PAGES)
    # the sidebar's links are always there: a click that waits (a busy renderer handles it late)
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click(timeout=deadlines.ACTION_MS)
    return f"page {title}"


def act_selectbox(page, rng):
    boxes = visible(page.locator('[data-testid="stSelectbox"]'))
    if not boxes:
        return None
    box = rng.choice(boxes)
    box.click()
    options = page.locator('[role="option"]')
    try:
        options.first.wait_for(timeout=1000)
    except Exception:  # noqa: BLE001
        page.keyboard.press("Escape")
        return "selectbox without options"
    n = options.count()
    pick = rng.randrange(n)
    text = options.nth(pick).inner_text()[:40]
    options.nth(pick).click()
    return f"selectbox -> {text!r}"


def act_multiselect(page, rng):
    boxes = visible(page.locator('[data-testid="stMultiSelect"]'))
    if not boxes:
        return None
    box = rng.choice(boxes)
    if rng.random() < 0.3:
        clear = box.locator('[role="button"][aria-label*="Clear"], svg[title="Clear all"]')
        if clear.count():
            clear.first.click()
            return "multiselect cleared"
    box.click()
    options = page.locator('[role="option"]')
    try:
        options.first.wait_for(timeout=800)
    except Exception:  # noqa: BLE001 - everything already selected
        page.keyboard.press("Escape")
        return "multiselect full"
    pick = rng.randrange(options.count())
    options.nth(pick).click()
    page.keyboard.press("Escape")
    return "multiselect add"


def act_number(page, rng):
    inputs = visible(page.locator('[data-testid="stNumberInput"] input'))
    if not inputs:
        return None
    box = rng.choice(inputs)
    value = rng.choice([1, 2, 3, 5, 7, 10, 20, 25, 50, 100, 999, 1000, 0, -3, 5000])
    box.fill(str(value))
    box.press("Enter")
    return f"number {value}"


def act_toggle(page, rng):
    toggles = visible(page.locator('[data-testid="stCheckbox"] label, [data-testid="stToggle"] label'))
    if not toggles:
        return None
    rng.choice(toggles).click()
    return "toggle"


def act_slider(page, rng):
    thumbs = visible(page.locator('[data-testid="stSlider"] [role="slider"]'))
    if not thumbs:
        return None
    thumb = rng.choice(thumbs)
    thumb.focus()
    key = rng.choice(["ArrowRight", "ArrowLeft", "Home", "End"])
    for _ in range(rng.randint(1, 4)):
        thumb.press(key)
    return f"slider {key}"


def act_button(page, rng):
    # buttons with a label (the icon-only ones are table toolbars and tooltips)
    labelled = main(page).locator("button").filter(has_text=re.compile(r"\w"))
    buttons = [b for b in visible(labelled, limit=40) if not SKIP_BUTTONS.search(b.inner_text() or "")]
    if not buttons:
        return None
    button = rng.choice(buttons)
    label = (button.inner_text() or "").strip()[:40]
    if "demo data" in label.lower() and rng.random() < 0.7:
        return None  # leaving the uploaded data set now and then only
    button.click()
    return f"button {label!r}"


def act_table_row(page, rng):
    grids = visible(page.locator('[data-testid="stDataFrame"]'))
    if not grids:
        return None
    grid = rng.choice(grids)
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    if not box:
        return None
    row = rng.randint(0, max(0, min(9, int(box["height"] // ROW_HEIGHT) - 2)))
    page.mouse.click(box["x"] + 10, box["y"] + ROW_HEIGHT * (row + 1) + ROW_HEIGHT // 2)
    return f"table row {row}"


def act_expander(page, rng):
    heads = visible(page.locator('[data-testid="stExpander"] summary'))
    if not heads:
        return None
    rng.choice(heads).click()
    return "expander"


def act_text(page, rng):
    fields = visible(page.locator('[data-testid="stTextInput"] input, [data-testid="stTextArea"] textarea'))
    if not fields:
        return None
    field = rng.choice(fields)
    text = rng.choice(TEXTS)
    field.fill(text)
    if field.evaluate("e => e.tagName") == "INPUT":
        field.press("Enter")
    return f"text {text[:20]!r}"


ACTIONS = [(act_page, 6), (act_selectbox, 5), (act_multiselect, 2), (act_number, 3), (act_toggle, 2),
           (act_slider, 2), (act_button, 3), (act_table_row, 3), (act_expander, 1), (act_text, 1)]


def upload_small(page, tmp_path) -> None:
    d = demo.make_demo(n_users=120, n_items=90, list_length=12, seed=9)
    paths = demo.write_demo_files(tmp_path, d)
    # actions that must land wait ACTION_MS (the page's default is the walk's short probe): on a
    # busy machine a click on the sidebar waits seconds for the navigation it schedules
    page.locator('[data-testid="stSidebarNav"] a', has_text="Data").first.click(timeout=deadlines.ACTION_MS)
    rerun_done(page, "open Data")
    box = page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first
    box.locator('input[type="file"]').set_input_files([str(paths[n]) for n in d.runs], timeout=deadlines.ACTION_MS)
    rerun_done(page, "upload runs")
    box = page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").first
    box.locator('input[type="file"]').set_input_files(str(paths["qrels"]), timeout=deadlines.ACTION_MS)
    rerun_done(page, "upload truth")
    assert "analysis=" in page.url


def new_context(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    watch_messages(page)
    page.set_default_timeout(deadlines.WALK_PROBE_MS)  # clicks and fills; script runs have RUN_TIMEOUT
    page.set_default_navigation_timeout(deadlines.ACTION_MS)
    return context, page


@pytest.mark.parametrize("seed, uploaded, steps", WALKS)
def test_random_walk_shows_no_exception(browser, streamlit_server, tmp_path, seed, uploaded, steps):
    rng = random.Random(seed)
    context, page = new_context(browser)
    log: list[str] = []
    try:
        page.goto(streamlit_server)
        page.wait_for_selector('[data-testid="stApp"]', timeout=deadlines.ACTION_MS)
        rerun_done(page, "start")
        if uploaded:
            upload_small(page, tmp_path)
        funcs, weights = zip(*ACTIONS)
        for step in range(steps):
            t0 = time.monotonic()
            sent_before = SENT[page]
            roll = rng.random()
            if roll < 0.04:
                what = "reload"
                page.reload()
                sent_before = None  # a new session: its first run is awaited as at the start
            elif roll < 0.07:
                what = "reopen the address in a new context"
                address = page.url
                context.close()
                context, page = new_context(browser)
                page.goto(address)
                sent_before = None
            else:
                action = rng.choices(funcs, weights)[0]
                try:
                    what = action(page, rng)
                except Exception as exc:  # noqa: BLE001 - the element moved or vanished: a no-op step
                    what = f"{action.__name__} skipped ({type(exc).__name__})"
                    page.keyboard.press("Escape")
                if what is None:
                    what = act_page(page, rng)
            log.append(f"{step}: {what} @ {page.url.split('/', 3)[-1][:120]}")
            t1 = time.monotonic()
            rerun_done(page, f"seed {seed}, step {step} ({what})\n" + "\n".join(log[-8:]), sent_before)
            if PROFILE:
                print(f"{t1 - t0:5.2f} {time.monotonic() - t1:5.2f} {log[-1][:90]}")
    finally:
        context.close()
