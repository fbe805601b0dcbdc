"""The example notebooks as the Jupyter front ends show them: each notebook of ``examples/`` opened in
a headless JupyterLab (``--frontend lab``), Notebook 7 (``notebook7``) or the classic Notebook's
interface (``nbclassic``, the Notebook 6 front end), every cell run, the page screenshotted, and what
rendered counted (plotly figures drawn as SVG, HTML tables, error outputs).

JupyterLab and Notebook 7 draw a figure from its plotly JSON output (plotly's extension); the classic
interface has no renderer for that type and draws the same figure from the output's HTML (its script
calls ``Plotly.newPlot``), as an nbconvert export does.

None of these front ends is among the locked dependencies (the tests export the notebooks with nbconvert
and open the HTML in Chromium, ``tests/test_example_notebooks.py``); this check runs where they are
installed, with the Python given by ``--python`` (its ``jupyter-lab``, ``jupyter-notebook`` or
``jupyter-nbclassic`` next to it)::

    python -m venv /tmp/jlab && echo "$PWD/.venv/lib/python3.11/site-packages" \\
        > /tmp/jlab/lib/python3.11/site-packages/locked.pth && /tmp/jlab/bin/pip install jupyterlab notebook nbclassic
    python -m benchmarks.jupyterlab_check --python /tmp/jlab/bin/python --out /tmp/jlab-shots
    python -m benchmarks.jupyterlab_check --python /tmp/jlab/bin/python --frontend nbclassic --out /tmp/classic-shots

Chromium is Debian's (``/usr/bin/chromium`` or ``$CHROMIUM``) driven by Playwright's Python package.
A kernel started by the server imports this checkout (``PYTHONPATH``). Prints one line per notebook:
cells, outputs, plotly figures drawn, tables, errors, and the screenshot's path.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TOKEN = "metrics-core-check"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"JupyterLab did not answer at {url}")


#: each front end: the command next to ``--python`` and the path that opens a notebook
FRONTENDS = {"lab": ("jupyter-lab", "/lab/tree/{name}?token={token}&reset"),
             "notebook7": ("jupyter-notebook", "/notebooks/{name}?token={token}"),
             "nbclassic": ("jupyter-nbclassic", "/nbclassic/notebooks/{name}?token={token}")}


def _waits(prompt: str, figure: str) -> dict[str, str]:
    """What a run of every cell waits for: each ``prompt`` numbered (none "[*]"), then every ``figure``
    with its SVG (plotly draws it after the cell has run)."""
    return {"every cell run": f"""() => {{
                const prompts = [...document.querySelectorAll('{prompt}')].map(p => p.textContent);
                return prompts.length > 0 && prompts.every(t => /\\[\\d+\\]/.test(t));
            }}""",
            "every figure drawn": f"() => [...document.querySelectorAll('{figure}')].every(p => p.querySelector('.main-svg'))"}


def _first_unmet(page, waits: dict[str, str], timeout_ms: int) -> str | None:
    """The first of ``waits`` not met within ``timeout_ms`` (None: every one met)."""
    from playwright.sync_api import TimeoutError as Timeout

    for what, condition in waits.items():
        try:
            page.wait_for_function(condition, timeout=timeout_ms)
        except Timeout:
            return what
    return None


def check(page, base: str, name: str, out: Path, timeout_ms: int, frontend: str = "lab") -> str:
    """Open ``name``, run every cell, wait until the kernel is idle, screenshot; one line of counts."""
    if frontend == "nbclassic":
        return check_classic(page, base, name, out, timeout_ms)
    page.goto(base + FRONTENDS[frontend][1].format(name=name, token=TOKEN))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=timeout_ms)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle'], "
                           ".jp-Toolbar-kernelStatus, .jp-KernelStatus", timeout=timeout_ms)
    from playwright.sync_api import TimeoutError as Timeout

    try:  # a notebook opened for the first time asks which kernel: its own (Python 3)
        page.click(".jp-Dialog .jp-mod-accept", timeout=30_000)
    except Timeout:
        pass
    page.click(".lm-MenuBar-itemLabel:text-is('Run')", timeout=timeout_ms)  # the main menu
    page.click(".lm-Menu-itemLabel:text-is('Run All Cells')", timeout=timeout_ms)
    # every code cell done (each prompt numbered, none "[*]"); plotly draws its SVG after that
    what = _first_unmet(page, _waits(".jp-CodeCell .jp-InputPrompt", ".js-plotly-plot"), timeout_ms)
    if what:
        shot = out / f"{Path(name).stem}-unfinished.png"
        page.screenshot(path=str(shot), full_page=True)
        prompts = page.evaluate("() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]"
                                ".map(p => p.textContent)")
        errors = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                               ".map(o => o.textContent).filter(t => /Error|Traceback/.test(t))"
                               ".map(t => t.trim().split('\\n').slice(-3).join(' | '))")
        return f"{name}: not done ({what}) within the timeout; prompts {prompts}; errors {errors}; {shot}"
    counts = page.evaluate(
        """() => ({
            cells: document.querySelectorAll('.jp-CodeCell').length,
            outputs: document.querySelectorAll('.jp-OutputArea-output').length,
            plots: document.querySelectorAll('.jp-OutputArea-output .js-plotly-plot .main-svg').length / 2,
            plotly_outputs: document.querySelectorAll('.jp-OutputArea-output .js-plotly-plot').length,
            tables: document.querySelectorAll('.jp-OutputArea-output table').length,
            errors: document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').length,
            tracebacks: document.querySelectorAll('.jp-OutputArea-output .jp-RenderedText[data-mime-type*="error"]').length,
            missing_renderer: [...document.querySelectorAll('.jp-OutputArea-output')]
                .filter(o => /No renderer could be found/.test(o.textContent)).length,
        })""")
    shot = out / f"{Path(name).stem}-{frontend}.png"
    page.screenshot(path=str(shot), full_page=True)
    return (f"{name}: {counts['cells']} code cells, {counts['outputs']} outputs, {counts['plotly_outputs']} plotly "
            f"figures drawn, {counts['tables']} HTML tables, {counts['tracebacks']} errors, "
            f"{counts['missing_renderer']} outputs without a renderer; {shot}")


def check_classic(page, base: str, name: str, out: Path, timeout_ms: int) -> str:
    """:func:`check` in the classic interface: every cell run through its notebook object once the
    kernel is connected, then the same counts (a figure counts as drawn when plotly.js has put its
    SVG in the output's ``div``)."""
    page.goto(base + FRONTENDS["nbclassic"][1].format(name=name, token=TOKEN))
    page.wait_for_function("() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel"
                           " && Jupyter.notebook.kernel.is_connected()", timeout=timeout_ms)
    page.evaluate("() => Jupyter.notebook.execute_all_cells()")
    what = _first_unmet(page, _waits(".code_cell .input_prompt", ".output_area div.mc-plot"), timeout_ms)
    if what:
        shot = out / f"{Path(name).stem}-nbclassic-unfinished.png"
        page.screenshot(path=str(shot), full_page=True)
        return f"{name}: not done ({what}) within the timeout; {shot}"
    counts = page.evaluate(
        """() => ({
            cells: document.querySelectorAll('.code_cell').length,
            outputs: document.querySelectorAll('.output_area').length,
            figures: document.querySelectorAll('.output_area div.mc-plot').length,
            drawn: [...document.querySelectorAll('.output_area div.mc-plot')].filter(d => d.querySelector('.main-svg')).length,
            traces: [...document.querySelectorAll('.output_area div.mc-plot')].map(d => (d.data || []).length),
            tables: document.querySelectorAll('.output_area table').length,
            errors: document.querySelectorAll('.output_area .output_error').length,
            stderr: document.querySelectorAll('.output_area .output_stderr').length,
            plotlyjs: [...document.querySelectorAll('.output_area script')].filter(s => s.textContent.length > 1000000).length,
        })""")
    shot = out / f"{Path(name).stem}-nbclassic.png"
    page.screenshot(path=str(shot), full_page=True)
    return (f"{name}: {counts['cells']} code cells, {counts['outputs']} outputs, {counts['drawn']} of "
            f"{counts['figures']} plotly figures drawn (traces {counts['traces']}), {counts['tables']} HTML tables, "
            f"{counts['errors']} errors, {counts['stderr']} stderr outputs, plotly.js inline in "
            f"{counts['plotlyjs']} output(s); {shot}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", required=True, help="a Python with the front end (and this checkout's dependencies)")
    p.add_argument("--frontend", choices=sorted(FRONTENDS), default="lab", help="the Jupyter front end (default: lab)")
    p.add_argument("--out", default=None, help="folder of the screenshots (default: a new temporary one)")
    p.add_argument("--notebook", action="append", help="a notebook of examples/ (default: every one)")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds for each wait")
    p.add_argument("--height", type=int, default=9000, help="the page's height in pixels (the screenshot's)")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    out = Path(args.out or tempfile.mkdtemp(prefix="mc-jupyterlab-"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mc-jupyterlab-notebooks-"))
    names = args.notebook or sorted(p.name for p in (ROOT / "examples").glob("*.ipynb"))
    for name in names:  # a copy: running the cells must not change the repository's notebooks
        shutil.copy(ROOT / "examples" / name, work / name)
    for extra in (ROOT / "examples").iterdir():
        if extra.suffix != ".ipynb" and not (work / extra.name).exists():
            (shutil.copytree if extra.is_dir() else shutil.copy)(extra, work / extra.name)
    # every cell in the page (no windowing: JupyterLab 4 otherwise draws only the cells in view), no news prompt
    settings = work / ".settings"
    for plugin, values in {"notebook-extension/tracker": {"windowingMode": "none"},
                           "apputils-extension/notification": {"fetchNews": "false"}}.items():
        path = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port = _free_port()
    lab = Path(args.python).with_name(FRONTENDS[args.frontend][0])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               JUPYTERLAB_SETTINGS_DIR=str(settings), JUPYTERLAB_WORKSPACES_DIR=str(work / ".workspaces"))
    server = subprocess.Popen([str(lab), "--no-browser", "--allow-root", f"--port={port}", f"--IdentityProvider.token={TOKEN}",
                               "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={work}",
                               "--LabApp.news_url=", "--LabApp.check_for_updates_class="
                               "jupyterlab.NeverCheckForUpdate"],
                              cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{base}/api/status?token={TOKEN}", time.monotonic() + args.timeout)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                         args=CHROMIUM_ARGS, headless=True)
            # tall enough for a whole notebook: the notebook scrolls inside its panel, not the page
            page = browser.new_page(viewport={"width": 1400, "height": args.height})
            for name in names:
                print(check(page, base, name, out, int(args.timeout * 1000), args.frontend), flush=True)
            browser.close()
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
