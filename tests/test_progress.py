"""Signs of life: the command line shows its stages on a terminal's stderr (a real pseudo-terminal
here) and its standard output stays exactly what it is without them; with stderr not a terminal,
or under --quiet, nothing is added. A first compile of a kernel is said once; mc.evaluate's
progress=True shows the stages without changing a number."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import _deadlines as deadlines
import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core import progress

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("progress")
    rng = np.random.default_rng(0)
    rows = [(f"u{u}", f"i{i}", float(rng.random())) for u in range(300) for i in rng.choice(80, 15, replace=False)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    run.to_csv(folder / "run.csv", index=False)
    run.sample(frac=0.2, random_state=0)[["user_id", "item_id"]].assign(relevance=1).to_csv(folder / "qrels.csv",
                                                                                           index=False)
    return folder


@pytest.fixture(scope="module")
def plain(files) -> subprocess.CompletedProcess:
    """The command run with stderr on a pipe, no option added: what every other run is held to."""
    done = subprocess.run(_command(files), capture_output=True, text=True, cwd=REPO, env=_env(),
                          timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stderr
    return done


def _command(files: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "metrics_core", "compare", "--qrels", str(files / "qrels.csv"),
            "--run", str(files / "run.csv"), "--run", str(files / "run.csv"), "--metrics", "ndcg@10,recall@10",
            *extra]


def _env(delay: str = "0") -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
                **{progress.DELAY_ENV: delay})


def _on_a_terminal(cmd: list[str], env: dict) -> tuple[int, str, str]:
    """Run ``cmd`` with stderr on a pseudo-terminal and stdout on a pipe: (exit, stdout, terminal text)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a 120-column terminal
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, cwd=REPO, env=env)
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], deadlines.SUBPROCESS)
        if not ready:
            proc.kill()
            raise AssertionError("the command wrote nothing on its terminal within the deadline")
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the command exited: its terminal is closed
            break
        if not chunk:
            break
        shown += chunk
    out = proc.stdout.read().decode()
    code = proc.wait(timeout=deadlines.SUBPROCESS)
    os.close(master)
    return code, out, shown.decode(errors="replace")


def test_a_terminal_shows_the_stages_and_stdout_is_unchanged(files, plain):
    code, out, shown = _on_a_terminal(_command(files), _env())
    assert code == 0
    assert out == plain.stdout  # the results, to the last line, as without progress
    for stage in ("metrics-core: starting: loading the libraries", "metrics-core: starting: loading the commands",
                  "metrics-core: reading ", "run.csv", "metrics-core: preparing ", "metrics-core: evaluating ndcg@10",
                  "testing 2 comparison(s)", "resampling: 1,000 bootstrap resamples"):
        assert stage in shown, (stage, shown)
    assert "\r" in shown  # drawn in place and erased: no stage line is left behind


def test_not_a_terminal_or_quiet_adds_nothing(files, plain):
    piped = plain
    assert piped.returncode == 0 and "metrics-core:" not in piped.stderr and "\r" not in piped.stderr
    code, out, shown = _on_a_terminal(_command(files, "--quiet"), _env())
    assert code == 0 and out == piped.stdout and "metrics-core:" not in shown


def test_progress_flag_shows_the_startup_and_the_stages_on_a_pipe(files, plain):
    """``--progress`` draws the same lines on a standard error that is not a terminal (a log), from
    the startup on (the libraries loading, before any stage); stdout is unchanged and ``--quiet``
    still shows nothing."""
    import io

    forced = subprocess.run(_command(files, "--progress"), capture_output=True, text=True, cwd=REPO, env=_env(),
                            timeout=deadlines.SUBPROCESS)
    assert forced.returncode == 0 and forced.stdout == plain.stdout
    err = forced.stderr
    order = [err.find(s) for s in ("metrics-core: starting: loading the libraries (pandas, NumPy, numba, pyarrow) (",
                                   "metrics-core: starting: loading the commands (", "metrics-core: reading ",
                                   "metrics-core: evaluating ndcg@10")]
    assert -1 not in order and order == sorted(order), err  # the startup first, then the command's stages
    assert all(line in err for line in plain.stderr.splitlines())  # every note and warning kept
    assert progress.for_terminal(io.StringIO(), quiet=True, force=True) is None  # --quiet wins over --progress
    default = float(os.environ.get(progress.DELAY_ENV, progress.DELAY))
    assert progress.for_terminal(io.StringIO(), force=True).delay == default
    assert progress.for_terminal(io.StringIO(), force=True, at_once=True).delay == 0  # after the startup line


