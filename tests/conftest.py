"""Shared fixtures for the metrics_core test suite.

Reference material lives next to the repository (CI clones the repo next to
``shared/``): ``<repo>/../shared/seeds`` and ``<repo>/../shared/conformance``.
Set ``METRICS_CORE_SHARED`` to point elsewhere. A missing folder is a test
failure with a clear message, never a silent skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def shared_dir() -> Path:
    """The ``shared/`` folder holding seeds and conformance fixtures."""
    env = os.environ.get("METRICS_CORE_SHARED")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def trec_dir() -> Path:
    """trec_eval's own test fixtures (qrels.test, results.test, out.test.aq, ...)."""
    path = shared_dir() / "conformance" / "trec_eval"
    if not (path / "out.test.aq").is_file():
        pytest.fail(
            f"trec_eval fixtures not found at {path}: clone the repository next to "
            "shared/ or set METRICS_CORE_SHARED to the shared folder"
        )
    return path


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    """The five seed articles with the worked examples."""
    path = shared_dir() / "seeds"
    if not path.is_dir() or len(list(path.glob("*.txt"))) < 5:
        pytest.fail(
            f"seed articles not found at {path}: clone the repository next to "
            "shared/ or set METRICS_CORE_SHARED to the shared folder"
        )
    return path


def pytest_sessionstart(session):
    """Compile (or load from numba's disk cache) every kernel before any test runs, so the
    dashboard server started by the browser tests finds them cached instead of compiling
    them inside its first page load."""
    from metrics_core.warmup import warmup

    warmup()
