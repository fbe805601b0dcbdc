"""Subcommands of the ``metrics-core`` command line, one module each.

Each module exposes ``register(subparsers)``; :mod:`metrics_core.cli` lists
them in ``COMMANDS``. Shared pieces: :mod:`._output` (tables, CSV, JSON,
writing frames) and, in :mod:`.evaluate`, the input options, reading runs
and ground truth, and model names (``add_input_arguments``,
``add_convention_arguments``, ``load_inputs``, ``model_names``).
"""
