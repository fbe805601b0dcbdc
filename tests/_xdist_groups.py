"""How the suite's tests are grouped on pytest-xdist workers (``--dist loadgroup``, applied in
``tests/conftest.py``)."""

from __future__ import annotations

# Modules whose tests are long and independent of each other: pytest-xdist spreads their tests
# over the workers. Every other module runs whole on one worker (``--dist loadgroup``), so its
# module-scoped fixtures (a PostgreSQL server, a prepared data set) start once; a module's Spark
# tests run as two groups, one per master, each starting its own session.
SPREAD_MODULES = {"test_dashboard_random_walk.py"}
# Modules calling ranx (directly or through tests/test_presets_matrix.py's library functions) run as one
# group on one worker: on a new virtual environment ranx compiles its numba functions on first use (about
# 75 CPU s; some of them, not cacheable, again in every process, about 9 CPU s), once instead of once per worker.
REFERENCE_LIBRARY_MODULES = {"test_explain_matrix.py", "test_fusion.py", "test_paper_table.py",
                             "test_presets_libraries.py", "test_presets_matrix.py"}
REFERENCE_LIBRARY_GROUP = "reference-libraries"


def xdist_group_of(item) -> str | None:
    """The group a test runs in: its module, or the module and Spark master for a test taking the
    module-scoped ``spark`` fixture (the two masters' sessions are independent: each group starts
    one), :data:`REFERENCE_LIBRARY_GROUP` for a module of :data:`REFERENCE_LIBRARY_MODULES`, or None
    (any worker) for a module of :data:`SPREAD_MODULES`."""
    if item.path.name in SPREAD_MODULES:
        return None
    if item.path.name in REFERENCE_LIBRARY_MODULES:
        return REFERENCE_LIBRARY_GROUP
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "spark" in callspec.params:
        return f"{item.path.name}[{callspec.params['spark']}]"
    return item.path.name


def longest_first(items: list) -> list:
    """``items`` with the tests marked ``spark`` first, otherwise in collection order. Their groups
    are the suite's longest (a session per master, minutes each): collected last, as their file
    names put them, they started when the other workers had little left and ran on alone at the end."""
    return sorted(items, key=lambda item: 0 if item.get_closest_marker("spark") is not None else 1)
