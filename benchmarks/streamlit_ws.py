"""A headless Streamlit client: one session over the server's own websocket protocol.

It does what the browser's frontend does for a session, without rendering:

* connects to ``ws://HOST/_stcore/stream`` with the ``streamlit`` subprotocol;
* asks for a script run with a ``BackMsg.rerun_script`` (a ``ClientState``: query
  string, the values of every widget, the page);
* reads the ``ForwardMsg`` stream until ``script_finished`` (a run that ends early
  for a rerun, ``st.rerun()``, is followed by the next one);
* keeps every widget's value as the frontend's ``WidgetStateManager`` does: a widget
  seen for the first time takes its default, a value the script sets
  (``set_value``) replaces the held one, a widget missing from a finished run is
  dropped, and a changed value is sent with all the others on the next rerun;
* opens another page of the navigation as its link does (:meth:`Session.switch_page`);
* keeps a forward-message cache like the frontend's: a cacheable message is kept
  under its hash, the hashes are declared with each rerun, and a ``ref_hash``
  reference from the server is resolved from that cache.

Widgets mirrored: number_input (``int_value``/``double_value`` by data type),
selectbox and radio (option text), checkbox and toggle, multiselect, slider and
select_slider. A widget bound to the URL (``bind="query-params"``) writes its new
value into the query string when it is changed, as the frontend does. Other widgets
(buttons, uploads, chart and table selections) have no value until a user acts on
them, so none is sent, as in the browser. File and media URLs are not fetched, and
row chunks of lazily sent tables are not requested.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from urllib.parse import parse_qsl, urlencode

import pyarrow as pa
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

SUBPROTOCOL = "streamlit"
STREAM_PATH = "/_stcore/stream"
#: Element types whose value the frontend holds from the moment they are drawn.
MIRRORED = ("number_input", "selectbox", "radio", "checkbox", "multiselect", "slider")
#: script_finished statuses that end a run chain (FINISHED_EARLY_FOR_RERUN does not).
FINAL = {ForwardMsg.FINISHED_SUCCESSFULLY: "finished", ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile error",
         ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY: "fragment finished"}


class ProtocolError(RuntimeError):
    """The server sent something a browser session could not have handled."""


@dataclasses.dataclass
class RunResult:
    """What one request (connect or widget change) produced, up to the end of its run chain."""

    seconds: float
    status: str
    runs: int  # script runs in the chain (more than one after st.rerun())
    elements: list  # (element type, element proto) of the last run, in arrival order
    exceptions: list[str]  # messages of exception elements the server sent
    bytes_received: int

    def texts(self) -> list[str]:
        """Markdown, caption, heading and alert bodies of the last run."""
        return [el.body for kind, el in self.elements if kind in ("markdown", "heading", "alert")]

    def tables(self) -> list[pa.Table]:
        """Every table (st.dataframe / st.table) of the last run whose rows were sent with it."""
        return [pa.ipc.open_stream(el.arrow_data.data).read_all() for kind, el in self.elements
                if kind in ("dataframe", "arrow_table") and el.arrow_data.data]

    def headings(self) -> list[str]:
        """Titles, headers and subheaders of the last run."""
        return [el.body for kind, el in self.elements if kind == "heading"]

    def table_columns(self) -> list[list[str]]:
        """Column names of every table (st.dataframe / st.table) of the last run."""
        columns = []
        for kind, el in self.elements:
            data = el.arrow_data.data if kind in ("dataframe", "arrow_table") else b""
            if data:
                columns.append([str(name) for name in pa.ipc.open_stream(data).schema.names])
        return columns


def _initial_value(kind: str, el) -> WidgetState | None:
    """The WidgetState the frontend registers when it draws ``el`` (None: no value)."""
    state = WidgetState(id=el.id)
    if kind == "number_input":
        source = "value" if el.set_value else "default"
        if not el.HasField(source):
            return None  # value=None: empty until typed
        value = getattr(el, source)
        if el.data_type == NumberInput.INT:
            state.int_value = int(value)
        else:
            state.double_value = value
    elif kind in ("selectbox", "radio"):
        if el.set_value:
            if not el.HasField("raw_value"):
                return None
            state.string_value = el.raw_value
        elif el.HasField("default"):
            state.string_value = el.options[el.default]
        else:
            return None  # index=None: nothing chosen yet
    elif kind == "checkbox":
        state.bool_value = el.value if el.set_value else el.default
    elif kind == "multiselect":
        state.string_array_value.data.extend(el.raw_values if el.set_value else
                                             [el.options[i] for i in el.default])
    elif kind == "slider" and el.type == Slider.SELECT_SLIDER:
        chosen = el.raw_value if el.set_value and el.raw_value else \
            [el.options[int(i)] for i in (el.value if el.set_value else el.default)]
        state.string_array_value.data.extend(chosen)
    elif kind == "slider":
        state.double_array_value.data.extend(el.value if el.set_value else el.default)
    else:
        return None
    return state


def _without_set_value(el):
    copy = type(el)()
    copy.CopyFrom(el)
    copy.set_value = False
    return copy


def _values(state: WidgetState, kind: str) -> list:
    value = getattr(state, kind)
    return list(value.data) if kind.endswith("_array_value") else [value]


def _url_text(value) -> str:
    """A value as the frontend writes it in the address bar (JavaScript's String())."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class Session:
    """One browser-less session: ``await Session.open(...)``, then ``await session.set_widget(...)``."""

    def __init__(self, ws, query_string: str, page_name: str, timeout: float):
        self._ws = ws
        self.query_string = query_string
        self._page_name = page_name
        self._page_hash = ""
        self._timeout = timeout
        self.widgets: dict[str, WidgetState] = {}
        self._bindings: dict[str, tuple[str, WidgetState]] = {}  # id -> (URL parameter, default)
        self._cache: dict[str, ForwardMsg] = {}
        self.pages: dict[str, str] = {}  # URL path of each page of the navigation -> its script hash

    @classmethod
    async def open(cls, base_url: str, query_string: str = "", page: str = "",
                   timeout: float = 120.0) -> tuple["Session", RunResult]:
        """Connect to ``base_url`` (http://127.0.0.1:PORT) and run the script once, as a page load does;
        ``page`` is the page's URL path ("" for the default page)."""
        ws_url = base_url.replace("http://", "ws://", 1).rstrip("/") + STREAM_PATH
        start = time.perf_counter()
        ws = await connect(ws_url, subprotocols=[SUBPROTOCOL], max_size=None, open_timeout=timeout)
        session = cls(ws, query_string, page, timeout)
        try:
            result = await session._request(start)
        except BaseException:
            await ws.close()
            raise
        return session, result

    async def close(self) -> None:
        await self._ws.close()

    def widget_id(self, key: str) -> str:
        """The id of the widget drawn with ``key=key`` (Streamlit appends the user key to the id)."""
        found = [wid for wid in self.widgets if wid.endswith(f"-{key}")]
        if len(found) != 1:
            raise ProtocolError(f"{len(found)} widgets with key {key!r} in the last run")
        return found[0]

    async def set_widget(self, key: str, value) -> RunResult:
        """Change the widget keyed ``key`` as a user would, and wait for the rerun it starts."""
        wid = self.widget_id(key)
        state = self.widgets[wid]
        kind = state.WhichOneof("value")
        if kind.endswith("_array_value"):
            field = getattr(state, kind).data
            del field[:]
            field.extend(value)
        else:
            setattr(state, kind, value)
        if wid in self._bindings:
            self._write_url(*self._bindings[wid], state)
        return await self._request(time.perf_counter())

    async def switch_page(self, path: str) -> RunResult:
        """Open the page at URL path ``path`` (``"compare"``) as a click on its navigation link does:
        the rerun names the page by its script hash, and the address keeps only the parameters of
        widgets bound to it (the script puts back the others it needs)."""
        if path not in self.pages:
            raise ProtocolError(f"no page at /{path} in the navigation (pages: {', '.join(sorted(self.pages))})")
        self._page_hash = self.pages[path]
        bound = {param for param, _ in self._bindings.values()}
        self.query_string = urlencode([(k, v) for k, v in parse_qsl(self.query_string, keep_blank_values=True)
                                       if k in bound])
        return await self._request(time.perf_counter())

    def _write_url(self, param: str, default: WidgetState, state: WidgetState) -> None:
        """Put a bound widget's new value in the query string (or drop it at the default)."""
        pairs = [(k, v) for k, v in parse_qsl(self.query_string, keep_blank_values=True) if k != param]
        kind = state.WhichOneof("value")
        if state.SerializeToString(deterministic=True) != default.SerializeToString(deterministic=True):
            pairs.extend((param, _url_text(v)) for v in _values(state, kind))
        self.query_string = urlencode(pairs)

    def _rerun_message(self) -> BackMsg:
        msg = BackMsg()
        client = msg.rerun_script
        client.query_string = self.query_string
        client.page_script_hash = self._page_hash
        if not self._page_hash:
            client.page_name = self._page_name
        client.widget_states.widgets.extend(self.widgets.values())
        client.cached_message_hashes.extend(self._cache)
        return msg

    async def _request(self, start: float) -> RunResult:
        await self._ws.send(self._rerun_message().SerializeToString())
        return await self._read_until_finished(start)

    async def _read_until_finished(self, start: float) -> RunResult:
        elements: list = []
        exceptions: list[str] = []
        seen: set[str] = set()
        runs, received = 0, 0
        deadline = time.monotonic() + self._timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no script_finished within {self._timeout:.0f} s")
            data = await self._recv(remaining)
            received += len(data)
            msg = self._resolve(data)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                runs += 1
                elements, seen = [], set()
            elif kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages} or self.pages
                if msg.navigation.page_script_hash:
                    self._page_hash = msg.navigation.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = msg.page_info_changed.query_string  # the browser's address bar
            elif kind == "page_not_found":
                exceptions.append(f"page not found: {msg.page_not_found.page_name!r}")
            elif kind == "session_event" and msg.session_event.HasField("script_compilation_exception"):
                exceptions.append(msg.session_event.script_compilation_exception.message)
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                element = msg.delta.new_element
                el_kind = element.WhichOneof("type")
                el = getattr(element, el_kind)
                elements.append((el_kind, el))
                if el_kind == "exception":
                    exceptions.append(f"{el.type}: {el.message}")
                self._mirror(el_kind, el, seen)
            elif kind == "script_finished" and msg.script_finished in FINAL:
                if msg.script_finished != ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                    for stale in set(self.widgets) - seen:  # the frontend's removeInactive
                        del self.widgets[stale]
                return RunResult(time.perf_counter() - start, FINAL[msg.script_finished], runs,
                                 elements, exceptions, received)

    async def _recv(self, timeout: float) -> bytes:
        data = await asyncio.wait_for(self._ws.recv(), timeout)
        if isinstance(data, str):
            raise ProtocolError("text frame from the server (Streamlit sends binary protobufs)")
        return data

    def _resolve(self, data: bytes) -> ForwardMsg:
        """Parse one ForwardMsg; a reference is replaced by the cached message it names."""
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "ref_hash":
            cached = self._cache.get(msg.ref_hash)
            if cached is None:
                raise ProtocolError(f"reference to a message this client never received ({msg.ref_hash})")
            resolved = ForwardMsg()
            resolved.CopyFrom(cached)
            resolved.metadata.CopyFrom(msg.metadata)
            return resolved
        if msg.metadata.cacheable and msg.hash:
            self._cache[msg.hash] = msg
        return msg

    def _mirror(self, kind: str, el, seen: set[str]) -> None:
        wid = getattr(el, "id", "")
        if not wid or kind not in MIRRORED:
            return
        seen.add(wid)
        if wid in self.widgets and not getattr(el, "set_value", False):
            return  # the frontend keeps the value it holds
        state = _initial_value(kind, el)
        if state is None:
            self.widgets.pop(wid, None)
        else:
            self.widgets[wid] = state
        if el.HasField("query_param_key") and el.query_param_key and state is not None:
            default = _initial_value(kind, _without_set_value(el))
            self._bindings[wid] = (el.query_param_key, default)
