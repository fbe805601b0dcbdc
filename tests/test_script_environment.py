"""The environment ``scripts/test.py`` gives pytest: the bytecode cache on, the rest kept."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("scripts_test_env", ROOT / "scripts" / "test.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)


def test_the_bytecode_cache_is_on_and_everything_else_is_kept():
    given = {"PYTHONDONTWRITEBYTECODE": "1", "CI": "true", "PATH": "/usr/bin", "METRICS_CORE_TEST_ENV": "old"}
    env = script.pytest_environment("locked", given)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env == {"CI": "true", "PATH": "/usr/bin", "METRICS_CORE_TEST_ENV": "locked"}
    assert given["PYTHONDONTWRITEBYTECODE"] == "1"  # the caller's mapping is not changed


def test_a_process_in_that_environment_writes_the_bytecode_of_what_it_imports(tmp_path):
    (tmp_path / "probe_module.py").write_text("VALUE = 1\n")
    env = script.pytest_environment("", {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(tmp_path)})
    done = subprocess.run([sys.executable, "-c", "import probe_module, sys; print(sys.dont_write_bytecode)"],
                          env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
    assert list((tmp_path / "__pycache__").glob("probe_module.*.pyc"))
