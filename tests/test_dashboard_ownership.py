"""AppTest: a working copy's address is not write access.

Each AppTest session is one browser with its own owner secret (``st.context.cookies`` is
empty in AppTest, so a session makes its own; a test that plays "the same browser again"
hands the first session's secret to the next, as the cookie does in a real browser).
What the store holds is checked with ``AnalysisStore`` directly."""

from __future__ import annotations

from urllib.parse import quote

import pytest

pytest.importorskip("streamlit")
from _apptest import AppTest  # noqa: E402

from _event_loop import run_on_own_loop  # noqa: E402
from dashboard import demo, owner, text  # noqa: E402
from metrics_core.store import TOKEN_PATTERN, AnalysisStore  # noqa: E402
from test_dashboard_pages import APP, TIMEOUT, data_page, page, upload_small  # noqa: E402

SECRET = "mcd_owner_secret"


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def analysis_id(at: AppTest) -> str:
    value = at.query_params["analysis"]
    return value[0] if isinstance(value, list) else value


def browser(aid: str, secret: str | None = None, page_name: str | None = None) -> AppTest:
    """A session opening ``aid``: another browser, or with ``secret`` the same browser again."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["analysis"] = aid
    if secret is not None:
        at.session_state[SECRET] = secret
    if page_name is not None:
        at.switch_page(f"views/{page_name}.py")
    return ok(at.run())


def stored_files(aid: str) -> list[str]:
    return sorted(f.name for f in AnalysisStore().load(aid).files)


def owner_session():
    at = data_page()
    d = upload_small(at)
    aid = analysis_id(at)
    return at, d, aid


def test_another_browser_sees_a_read_only_view_and_makes_its_own_copy():
    at, d, aid = owner_session()
    names = sorted([f"{n}.csv" for n in d.runs] + ["qrels.csv"])
    assert stored_files(aid) == names
    revision = AnalysisStore().load(aid).revision
    mine = at.session_state[SECRET]
    assert TOKEN_PATTERN.match(mine)
    assert all(mine not in quote(str(v)) for v in at.query_params.values())  # never in the address

    other = browser(aid, page_name="data")
    assert other.session_state[SECRET] != mine
    assert not other.get("file_uploader")  # no uploaders for someone else's working copy
    assert any("**Read-only**" in i.value for i in other.info)
    assert other.button(key="make_own_copy").label == "Make my own copy"
    first = next(iter(d.runs))
    assert other.button(key=f"remove_{first}").disabled and other.button(key="remove_qrels").disabled
    ok(page(other, "overview"))  # every page shows the data; nothing changed it
    assert stored_files(aid) == names and analysis_id(other) == aid
    assert AnalysisStore().load(aid).revision == revision
    ok(page(other, "data"))

    ok(other.button(key="make_own_copy").click().run())
    copy = analysis_id(other)
    assert copy != aid and stored_files(copy) == names
    saved = AnalysisStore().load(copy, owner=other.session_state[SECRET])
    assert saved.editable and saved.settings["runs"] == AnalysisStore().load(aid).settings["runs"]
    assert other.get("file_uploader") and not any("**Read-only**" in i.value for i in other.info)
    ok(other.button(key=f"remove_{first}").click().run())
    assert analysis_id(other) == copy and first + ".csv" not in stored_files(copy)
    assert stored_files(aid) == names  # the owner's working copy is untouched
    # the owner still changes its own
    ok(at.button(key="remove_qrels").click().run())
    assert analysis_id(at) == aid and "qrels.csv" not in stored_files(aid)


def test_the_same_browser_keeps_changing_its_working_copy_after_a_reload():
    at, d, aid = owner_session()
    again = browser(aid, secret=at.session_state[SECRET], page_name="data")
    assert again.get("file_uploader") and not any("**Read-only**" in i.value for i in again.info)
    name = next(iter(d.runs))
    ok(again.button(key=f"remove_{name}").click().run())
    assert analysis_id(again) == aid and f"{name}.csv" not in stored_files(aid)


def test_two_tabs_of_the_owner_get_a_message_instead_of_overwriting():
    at, d, aid = owner_session()
    secret = at.session_state[SECRET]
    first_tab = browser(aid, secret=secret, page_name="data")
    second_tab = browser(aid, secret=secret, page_name="data")
    one, two = list(d.runs)[:2]
    ok(first_tab.button(key=f"remove_{one}").click().run())
    assert f"{one}.csv" not in stored_files(aid) and not first_tab.error
    ok(second_tab.button(key=f"remove_{two}").click().run())
    errors = [e.value for e in second_tab.error]
    assert any("this analysis was changed in another tab" in e and "reload" in e for e in errors), errors
    # the first tab's change stands; the second tab's was not saved, and its address is kept
    assert f"{two}.csv" in stored_files(aid) and f"{one}.csv" not in stored_files(aid)
    assert analysis_id(second_tab) == aid
    ok(page(second_tab, "overview"))  # said on every page until a reload
    assert any("changed in another tab" in e.value for e in second_tab.error)
    reloaded = browser(aid, secret=secret, page_name="data")
    assert not reloaded.error
    ok(reloaded.button(key=f"remove_{two}").click().run())
    assert stored_files(aid) == sorted([f"{n}.csv" for n in d.runs if n not in (one, two)] + ["qrels.csv"])


def test_a_snapshot_still_opens_read_only_and_a_change_starts_a_new_working_copy():
    at, d, aid = owner_session()
    receipt = AnalysisStore().snapshot(aid)
    other = browser(receipt.id, page_name="data")
    assert other.get("file_uploader") and not any("**Read-only**" in i.value for i in other.info)
    name = next(iter(d.runs))
    ok(other.button(key=f"remove_{name}").click().run())
    new = analysis_id(other)
    assert new not in (aid, receipt.id) and f"{name}.csv" not in stored_files(new)
    assert f"{name}.csv" in stored_files(receipt.id)


def test_cookie_value_is_read_only_when_well_formed():
    valid = "A" * 43
    assert owner.from_cookies({owner.COOKIE: valid}) == valid
    for bad in ("", "A" * 42, "A" * 44, "A" * 42 + ";", "A" * 42 + '"', None):
        assert owner.from_cookies({owner.COOKIE: bad}) is None
    assert owner.from_cookies({}) is None and owner.from_cookies(None) is None


def _served(headers: list[tuple[bytes, bytes]], content_type: bytes = b"text/html; charset=utf-8",
            scheme: str = "http", kind: str = "http") -> list[tuple[bytes, bytes]]:
    """The response headers a request with ``headers`` gets through :class:`owner.OwnerCookieMiddleware`
    in front of an app answering ``content_type``."""
    async def inner(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type)]})
        await send({"type": "http.response.body", "body": b"<html></html>"})

    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}
    scope = {"type": kind, "scheme": scheme, "method": "GET", "path": "/", "headers": headers}
    run_on_own_loop(owner.OwnerCookieMiddleware(inner)(scope, receive, send))
    return sent[0]["headers"]


def _set_cookies(headers) -> list[str]:
    return [v.decode("latin-1") for k, v in headers if k == b"set-cookie"]


def test_the_server_sets_the_secret_in_a_cookie_no_script_reads():
    """An HTML page served to a browser without a well-formed secret sets a new one with HttpOnly,
    SameSite=Strict, Path=/ and 400 days (Secure over HTTPS, also behind a proxy); a well-formed
    one is left alone; a malformed one (another page of the host may set it) is replaced, once."""
    for sent in ([], [(b"cookie", b"other=1")], [(b"cookie", f"{owner.COOKIE}=bad value".encode())],
                 [(b"cookie", f"{owner.COOKIE}={'A' * 42}; x=1".encode())]):
        (cookie,) = _set_cookies(_served(sent))
        attributes = [part.strip() for part in cookie.split(";")]
        name, value = attributes[0].split("=", 1)
        assert name == owner.COOKIE and TOKEN_PATTERN.match(value)
        assert sorted(attributes[1:]) == sorted(["Path=/", "Max-Age=34560000", "HttpOnly", "SameSite=Strict"])
        assert 34560000 == 400 * 86400
    valid = "B" * 43
    assert _set_cookies(_served([(b"cookie", f"x=1; {owner.COOKIE}={valid}".encode())])) == []
    # two values (a page of the host set one with a longer path): the well-formed one is kept
    assert _set_cookies(_served([(b"cookie", f"{owner.COOKIE}=junk; {owner.COOKIE}={valid}".encode())])) == []
    assert _set_cookies(_served([], content_type=b"application/javascript")) == []  # scripts, health checks
    assert "; Secure" in _set_cookies(_served([], scheme="https"))[0]
    assert "; Secure" in _set_cookies(_served([(b"x-forwarded-proto", b"https")]))[0]
    assert "Secure" not in _set_cookies(_served([]))[0]
    secrets_given = {_set_cookies(_served([]))[0] for _ in range(3)}
    assert len(secrets_given) == 3  # a new random secret each time
    assert owner.cookie_values([f"a=1; {owner.COOKIE}=x", f"{owner.COOKIE}=\"y\""]) == ["x", "y"]


def test_no_page_script_writes_or_reads_the_secret():
    """The entry script draws no HTML with the secret (nothing a page's script could read or reload on)."""
    at, d, aid = owner_session()  # a browser that saved a working copy: it has its secret
    secret = at.session_state[SECRET]
    assert TOKEN_PATTERN.match(secret)
    drawn = [str(h.proto) for h in at.get("html")]
    assert not [h for h in drawn if secret in h or "cookie" in h.lower() or "<script" in h.lower()]


def test_upload_of_content_already_stored_is_not_refused_near_a_full_share(monkeypatch):
    at, d, aid = owner_session()
    used = AnalysisStore().usage(owner=at.session_state[SECRET]).client_used_bytes
    # this browser's share now leaves far less than a results file
    monkeypatch.setenv("METRICS_CORE_STORE_QUOTA", str(4 * (used + 1500)))
    name = next(iter(d.runs))
    data = demo.to_csv_bytes(d.runs[name])
    at.file_uploader(key="upload_runs_0").set_value([(f"copy of {name}.csv", data, "text/csv")])
    ok(at.run())
    assert not at.error, [e.value for e in at.error]
    assert f"copy of {name}.csv" in stored_files(aid)
    at.file_uploader(key="upload_runs_0").set_value([(f"copy of {name}.csv", data, "text/csv"),
                                                     ("new.csv", data + b"u9,i9,0.1\n", "text/csv")])
    ok(at.run())
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and text.md("new.csv was not loaded: your share") in errors[0], errors
