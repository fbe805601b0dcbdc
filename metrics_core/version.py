"""The package's version, written once: ``metrics_core.__version__``, the package metadata
(``pyproject.toml`` reads it here without importing the package), the command line's ``--version`` and
the MLflow parameter ``metrics_core_version`` read it."""

__version__ = "0.1.0"
