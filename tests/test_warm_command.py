"""``metrics-core warm``: the README's install step that fills numba's kernel cache.

The test session's controller has already run it (``tests/conftest.py``), so the cache is complete
here: the command then only checks the stamp. A failed compile is one line and exit status 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from metrics_core import cli, warmup
from metrics_core.kernels import _jit, cache_stamp

ROOT = Path(__file__).resolve().parents[1]


def test_on_a_complete_cache_it_says_so_and_compiles_nothing(capsys, monkeypatch):
    monkeypatch.setattr(cache_stamp, "is_current", lambda: True)
    exercised = []
    monkeypatch.setattr(warmup, "_exercise", lambda mc, reverse=False: exercised.append(mc))
    assert cli.main(["warm"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("metrics_core kernel cache already complete"), out
    assert exercised == []


def test_an_incomplete_cache_runs_both_variants_and_writes_the_stamp(capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(cache_stamp, "is_current", lambda: False)
    monkeypatch.setattr(cache_stamp, "write", lambda: calls.append("stamp"))
    monkeypatch.setattr(warmup, "_exercise", lambda mc, reverse=False: calls.append(f"here {_jit._FORCED_VARIANT.get()}" + (" reversed" if reverse else "")))
    monkeypatch.setattr(warmup, "_start_variant", lambda variant: calls.append(f"child {variant}") or variant)
    monkeypatch.setattr(warmup, "_finish", lambda child: None)
    assert cli.main(["warm", "--jobs", "2", "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    # one variant here, the other in a child process at the same time (helped from its other end), then the stamp
    assert calls == ["child parallel", "here serial", "here parallel reversed", "stamp"]


def test_a_failed_compile_is_one_line_and_exit_2(capsys, monkeypatch):
    monkeypatch.setattr(cache_stamp, "is_current", lambda: False)

    def fail(**_):
        raise RuntimeError("the parallel kernels' warm-up failed: LoweringError")

    monkeypatch.setattr(warmup, "warmup", fail)
    assert cli.main(["warm"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the parallel kernels' warm-up failed"), err
    assert "metrics-core warm again" in err[0]


def test_jobs_below_one_is_refused_in_one_line(capsys):
    assert cli.main(["warm", "--jobs", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --jobs must be 1 or more, got 0"]


def test_as_a_process_on_the_session_cache():
    """The command as the README runs it, on the cache the session's controller completed."""
    done = subprocess.run([sys.executable, "-m", "metrics_core", "warm"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"metrics_core kernel cache (already )?complete( in .+)? \(\d+\.\d s\)\n", done.stdout)


def test_the_readme_install_command_warms_before_the_dashboard_starts():
    readme = (ROOT / "README.md").read_text()
    install = next(line for line in readme.splitlines() if line.startswith("python3 -m pip install --require-hashes"))
    steps = [step.strip() for step in install.split("&&")]
    assert "python3 -m metrics_core warm" in steps
    assert steps.index("python3 -m metrics_core warm") < steps.index("python3 -m streamlit run dashboard/serve.py")
