"""The version is written once, in ``metrics_core/version.py``; the package (``mc.__version__``), its metadata
and the CLI read it."""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path

import metrics_core as mc
from metrics_core.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_pyproject_reads_the_version_from_the_package():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "metrics_core.version.__version__"}
    from setuptools.config.pyprojecttoml import read_configuration

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = read_configuration(REPO / "pyproject.toml", expand=True)["project"]["version"]
    assert built == mc.__version__


def test_the_command_line_prints_the_same_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"metrics-core {mc.__version__}"
