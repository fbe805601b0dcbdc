"""``python -m metrics_core ...`` runs the command line (see :mod:`metrics_core.cli`)."""

from .cli import entry

entry()
