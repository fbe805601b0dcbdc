"""The timed interactions of the browser benchmark (``benchmarks/dashboard_browser.py``).

Every action is split in two: an untimed preparation (go to the page, open a
dropdown) and the timed trigger (the click or key press that sends the new value).
The clock runs from the trigger to the answer:

* the app's script run starts (a MutationObserver installed before the trigger sees
  ``data-test-script-state="running"``; a run so short that the page never shows that
  state is seen by the messages the server sends over the websocket after the trigger, and
  ends with the last of them; when no run starts within ``GRACE_MS`` the action is recorded
  as ``rerun_seen = False``),
* the run ends (``notRunning``), no ``stSpinner`` / ``stSkeleton`` is left,
* the page's main element is there and not stale: the page title, a heading and the
  first element after it (a table, or a drawn plotly chart: plotly renders lazily).

A second run started right after the first (a page switch or ``st.rerun``) is waited
for as well. Widgets are found by their key (``.st-key-<key>``) or label, as in
``tests/browser``.

Each timing also keeps the server's part (``server_seconds``): from the first message the page
sent after the trigger (the rerun request) to the last message the server sent up to the answer.
Frames are stamped when Playwright hands the websocket's frame events to this process (the
browser's network layer reports them, not the page's main thread, so the time the page waits for a
core to draw is not in it). On a loaded machine an event can reach this process only after the
answer was seen: that click then has no server part (``None``), it is not given a wrong one.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

GRACE_MS = 1500
#: how long a click on a sidebar link may show nothing (no run started, not the page's title) before it
#: is clicked again, and how many clicks in all (:meth:`Driver.go`)
NAV_PROBE_MS, NAV_CLICKS = 10_000, 3
SETTLE_MS = 300
PLOT = ".js-plotly-plot .main-svg"
TABLE = '[data-testid="stDataFrame"]'

# page title -> (heading, element after it) that says the page has answered
PAGES = {
    "Overview": ("Ranking metrics", TABLE),
    "Data": ("Diagnostics", TABLE),
    "Curves": ("Ranking metrics at every cutoff K", PLOT),
    "Distributions": ("Summary", PLOT),
    "Failures": ("Worst", TABLE),
    "Compare": ("Verdict", PLOT),
    "Explain": ("As each library reports it", TABLE),
    "Share": ("Per-user metrics", TABLE),
    "Brief": ("What explains the loss", None),
}
#: page title -> its h1 where the two differ (the Brief of an analysis without a title)
H1 = {"Brief": "Decision brief"}

_WATCH = """() => {
  const b = window.__bench || (window.__bench = {});
  if (b.obs) b.obs.disconnect();
  b.saw = false; b.t0 = performance.now();
  b.obs = new MutationObserver(ms => { for (const m of ms)
      if (m.target.getAttribute('data-test-script-state') === 'running') b.saw = true; });
  b.obs.observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
}"""

_DONE = """(a) => {
  const b = window.__bench, app = document.querySelector('[data-testid="stApp"]');
  if (!b || !app) return false;
  const state = app.getAttribute('data-test-script-state');
  if (state === 'running') { b.saw = true; return false; }
  if (!b.saw && performance.now() - b.t0 < a.grace) return false;
  if (state !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSpinner"], [data-testid="stSkeleton"]')) return false;
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const fresh = e => !e.closest('[data-stale="true"]');
  if (a.title && ![...main.querySelectorAll('h1')].some(h => fresh(h) && h.textContent.includes(a.title)))
    return false;
  let anchor = null;
  if (a.heading) {
    anchor = [...main.querySelectorAll('h1, h2, h3')].find(h => fresh(h) && h.textContent.includes(a.heading));
    if (!anchor) return false;
  }
  if (a.selector) {
    const after = e => !anchor || (anchor.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);
    if (![...main.querySelectorAll(a.selector)].some(e => fresh(e) && after(e))) return false;
  }
  return true;
}"""


# a sidebar click took effect: the page shows its title (a run seen since the click may be another
# page's, such as a rerun that was under way when the link was clicked)
_NAVIGATING = """(title) => {
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  return [...main.querySelectorAll('h1')].some(h => !h.closest('[data-stale="true"]') && h.textContent.includes(title));
}"""


_WHY = """(a) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const main = document.querySelector('[data-testid="stMain"]') || document.body;
  const heads = [...main.querySelectorAll('h1, h2, h3')].map(h => h.textContent.slice(0, 40));
  return {state: app && app.getAttribute('data-test-script-state'),
          connection: app && app.getAttribute('data-test-connection-state'), url: location.href.slice(-160),
          spinners: document.querySelectorAll('[data-testid="stSpinner"], [data-testid="stSkeleton"]').length,
          headings: heads.slice(0, 12), selector: a.selector ? main.querySelectorAll(a.selector).length : null,
          stale: main.querySelectorAll('[data-stale="true"]').length,
          alerts: [...main.querySelectorAll('[data-testid^="stAlertContent"]')].map(e => e.textContent.slice(0, 160))};
}"""


@dataclass
class Ready:
    """What must be on the page for an action to count as answered."""

    title: str | None = None
    heading: str | None = None
    selector: str | None = None

    @classmethod
    def page(cls, title: str) -> "Ready":
        heading, selector = PAGES[title]
        return cls(title, heading, selector)


@dataclass
class Timing:
    action: str
    round: int
    value: str
    seconds: float
    rerun_seen: bool
    timed_out: bool = False
    exceptions: list[str] = field(default_factory=list)
    why: dict | None = None  # the page's state when no answer came
    server_seconds: float | None = None  # first message sent after the trigger -> last message received
    session: int = 0  # which concurrent session (``--sessions``), 0 for the only one


class Driver:
    """One browser page of the app; times actions and keeps every result."""

    def __init__(self, page, timeout_ms: int) -> None:
        self.page = page
        self.timeout_ms = timeout_ms
        self.results: list[Timing] = []
        self.current: str | None = None
        # when each message of the server arrived over the page's websockets (see time()), and when
        # the page sent each of its own (a click that sent nothing never reached the server)
        self.received: list[float] = []
        self.sent: list[float] = []
        page.on("websocket", self._watch_socket)

    def _watch_socket(self, socket) -> None:
        socket.on("framereceived", lambda _payload: self.received.append(time.perf_counter()))
        socket.on("framesent", lambda _payload: self.sent.append(time.perf_counter()))

    # ------------------------------------------------------------ waiting
    def start_watch(self) -> None:
        self.page.evaluate(_WATCH)

    def wait_done(self, ready: Ready, grace_ms: int | None = None) -> tuple[bool, float]:
        """Wait for the answer (see the module docstring). Returns whether a script run was
        seen and the ``perf_counter`` time of the answer (the settling pause after it is
        not counted, unless a second run starts in it). ``grace_ms``: how long to look for the
        run's start (default :data:`GRACE_MS`, read at call time)."""
        args = {"grace": GRACE_MS if grace_ms is None else grace_ms, "title": H1.get(ready.title, ready.title),
                "heading": ready.heading, "selector": ready.selector}
        self.page.wait_for_function(_DONE, arg=args, polling=50, timeout=self.timeout_ms)
        end = time.perf_counter()
        seen = bool(self.page.evaluate("() => window.__bench.saw"))
        # a second run may follow at once (page switch, st.rerun): wait for it too
        self.start_watch()
        self.page.wait_for_timeout(SETTLE_MS)
        if self.page.evaluate("() => window.__bench.saw"):
            self.page.wait_for_function(_DONE, arg={**args, "grace": 0}, polling=50, timeout=self.timeout_ms)
            return True, time.perf_counter()
        return seen, end

    def shows(self, ready: Ready) -> bool:
        """True when the page shows what ``ready`` waits for (checked once, no waiting)."""
        args = {"grace": 0, "title": H1.get(ready.title, ready.title), "heading": ready.heading,
                "selector": ready.selector}
        self.start_watch()
        return bool(self.page.evaluate(f"({_DONE})({json.dumps(args)})"))

    def exceptions(self) -> list[str]:
        boxes = self.page.locator('[data-testid="stException"]')
        return [boxes.nth(i).inner_text()[:300] for i in range(boxes.count())]

    # ------------------------------------------------------------ timing
    def time(self, action: str, round_: int, value: str, trigger: Callable[[], None], ready: Ready,
             grace_ms: int | None = None) -> Timing:
        """Run ``trigger`` and time it up to the answer; a timeout is recorded, not raised."""
        self.start_watch()
        start = time.perf_counter()
        timed_out = False
        try:
            trigger()
            seen, end = self.wait_done(ready, grace_ms)
            answers = [t for t in self.received if start < t <= end]
            if not seen and answers:
                # a run so short that the page never showed its running state (its start and end
                # came in one update): the server's messages say it ran; its end is the last of them
                seen, end = True, answers[-1]
            seconds = end - start
            server_seconds = self.server_part(start, end)
        except Exception as exc:  # noqa: BLE001 - a page that never settles is a result
            if "Timeout" not in type(exc).__name__:
                raise
            seen, timed_out, seconds, server_seconds = False, True, time.perf_counter() - start, None
        if ready.title:
            self.current = ready.title
        result = Timing(action, round_, value, seconds, seen, timed_out, self.exceptions(),
                        server_seconds=server_seconds)
        if timed_out:
            result.why = {"waited_for": vars(ready), **self.page.evaluate(_WHY, {"selector": ready.selector})}
        self.record(result)
        return result

    def server_part(self, start: float, end: float) -> float | None:
        """Seconds from the first message the page sent in ``[start, end]`` to the last one it
        received in that span; None when either is missing (nothing was asked of the server)."""
        sent = [t for t in self.sent if start <= t <= end]
        received = [t for t in self.received if sent and sent[0] < t <= end]
        return received[-1] - sent[0] if received else None

    def record(self, result: Timing) -> None:
        """Keep a result and print it at once (stderr), so a long run shows its progress."""
        self.results.append(result)
        flags = "".join([" NO RERUN SEEN" if not result.rerun_seen else "", " TIMED OUT" if result.timed_out else "",
                         f" {len(result.exceptions)} EXCEPTION(S)" if result.exceptions else ""])
        server = "" if result.server_seconds is None else f" (server {result.server_seconds:.2f} s)"
        print(f"  {result.action} = {result.value}: {result.seconds:.2f} s{server}{flags}" +
              (f" {result.why}" if result.why else ""), file=sys.stderr, flush=True)

    def go(self, title: str) -> None:
        """Open a page from the sidebar, untimed (when it is not already shown).

        On a loaded machine a click on a sidebar link can be lost (the renderer was busy, or a
        rerun of the page shown was under way): when the page's title is not shown within
        ``NAV_PROBE_MS``, the link is clicked again (at most ``NAV_CLICKS`` times in all); after the
        last click the page is waited for as long as an action. A page that never comes raises a
        ``TimeoutError`` naming what the page showed instead."""
        if self.current == title:
            return
        shown = H1.get(title, title)
        first_click = time.perf_counter()
        for _ in range(NAV_CLICKS):
            self.start_watch()
            self.nav(title).click()
            try:
                self.page.wait_for_function(_NAVIGATING, arg=shown, polling=50, timeout=NAV_PROBE_MS)
                break
            except Exception as exc:  # noqa: BLE001 - not shown yet: the click is tried again
                if "Timeout" not in type(exc).__name__:
                    raise
        ready = Ready.page(title)
        try:
            self.wait_done(ready)
        except Exception as exc:  # noqa: BLE001 - named with the page's state
            if "Timeout" not in type(exc).__name__:
                raise
            why = self.page.evaluate(_WHY, {"selector": ready.selector})
            why["since the first click"] = {"messages sent": sum(t > first_click for t in self.sent),
                                             "messages received": sum(t > first_click for t in self.received)}
            raise TimeoutError(f"page {title} not shown within {self.timeout_ms / 1000:.0f} s: {why}") from exc
        self.current = title

    def nav(self, title: str):
        return self.page.locator('[data-testid="stSidebarNav"] a', has_text=title).first

    # ------------------------------------------------------------ widgets
    def key(self, key: str, inner: str = ""):
        return self.page.locator(f".st-key-{key} {inner}".strip()).first

    def _open_list(self, box, option: str | None):
        """Open the drop-down list of ``box``; its ``option`` (None: its first option).

        The box is scrolled into view first: the list closes when the page scrolls, which
        a click on a box below the fold would do."""
        box.scroll_into_view_if_needed()
        self.page.wait_for_timeout(100)
        box.click()
        choice = (self.page.get_by_role("option", name=option, exact=True) if option
                  else self.page.get_by_role("option")).first
        try:
            choice.wait_for(timeout=2000)
        except Exception:  # noqa: BLE001 - the list did not open: once more with its arrow
            box.locator('button[aria-label="Open"]').first.click()
            choice.wait_for(timeout=3000)
        return choice

    def open_expander(self, label: str) -> None:
        """Open the sidebar expander ``label`` (untimed) when it is closed."""
        box = self.page.locator('[data-testid="stSidebar"] [data-testid="stExpander"]', has_text=label).first
        if box.locator("details").first.get_attribute("open") is None:
            box.locator("summary").first.click()
            self.page.wait_for_timeout(200)

    def select(self, key: str, option: str) -> Callable[[], None]:
        """Open the select box ``key``; the trigger clicks ``option``."""
        return self._open_list(self.key(key, '[data-testid="stSelectbox"]'), option).click

    def multiselect_add(self, key: str, option: str) -> Callable[[], None]:
        return self._open_list(self.key(key, '[data-testid="stMultiSelect"]'), option).click

    def multiselect_remove(self, key: str, option: str) -> Callable[[], None]:
        return self.key(key, f'button[aria-label="Remove {option}"]').click

    def multiselect_first_option(self, key: str) -> Callable[[], None] | None:
        """Open the multiselect ``key``; the trigger picks its first option (None: nothing left)."""
        try:
            return self._open_list(self.key(key, '[data-testid="stMultiSelect"]'), None).click
        except Exception:  # noqa: BLE001 - every option is already chosen
            self.page.keyboard.press("Escape")
            return None

    def multiselect_remove_last(self, key: str) -> Callable[[], None]:
        """The trigger removes the last choice of the multiselect ``key``; when only one is
        chosen, another is added first (untimed), so the page never loses its last choice."""
        if self.page.locator(f'.st-key-{key} button[aria-label^="Remove "]').count() < 2:
            pick = self.multiselect_first_option(key)
            if pick is not None:
                self.start_watch()
                pick()
                self.wait_done(Ready.page(self.current) if self.current in PAGES else Ready())
                self.page.keyboard.press("Escape")
        return self.page.locator(f'.st-key-{key} button[aria-label^="Remove "]').last.click

    def number(self, key: str, value: int) -> Callable[[], None]:
        box = self.key(key, "input")
        box.fill(str(value))
        return lambda: box.press("Enter")

    def toggle(self, key: str, on: bool) -> Callable[[], None]:
        """The trigger switches the toggle ``key`` to ``on``; when it is already there it is
        first switched the other way, untimed (its default depends on the size of the data)."""
        label = self.key(key, "label")
        if self.key(key, 'input[role="switch"]').is_checked() == on:
            self.start_watch()
            label.click()
            self.wait_done(Ready.page(self.current) if self.current in PAGES else Ready())
        return label.click

    def slider_key(self, key: str, press: str) -> Callable[[], None]:
        thumb = self.key(key, 'input[type="range"]')
        thumb.focus()
        return lambda: thumb.press(press)

    def radio(self, key: str, option: str) -> Callable[[], None]:
        return self.key(key).get_by_text(option, exact=True).click

    def table_row(self, key: str, row: int, row_height: int = 35) -> Callable[[], None]:
        """The trigger clicks the row marker of data row ``row`` of the selectable table ``key``,
        where the table is at the moment of the click: a result the server thread delivers between
        the preparation and the click may redraw the page above the table and move it (a position
        measured earlier then lands beside the row, and the click starts no rerun)."""
        grid = self.key(key, TABLE)
        grid.scroll_into_view_if_needed()

        def click() -> None:
            box = grid.bounding_box()
            self.page.mouse.click(box["x"] + 10, box["y"] + row_height * (row + 1) + row_height // 2)
        return click
