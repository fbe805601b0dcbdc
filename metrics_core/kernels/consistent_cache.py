"""numba's disk cache made safe for processes that compile one function at the same time.

numba keeps the compiled versions of a function (one per argument types) in an index file,
``key -> data file name``, and one data file per version, numbered in the order they were
saved (``f-12.py311.1.nbc``, ``f-12.py311.2.nbc``, ...). To save a version, a process reads the
index, takes the first number the index does not use, writes the index, then the data file.
Two processes that compile two argument types of one function at once (two test workers, the
dashboard beside its background warm-up, two command lines on a fresh install) can both take
number 1: one's index then names the data file the other wrote, and every later process that
loads this version runs code compiled for other argument types. The numbers it returns are
wrong, silently (seen with ranx: queries matched with the wrong lists).

:class:`ConsistentCacheFile` saves and loads differently, with the same files and index format:

- a data file is named after a digest of its key (argument types, CPU, bytecode), so two keys
  never share one, and it is written (atomically, as numba writes) before the index names it;
- the index is read, updated and written under an exclusive ``flock`` on a file beside it
  (``<index>.lock``), so no process's entry is lost; where ``flock`` is missing a lost entry
  only means one more compile;
- a loaded version whose signature is not the key's is ignored (compiled again and saved over),
  whoever wrote it: an index written by numba's own saver before this class was used is read
  safely too.

Every kernel of this package uses it (:func:`use_for`, called when a dispatcher is made, which
also makes a saved version stale when a source the kernel depends on changed); the
test suite applies it to every numba function of its processes (:func:`use_everywhere`), the
reference libraries' included.

A second flaw meets processes that load each other's compiled code. numba names a compiled
function by module, qualified name, argument types and an id taken from a counter that starts
at 1 in every process; the name must be unique, as the linker merges functions of one name.
Two processes that compile the same sequence get the same ids, so two different bodies (one
helper made for two callers, closures of one factory) can share a name across their cached
files; a process that loads both runs one body for the other (reported to numba as #10486). With
:func:`use_random_function_ids`, called when this package loads numba, every function compiled
in the process takes a random 122-bit id instead, which no other process repeats.
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid

from numba.core import caching

try:
    import fcntl
except ImportError:  # not on Windows: no lock (see the module docstring)
    fcntl = None


def data_name(cache_file, key) -> str:
    """The data file of ``key``: the index's base name and a digest of the key's text."""
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:24]
    return f"{cache_file._index_name[: -len('.nbi')]}.{digest}.nbc"


@contextlib.contextmanager
def index_lock(cache_file):
    """Hold an exclusive ``flock`` on ``<index path>.lock`` (nothing where it cannot be taken)."""
    handle = None
    if fcntl is not None:
        try:
            handle = open(cache_file._index_path + ".lock", "a+b")
        except OSError:
            handle = None
    if handle is None:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def signature_matches(key, data) -> bool:
    """Whether ``data`` (a saved compile result) was compiled for the argument types of ``key``.

    numba's compile results store their signature fourth; a form without one (other caches) is
    taken as it is."""
    wanted = key[0] if isinstance(key, tuple) and key else None
    wanted = getattr(wanted, "args", wanted)
    stored = getattr(data[3], "args", None) if isinstance(data, tuple) and len(data) > 3 else None
    if stored is None or not isinstance(wanted, tuple):
        return True
    return tuple(stored) == wanted


def save(cache_file, key, data) -> None:
    """Write ``data`` to its own data file, then name it in the index under the lock."""
    name = data_name(cache_file, key)
    cache_file._save_data(name, data)
    with index_lock(cache_file):
        overloads = cache_file._load_index()
        if overloads.get(key) != name:
            overloads[key] = name
            cache_file._save_index(overloads)


def load(cache_file, key):
    """The saved data of ``key``, or None: not in the index, its file gone, or compiled for other types."""
    name = cache_file._load_index().get(key)
    if name is None:
        return None
    try:
        data = cache_file._load_data(name)
    except OSError:  # removed while the index still names it
        return None
    return data if signature_matches(key, data) else None


class ConsistentCacheFile(caching.IndexDataCacheFile):
    """numba's index-and-data cache file with :func:`save` and :func:`load` (see the module docstring)."""

    def save(self, key, data):
        save(self, key, data)

    def load(self, key):
        return load(self, key)


def use_for(dispatcher, depends_on: str | None = None) -> None:
    """Make ``dispatcher``'s disk cache a :class:`ConsistentCacheFile` (when it has numba's usual one).

    ``depends_on``: a digest of the other sources the function's compiled code is made of (the
    functions it calls or inlines). numba checks only the defining file's size and time before it
    loads a saved version; with ``depends_on`` the index is also stale when the digest differs, so
    an edit to a helper in another file compiles the function again instead of loading old code."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if type(cache_file) is caching.IndexDataCacheFile:
        cache_file.__class__ = ConsistentCacheFile
        if depends_on is not None:
            cache_file._source_stamp = (cache_file._source_stamp, depends_on)


def use_everywhere() -> None:
    """Give every numba cache of this process, of any library, :func:`save` and :func:`load`, and every
    function it compiles a random id."""
    caching.IndexDataCacheFile.save = save
    caching.IndexDataCacheFile.load = load
    use_random_function_ids()


class RandomIds:
    """An endless iterator of random 122-bit integers (``uuid4``), in place of numba's id counter."""

    def __iter__(self):
        return self

    def __next__(self) -> int:
        return uuid.uuid4().int


def use_random_function_ids() -> None:
    """Give every function numba compiles in this process from now on a random id (see the module docstring)."""
    from numba.core import bytecode

    if not isinstance(bytecode.FunctionIdentity._unique_ids, RandomIds):
        bytecode.FunctionIdentity._unique_ids = RandomIds()