def test_only_the_command_line_process_announces_itself():
    from metrics_core import launch

    py = "/usr/bin/python3"
    assert launch.is_command_line([py, "-m", "metrics_core", "evaluate"])
    assert launch.is_command_line([py, "-X", "importtime", "-mmetrics_core", "compare"])
    assert launch.is_command_line([py, "-m", "metrics_core.cli", "report"])
    assert launch.is_command_line([py, "/venv/bin/metrics-core", "check"])
    assert not launch.is_command_line([py, "-m", "pytest", "-m", "metrics_core"])  # pytest's own -m
    assert not launch.is_command_line([py, "-c", "import metrics_core"])
    assert not launch.is_command_line([py, "notebook.py", "metrics-core"])
    assert not launch.is_command_line([py, "-m", "streamlit", "run", "app.py"])

    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty
    assert launch.wanted(["evaluate", "--run", "r.csv"], Stream(True))
    assert not launch.wanted(["evaluate", "--run", "r.csv"], Stream(False))
    assert launch.wanted(["evaluate", "--progress"], Stream(False))
    assert not launch.wanted(["evaluate", "--progress", "-q"], Stream(True))
    assert not launch.wanted(["evaluate", "--quiet"], Stream(True))
    assert not launch.wanted(["evaluate", "--", "--progress"], Stream(False))  # after "--": a value, not an option


def test_a_quick_stage_under_the_delay_is_not_shown(files):
    code, out, shown = _on_a_terminal(_command(files), _env(delay="600"))
    assert code == 0 and "metrics-core:" not in shown


def test_a_first_compile_is_said_once():
    import io

    from numba import njit

    stream = io.StringIO()
    progress._compiling["said"] = False
    try:
        with progress.active(progress.Reporter(stream, delay=600)):
            assert njit(lambda x: x + 1)(1) == 2  # a new function: numba compiles it
            assert njit(lambda x: x * 3)(2) == 6
        assert stream.getvalue().count(progress.COMPILING) == 1
    finally:
        progress._compiling["said"] = True
    quiet = io.StringIO()
    with progress.active(None):
        njit(lambda x: x - 1)(1)
    assert quiet.getvalue() == ""


def test_evaluate_progress_in_a_notebook_changes_no_number(files, capsys, monkeypatch):
    monkeypatch.setenv(progress.DELAY_ENV, "0")
    run, qrels = pd.read_csv(files / "run.csv"), pd.read_csv(files / "qrels.csv")
    quiet = mc.evaluate(run, qrels, ["ndcg@10", "recall@5"])
    assert "metrics-core:" not in capsys.readouterr().err
    shown = mc.evaluate(run, qrels, ["ndcg@10", "recall@5"], progress=True)
    err = capsys.readouterr().err
    assert "metrics-core: evaluating ndcg@10, recall@5" in err and "metrics-core: preparing run" in err
    assert shown.summary == quiet.summary
    pd.testing.assert_frame_equal(shown.per_user, quiet.per_user)


def test_segment_comparisons_count_every_segment_test_once():
    """``segment_rows`` reports one stage counting segment tests: every segment (at most
    ``max_segments`` per attribute, a segment too small to test included) x metric x pair, counted
    by hand here; the randomization test counts them one by one, the t-test a block at a time."""
    import contextlib

    from metrics_core.analysis.segment_compare import attribute_labels, segment_rows

    class Recorder:
        def __init__(self):
            self.stages = []

        @contextlib.contextmanager
        def stage(self, text, total=None, unit="it"):
            seen = {"text": text, "total": total, "unit": unit, "updates": []}
            self.stages.append(seen)

            class Count:
                def update(self, n=1):
                    seen["updates"].append(n)
            yield Count()

        def say(self, text):
            pass

    rng = np.random.default_rng(3)
    users = [f"u{i}" for i in range(60)]
    tables = {m: pd.DataFrame({"ndcg@10": rng.random(60), "recall@10": rng.random(60)}, index=users)
              for m in ("a", "b", "c")}
    # tier: 3 segments; city: 5 segments, one of a single user (tested for nothing: fewer than 2 users)
    attrs = pd.DataFrame({"user_id": users, "tier": [("x", "y", "z")[i % 3] for i in range(60)],
                          "city": ["solo"] + [("p", "q", "r", "s")[i % 4] for i in range(59)]})
    for test, blocks in (("randomization", False), ("t", True)):
        recorder = Recorder()
        with progress.active(recorder):
            rows = segment_rows(tables, attribute_labels(attrs), baseline="a", test=test, n_permutations=200,
                                max_segments=5)
        [seen] = recorder.stages
        assert seen["unit"] == "segment test" and seen["total"] == (3 + 5) * 2 * 2  # segments x metrics x pairs
        assert sum(seen["updates"]) == seen["total"]
        assert len(rows) == (3 + 4) * 2 * 2  # the single user's segment has no row
        assert max(seen["updates"]) == (4 if blocks else 1)  # a t-test block is one attribute's segments
