"""The order in which the suite's tests are handed to pytest-xdist's workers, and which modules go together.

``scripts/test.py`` runs ``pytest -n N --dist loadfile``: a worker takes a whole test module at a time, so
the module-scoped fixtures of a module (a Spark session per master, a PostgreSQL server, executed notebooks, a
prepared data set) start once. Modules are handed out in the order of :func:`longest_first`; the modules of
one entry of :data:`TOGETHER` are handed out as one (:class:`GroupedFileScheduling`)."""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling

#: test modules that pay one large cost the first time a process meets it, run by one worker so that it is
#: paid once per run rather than once per worker. ``ranx``: the modules calling ranx, whose numba typed
#: dictionaries and lists are compiled in every process that builds one (numba caches none of them on disk):
#: about 11 CPU s per process here (building a Qrels and a Run, ``evaluate``, ``fuse``).
TOGETHER = {
    "ranx": ("tests/test_fusion.py", "tests/test_paper_table.py", "tests/test_presets_libraries.py",
             "tests/test_presets_matrix.py", "tests/test_explain_matrix.py"),
}
GROUP_OF = {module: f"together:{name}" for name, modules in TOGETHER.items() for module in modules}


class GroupedFileScheduling(LoadFileScheduling):
    """pytest-xdist's ``--dist loadfile``, with the modules of one entry of :data:`TOGETHER` as one unit
    (one worker runs them all, one after the other, in collection order)."""

    def _split_scope(self, nodeid: str) -> str:
        module = super()._split_scope(nodeid)
        return GROUP_OF.get(module, module)


def make_scheduler(config, log):
    """The scheduler of ``--dist loadfile`` (:class:`GroupedFileScheduling`); None otherwise (pytest-xdist's
    own choice)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    return GroupedFileScheduling(config, log)


def longest_first(items: list) -> list:
    """``items`` with the tests marked ``spark`` first, then the modules of :data:`TOGETHER` (about two
    minutes of one worker's time together), otherwise in collection order. The Spark modules are the suite's
    longest (a session per master, minutes each): collected last, as their file names put them, they started
    when the other workers had little left and ran on alone at the end."""
    def rank(item) -> int:
        if item.get_closest_marker("spark") is not None:
            return 0
        return 1 if item.nodeid.split("::", 1)[0] in GROUP_OF else 2

    return sorted(items, key=rank)
