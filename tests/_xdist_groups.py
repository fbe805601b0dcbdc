"""The order in which the suite's tests are handed to pytest-xdist's workers.

``scripts/test.py`` runs ``pytest -n N --dist loadfile``: a worker takes a whole test module at a time, so
the module-scoped fixtures of a module (a Spark session per master, a PostgreSQL server, executed notebooks, a
prepared data set) start once. Modules are handed out in the order of :func:`longest_first`."""

from __future__ import annotations


def longest_first(items: list) -> list:
    """``items`` with the tests marked ``spark`` first, otherwise in collection order. Their modules
    are the suite's longest (a session per master, minutes each): collected last, as their file
    names put them, they started when the other workers had little left and ran on alone at the end."""
    return sorted(items, key=lambda item: 0 if item.get_closest_marker("spark") is not None else 1)
