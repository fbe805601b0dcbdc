"""``python -m metrics_core ...`` runs the command line (see :mod:`metrics_core.cli`)."""

import sys

from .cli import main

sys.exit(main())
