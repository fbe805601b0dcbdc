"""The dashboard server's startup hook (``dashboard/serve.py`` -> :mod:`dashboard.startup`): it
imports every dashboard module the entry script and the pages import, before the first visitor."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from dashboard import startup

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = [ROOT / "dashboard" / "app.py", *sorted((ROOT / "dashboard" / "views").glob("*.py"))]


def dashboard_imports(path: Path) -> set[str]:
    """The ``dashboard.*`` modules a script imports at its top level (``from dashboard import x``,
    ``from dashboard.x import y``)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module == "dashboard":
            names |= {f"dashboard.{a.name}" for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dashboard."):
            names.add(node.module)
    return names


def test_every_module_a_page_imports_is_imported_at_startup():
    wanted = set().union(*(dashboard_imports(p) for p in SCRIPTS))
    assert wanted, "the scan found the pages' imports"
    # the format module is imported as "format as fmt"; the warm-up and preload are started, not imported only
    missing = wanted - set(startup.PAGE_MODULES) - {"dashboard.format", "dashboard.kernel_warmup",
                                                   "dashboard.preload"}
    assert not missing, f"add to dashboard.startup.PAGE_MODULES: {sorted(missing)}"


def test_the_startup_imports_succeed_in_a_fresh_interpreter():
    code = ("import json, sys; from dashboard import startup; failed = startup.import_pages(); "
            "print(json.dumps([failed, [m for m in startup.PAGE_MODULES if m not in sys.modules]]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    failed, not_loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert failed == [] and not_loaded == []


def test_the_entry_point_is_an_st_app_running_the_entry_script():
    tree = ast.parse((ROOT / "dashboard" / "serve.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "App"]
    assert len(calls) == 1 and calls[0].args[0].value == "app.py"
    assert (ROOT / "dashboard" / calls[0].args[0].value).is_file()
    assert any(k.arg == "lifespan" for k in calls[0].keywords)


def test_the_hook_leaves_later_pages_imports_until_the_first_page_is_drawn(monkeypatch):
    """``prepare`` checks the kernel cache and starts the first page's loads; neither the kernel
    warm-up process nor the later pages' imports (scipy, the report) are started beside the first page
    (the entry script starts them: the warm-up before a page that computes, else once it is drawn)."""
    from dashboard import kernel_warmup, preload

    started = []
    monkeypatch.setattr(kernel_warmup, "start_once", lambda: started.append("warm-up"))
    monkeypatch.setattr(kernel_warmup, "cache_complete", lambda: started.append("cache check"))
    monkeypatch.setattr(preload, "import_all", lambda: started.append("later pages"))
    monkeypatch.setattr(startup, "load_first_page", lambda: started.append("first page"))
    startup.prepare().join(timeout=60)
    assert started == ["cache check", "first page"]


def test_the_first_page_loads_succeed_in_a_fresh_interpreter():
    code = ("import json, sys; from dashboard import startup; startup.load_first_page(); "
            "import plotly.io as pio; "
            "print(json.dumps([[m for m in startup.FIRST_PAGE if m not in sys.modules], "
            "type(pio.templates._templates.get('plotly_white')).__name__]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    # plotly keeps a placeholder until a template is first read: loaded, it is a Template
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[], "Template"]


def test_the_upload_kernels_loaded_ahead_are_every_parallel_kernel_of_the_way_to_the_overview():
    """What :func:`dashboard.preload.load_upload_kernels` loads (while the server waits for an
    upload) is every parallel kernel that preparing a large upload and computing the Overview's
    tables then calls: none is left for the upload to load."""
    code = """if True:
        import json
        import pandas as pd
        import metrics_core as mc
        from metrics_core import warmup
        from metrics_core.kernels._jit import PARALLEL, SizedKernel, use_variant
        from dashboard import metric_lists

        def called():
            return {k.py_func.__qualname__ for k in SizedKernel.instances if k._called[PARALLEL]}

        warmup.load_upload_kernels()
        ahead = called()
        users = [f"u{i}" for i in range(40) for _ in range(6)]
        run = pd.DataFrame({"user_id": users, "item_id": [f"i{(i * 7) % 23}" for i in range(len(users))],
                            "score": [((i * 37) % 101) / 101 for i in range(len(users))]})
        qrels = run.iloc[::3][["user_id", "item_id"]].assign(relevance=[i % 3 for i in range(len(run) // 3)])
        with use_variant(PARALLEL):  # the variants of a large upload, on small data
            ranked = mc.prepare(run, qrels)
            mc.evaluate(ranked, metrics=metric_lists.labels(metric_lists.RANKING, 10))
            mc.evaluate(ranked, metrics=metric_lists.scored_labels(), gain="linear", ties="average")
        print(json.dumps([sorted(ahead), sorted(called() - ahead)]))
    """
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    ahead, left = json.loads(out.stdout.strip().splitlines()[-1])
    assert "scan_words" in ahead  # the scan of a large text file
    assert left == []


def test_the_upload_kernels_are_loaded_only_from_a_complete_cache(monkeypatch):
    """On a fresh install the background warm-up process compiles them: the server does not."""
    from dashboard import preload
    from metrics_core import warmup
    from metrics_core.kernels import cache_stamp

    loaded: list[str] = []
    monkeypatch.setattr(warmup, "load_upload_kernels", lambda: loaded.append("loaded"))
    monkeypatch.setattr(cache_stamp, "is_current", lambda: False)
    assert preload.load_upload_kernels() is False and loaded == []
    monkeypatch.setattr(cache_stamp, "is_current", lambda: True)
    assert preload.load_upload_kernels() is True and loaded == ["loaded"]


def test_the_server_answers_while_the_startup_imports_run(monkeypatch):
    """The startup hook returns (the server answers its health check and serves the page's code)
    while :func:`dashboard.startup.prepare` is still running on its thread."""
    import asyncio
    import importlib.util
    import threading
    from concurrent.futures import ThreadPoolExecutor

    release, entered, finished = threading.Event(), threading.Event(), threading.Event()

    def slow_prepare():
        entered.set()
        release.wait(10)  # a hook that waited for prepare would return only after this
        finished.set()

    monkeypatch.setattr(startup, "prepare", slow_prepare)
    spec = importlib.util.spec_from_file_location("serve_under_test", ROOT / "dashboard" / "serve.py")
    serve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(serve)

    async def enter_hook() -> bool:
        async with serve.lifespan(None):
            return entered.wait(60) and not finished.is_set()

    try:
        # on a thread of its own: a browser test run before in this process may leave an event loop running here
        with ThreadPoolExecutor(max_workers=1) as pool:
            assert pool.submit(asyncio.run, enter_hook()).result(timeout=120)  # inside the hook, prepare still blocked
    finally:
        release.set()


def test_the_repl_check_is_skipped_and_a_renamed_flag_fails_here():
    """After ``skip_repl_check`` the first element drawn does not inspect the stack (Streamlit's
    check for a Python prompt); a Streamlit that renamed its flag fails here, not silently."""
    code = ("import json; from streamlit import delta_generator as dg, env_util; "
            "before = dg._use_warning_has_been_displayed; "
            "from dashboard import startup; startup.skip_repl_check(); "
            "env_util.is_repl = lambda: (_ for _ in ()).throw(AssertionError('stack inspected')); "
            "dg._maybe_print_use_warning(); print(json.dumps([before, dg._use_warning_has_been_displayed]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, True]


def test_the_server_config_turns_off_file_watching_and_magic():
    """``streamlit run`` from the repository root reads ``.streamlit/config.toml``: no source watcher
    (each new session would resolve every loaded module's path) and no magic (scripts are compiled
    as written)."""
    code = ("import json; from streamlit import config; config.get_config_options(force_reparse=True); "
            "print(json.dumps([config.get_option(name) for name in ('server.fileWatcherType', "
            "'runner.magicEnabled')]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["none", False]


def test_no_page_relies_on_magic():
    """With magic off, an expression statement alone on a line shows nothing: every element of the
    entry script and the pages is an explicit call (docstrings aside)."""
    bare = []
    for path in [*SCRIPTS, ROOT / "dashboard" / "serve.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Expr) and not isinstance(node.value, (ast.Call, ast.Await, ast.Yield)):
                if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                    bare.append(f"{path.name}:{node.lineno}: {ast.unparse(node)[:60]}")
    assert len(SCRIPTS) > 5
    assert bare == [], f"shown only with magic, which is off: {bare}"


def _first_run_events(monkeypatch, tmp_path, demo: bool) -> list[str]:
    """The order in which the entry script's first run draws its page and starts the kernel warm-up
    (AppTest; ``demo=False``: the entry script told that files are loaded, so the page computes)."""
    from streamlit.testing.v1 import AppTest

    import _deadlines as deadlines
    from dashboard import background, kernel_warmup, state

    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    events = []
    finished = background.page_finished
    monkeypatch.setattr(kernel_warmup, "start_once", lambda: events.append("warm-up"))
    monkeypatch.setattr(background, "page_finished", lambda: (events.append("page drawn"), finished())[1])
    if not demo:
        monkeypatch.setattr(state, "is_demo", lambda: False)
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=deadlines.SCRIPT_RUN)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return events


def test_the_shipped_demo_starts_the_kernel_warm_up_once_its_first_page_is_drawn(monkeypatch, tmp_path):
    """The demo's first page is drawn from shipped results and compiles nothing: the warm-up process
    (its start-up and compiles) does not take a core from it."""
    assert _first_run_events(monkeypatch, tmp_path, demo=True) == ["page drawn", "warm-up"]


def test_a_page_that_computes_starts_the_kernel_warm_up_before_it(monkeypatch, tmp_path):
    """With files loaded the page compiles kernels itself: the warm-up compiles beside it."""
    assert _first_run_events(monkeypatch, tmp_path, demo=False)[:2] == ["warm-up", "page drawn"]


def test_the_server_script_answers_before_the_package_is_imported():
    """``dashboard/serve.py``'s own imports (run before the server answers its health check) leave
    pandas, SQLAlchemy and the package to the startup thread, yet mint and check owner secrets of
    the store's form: the store, imported later, uses the very module that defines that form."""
    code = ("import json, runpy, sys; runpy.run_path('dashboard/serve.py'); "
            "before = sorted(m for m in ('pandas', 'sqlalchemy', 'metrics_core', 'metrics_core.store') "
            "if m in sys.modules); "
            "from dashboard import owner; minted = owner.new_owner_secret(); "
            "from metrics_core import store; from metrics_core.store import ids, tokens; "
            "print(json.dumps([before, tokens is sys.modules[owner.TOKENS], store.TOKEN_PATTERN is tokens.TOKEN_PATTERN, "
            "ids.validate_delete_token(minted) == minted, owner.from_cookies({owner.COOKIE: minted}) == minted, "
            "owner.from_cookies({owner.COOKIE: minted[:-1]}), owner.from_cookies({owner.COOKIE: minted + '='})]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[], True, True, True, True, None, None]
