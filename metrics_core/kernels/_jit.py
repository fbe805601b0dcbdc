"""Shared numba settings: compiled kernels are cached on disk (first call of a
process pays no compile cost once the cache is warm).

A parallel kernel (``@njit(parallel=True, work=..., writes=...)``) is compiled
as two variants of the same source: a serial one for small inputs and a
parallel one for large inputs. The serial variant compiles several times
faster (no parfor passes), so a first call on a fresh installation with a
small input answers quickly; both variants compute every output in the same
order (per user, or per explicit chunk), so their results are identical.
Array inputs (every array argument not named in ``writes``, and the arrays
of a tuple argument) are passed as read-only views, so that read-only (Arrow, memory-mapped) and writable
(NumPy-built) inputs share one compiled version instead of compiling twice.

numba is imported on the first kernel call, not when a module defining kernels is imported:
:func:`njit` returns a :class:`LazyKernel` (or a :class:`SizedKernel`) that holds the Python
function and makes numba's dispatcher when it is first called or asked for a dispatcher's
attribute. So ``import metrics_core``, ``metrics_core.analysis.stats``, the registry's
declarations and the command line's ``--help`` load neither numba nor a compiled kernel
(about a second of CPU saved per process that never runs one). A kernel module writes
``from ._jit import nb, njit``: ``nb`` stands for the numba module (its attributes load numba
when read from Python) and, before numba compiles a kernel, every name of the kernel's code that
refers to ``nb`` or to another lazy kernel is bound to numba or to that kernel's dispatcher in
the module's namespace (:func:`bind_globals`), so numba compiles exactly the code it compiled
when the dispatchers were made at import (same inlining, same disk cache entries).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect
import os
import sys
import threading
import time
import types

import numpy as np


def _threadsafe_layer_available() -> bool:
    """Whether numba can use a thread-safe threading layer (TBB or OpenMP).

    Streamlit runs each session's script in its own thread, so two sessions can
    call a parallel kernel at once; numba's default 'workqueue' layer aborts the
    process when that happens.
    """
    for module in ("numba.np.ufunc.tbbpool", "numba.np.ufunc.omppool"):
        try:
            importlib.import_module(module)
            return True
        except ImportError:
            continue
    return False


#: whether numba runs parallel kernels on a thread-safe layer (None until numba is loaded)
THREADSAFE: bool | None = None
_LOCK = threading.RLock()
_LOADING = threading.RLock()
_numba: types.ModuleType | None = None
_ready = False  # numba loaded and every callback of when_loaded run
#: functions called with the numba module once it is loaded (:func:`when_loaded`)
_ON_LOAD: list = []


#: Modules numba imports while it loads, for features no kernel of this package uses, and what they
#: cost a process that runs one kernel: ``scipy.linalg`` (about 0.3 CPU s; numba imports it to learn
#: whether BLAS exists, which only decides how ``np.cov``/``np.corrcoef`` form an inner product; a
#: kernel calling ``np.dot`` or ``np.linalg`` imports it again when compiled) and ``cffi`` (about 0.1
#: CPU s; numba's typing of cffi functions passed to a kernel). While numba loads they are hidden from
#: the loading thread only (:func:`_unoffered`): numba takes them as not installed; every other thread,
#: and this one afterwards, imports them as usual.
NOT_FOR_NUMBA = frozenset({"scipy.linalg", "cffi"})
#: numba's configuration file, read from the working directory with ``yaml`` (about 0.04 CPU s to
#: import) when it exists: without one there, ``yaml`` is hidden from numba too
NUMBA_CONFIG_FILE = ".numba_config.yaml"


def _not_for_numba() -> frozenset[str]:
    """The modules hidden from numba while it loads (:data:`NOT_FOR_NUMBA`, and ``yaml`` when no
    :data:`NUMBA_CONFIG_FILE` is there to read)."""
    return NOT_FOR_NUMBA if os.path.isfile(NUMBA_CONFIG_FILE) else NOT_FOR_NUMBA | {"yaml"}


class _Unoffered:
    """An import finder that refuses ``names`` to one thread (see :data:`NOT_FOR_NUMBA`)."""

    def __init__(self, names: frozenset[str]):
        self.names = names
        self.thread = threading.get_ident()

    def find_spec(self, name, path=None, target=None):
        if name in self.names and threading.get_ident() == self.thread:
            raise ImportError(f"{name} is not offered to numba while it loads", name=name)
        return None


@contextlib.contextmanager
def _unoffered(names: frozenset[str]):
    """Inside the block, importing one of ``names`` (not imported yet) fails in the calling thread."""
    finder = _Unoffered(frozenset(n for n in names if n not in sys.modules))
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def load_numba() -> types.ModuleType:
    """The numba module, imported and set up on the first call of the process: the thread-safe
    threading layer when one is installed, the shipped kernel cache when the package is imported
    from a zip (Spark executors), then every function given to :func:`when_loaded`."""
    global _numba, _ready, THREADSAFE, nb
    if _ready:
        return _numba
    with _LOADING:
        if _numba is not None:  # set up, or being set up by this thread (a callback needs a kernel)
            return _numba
        with _unoffered(_not_for_numba()):
            import numba
            from numba.core.registry import cpu_target

            cpu_target.target_context.refresh()  # numba's registries, loaded while the modules above are hidden
        from .consistent_cache import use_random_function_ids

        use_random_function_ids()  # before the first compile: names no other process gives its functions

        THREADSAFE = _threadsafe_layer_available()
        if THREADSAFE:
            numba.config.THREADING_LAYER = "threadsafe"
        if ".zip" + os.sep in __file__:  # imported from a zip, as shipped to Spark executors
            from ._zip_cache import use_shipped_kernel_cache

            use_shipped_kernel_cache()
        nb = _numba = numba  # modules imported from now on bind the module itself
        for callback in _ON_LOAD:  # other threads wait for these at the lock
            callback(numba)
        _ready = True
    return numba


def numba_loaded() -> bool:
    """Whether this process has loaded numba through :func:`load_numba`."""
    return _ready


def when_loaded(callback) -> None:
    """Call ``callback(numba)`` once numba is loaded: now if it is, else when :func:`load_numba` loads it."""
    with _LOADING:
        if not _ready:
            _ON_LOAD.append(callback)
            return
    callback(_numba)


class _NumbaOnDemand:
    """Stands for the numba module in a kernel module's namespace until numba is loaded: reading
    an attribute from Python loads numba; inside a kernel numba sees the module itself
    (:func:`bind_globals` binds the name before the kernel is compiled)."""

    #: how :mod:`.interpreted` (which does not import this module) tells the stand-in apart
    stands_for_numba = True

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(load_numba(), name)

    def __repr__(self) -> str:
        return "<numba, loaded on the first kernel call>"


#: the numba module for kernel modules (``from ._jit import nb``): a stand-in until numba is loaded
nb = _NumbaOnDemand()


def _code_names(code: types.CodeType) -> set[str]:
    """Every global name ``code`` and the functions defined inside it may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


def bind_globals(fn) -> None:
    """Bind, in ``fn``'s module namespace, each name ``fn`` reads that stands for numba or for a
    :class:`LazyKernel` to numba or to that kernel's dispatcher, so that numba compiles ``fn`` as
    it would with the dispatchers made at import (a dispatcher with ``inline="always"`` is inlined)."""
    namespace = fn.__globals__
    for name in _code_names(fn.__code__):
        value = namespace.get(name)
        if isinstance(value, _NumbaOnDemand):
            namespace[name] = load_numba()
        elif isinstance(value, LazyKernel):
            namespace[name] = value.dispatcher()


class LazyKernel:
    """A compiled kernel whose numba dispatcher is made on first use: calling it, reading one of
    the dispatcher's attributes (``py_func`` excepted, the Python function is kept here) or
    compiling a kernel that calls it. Calls are forwarded to the dispatcher unchanged."""

    #: how :mod:`.interpreted` (which does not import this module) tells a kernel apart
    is_package_kernel = True

    #: every kernel defined so far
    instances: list["LazyKernel"] = []

    def __init__(self, fn, options: dict):
        self.py_func = fn
        self.options = dict(options)
        self._dispatcher = None
        self._called = False  # called compiled from Python inside interpret_until_compiled
        functools.update_wrapper(self, fn)
        LazyKernel.instances.append(self)

    def dispatcher(self):
        """numba's dispatcher of this kernel (made, with numba loaded, on the first call)."""
        if self._dispatcher is None:
            numba = load_numba()
            with _LOADING:
                if self._dispatcher is None:
                    dispatcher = numba.njit(**self.options)(self.py_func)
                    if self.options.get("cache"):
                        from . import kernel_sources
                        from .consistent_cache import use_for

                        # safe when another process compiles this kernel at once; stale when any kernel source changed
                        use_for(dispatcher, depends_on=kernel_sources.digest())
                    self._dispatcher = dispatcher
                    bind_globals(self.py_func)  # after: a kernel that calls itself finds its dispatcher
        return self._dispatcher

    def __call__(self, *args, **kwargs):
        if _INTERPRET_MAX_WORK.get() and not self._called:
            if not kwargs and _runs_as_python(self, self.py_func, _largest_input(args)):
                from .interpreted import run

                return run(self.py_func, args)
            self._called = True
        return (self._dispatcher or self.dispatcher())(*args, **kwargs)

    def cached_on_disk(self) -> bool:
        """Whether numba's on-disk cache holds a compiled version of this kernel for any argument
        types, read without loading numba where the cache's place is known without it
        (:func:`.interpreted.index_path`)."""
        if not _ready:
            from .interpreted import index_path

            path = index_path(self, NUMBA_CONFIG_FILE)
            if path is not None:
                return os.path.exists(path)
        return os.path.exists(self.dispatcher()._cache._cache_file._index_path)

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_dispatcher", "py_func", "options", "_called"):
            raise AttributeError(name)
        return getattr(self.dispatcher(), name)

    def __reduce__(self):
        return _kernel_named, (self.py_func.__module__, self.py_func.__qualname__)

    def __repr__(self) -> str:
        state = "made" if self._dispatcher is not None else "not made yet"
        return f"<kernel {self.py_func.__module__}.{self.py_func.__qualname__} ({state})>"


def _kernel_named(module: str, qualname: str):
    """The kernel ``qualname`` of ``module`` (how a :class:`LazyKernel` is unpickled)."""
    value = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


def kernel_guard():
    """Context manager serialising kernel calls when no thread-safe layer exists (loads numba).
    Inside :func:`interpret_until_compiled` it does not load numba: while numba is not loaded it
    serialises (the kernels may run as Python, or load numba inside the block)."""
    if not _ready and _INTERPRET_MAX_WORK.get():
        return _LOCK
    load_numba()
    return contextlib.nullcontext() if THREADSAFE else _LOCK


# Inputs with at least this many elements (the size of a kernel's ``work`` argument) run
# the parallel variant; smaller ones the serial variant (a few milliseconds at most).
PARALLEL_MIN_WORK = 250_000
SERIAL, PARALLEL = "serial", "parallel"
_FORCED_VARIANT: contextvars.ContextVar[str | None] = contextvars.ContextVar("forced_variant", default=None)


@contextlib.contextmanager
def use_variant(variant: str | None):
    """Run every parallel kernel called inside the block as ``variant`` (``"serial"`` or
    ``"parallel"``) whatever the input size; ``None`` restores the size rule."""
    if variant not in (None, SERIAL, PARALLEL):
        raise ValueError(f"variant must be {SERIAL!r}, {PARALLEL!r} or None, got {variant!r}")
    token = _FORCED_VARIANT.set(variant)
    try:
        yield
    finally:
        _FORCED_VARIANT.reset(token)


#: Inside :func:`interpret_until_compiled`, a kernel whose input is at most this many elements (a
#: parallel kernel's ``work``, else its longest array argument) runs as Python while it is not
#: compiled. Interpreting costs time per element, compiling a fixed time. The five-metric evaluate of
#: ``benchmarks/cold_start.py`` on a fresh install took 1.2 CPU s in all at 22,000 rows, 1.4 at 50,000
#: (run and ground truth; the kernels 0.3 and 0.5 of it), 3.6 at 55,000 rows (the layout kernel as Python,
#: 1.7 s, past the plain layout's 50,000 rows), against about 26 CPU s compiling what it runs; above
#: this limit the compile is paid once and the cache serves every later command instead.
INTERPRET_MAX_WORK = 50_000
#: Inside :func:`interpret_until_compiled`, while this process has not loaded numba, a kernel whose input is
#: at most this many elements runs as Python even when numba's disk cache holds it compiled: loading numba and
#: the cached kernels costs a fixed 0.5-0.7 CPU s, more than interpreting a small input. Measured with a
#: complete cache at 20,000 rows (``benchmarks/cold_start.py``'s pair, CPU s of the kernels' calls): five
#: metrics 0.28 as Python against 0.75 loading numba and the kernels, 27 metrics 0.48 against 0.93; at 50,000
#: rows about even (five metrics 0.65 against 0.78). Once a larger call has loaded numba, every cached kernel
#: runs compiled.
INTERPRET_CACHED_MAX_WORK = 30_000
_INTERPRET_MAX_WORK: contextvars.ContextVar[int] = contextvars.ContextVar("interpret_until_compiled", default=0)


@contextlib.contextmanager
def interpret_until_compiled(max_work: int | None = None):
    """Inside the block, a parallel kernel called with ``work`` of at most ``max_work`` elements whose
    serial variant is neither compiled in this process nor in numba's disk cache runs its own Python
    function, interpreted (:mod:`.interpreted`: same body, same numbers), when every kernel it calls
    can be; so a small first command on a fresh install compiles nothing and does not load numba. A call
    of at most :data:`INTERPRET_CACHED_MAX_WORK` elements does so while numba is not loaded, cached or not
    (:func:`runs_as_python`). Outside the block (the library, the warm-up, the tests) the compiled kernels always run.
    ``max_work``: :data:`INTERPRET_MAX_WORK` by default; 0 turns it off."""
    token = _INTERPRET_MAX_WORK.set(int(INTERPRET_MAX_WORK if max_work is None else max_work))
    try:
        yield
    finally:
        _INTERPRET_MAX_WORK.reset(token)


def interpreting() -> bool:
    """Whether the caller is inside :func:`interpret_until_compiled`."""
    return _INTERPRET_MAX_WORK.get() > 0


def readonly(a: np.ndarray) -> np.ndarray:
    """``a`` itself when read-only, else a read-only view of it (no copy)."""
    if not a.flags.writeable:
        return a
    view = a.view()
    view.flags.writeable = False
    return view


def _readonly_input(a):
    """An input argument as a kernel reads it: arrays (also inside a tuple or named tuple) read-only."""
    if isinstance(a, np.ndarray):
        return readonly(a)
    if isinstance(a, tuple):
        fields = (readonly(x) if isinstance(x, np.ndarray) else x for x in a)
        return type(a)(*fields) if hasattr(a, "_fields") else tuple(fields)
    return a


def _renamed(fn, suffix: str):
    """A copy of function ``fn`` whose qualified name ends in ``suffix``: numba's disk cache
    names its entries by qualified name, so the copy's compiled code is kept apart."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix, fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__ + suffix
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


class SizedKernel:
    """A parallel kernel with a serial twin: calls with a ``work`` argument smaller than
    :data:`PARALLEL_MIN_WORK` elements run serially, others in parallel.

    ``work`` names the argument whose size measures the input (an array's length or an
    integer), or a field of a named-tuple argument (``"lists.rel_code"``); ``writes`` names the array arguments the kernel writes, every other array
    argument (and every array inside a tuple argument) is passed read-only. Positional
    arguments only.
    """

    #: how :mod:`.interpreted` (which does not import this module) tells a kernel apart
    is_package_kernel = True

    #: every parallel kernel defined so far (:mod:`metrics_core.kernels.cache_stamp` checks their cache)
    instances: list["SizedKernel"] = []

    def __init__(self, fn, work: str, writes: tuple[str, ...], options: dict, python_work=None):
        names = list(inspect.signature(fn).parameters)
        work_argument, _, self._work_field = work.partition(".")
        unknown = [n for n in (work_argument, *writes) if n not in names]
        if unknown:
            raise TypeError(f"{fn.__qualname__} has no argument(s) {', '.join(unknown)}")
        self.py_func = fn
        self._python_work = python_work
        self._work = names.index(work_argument)
        self._writes = frozenset(names.index(n) for n in writes)
        self._variants = {PARALLEL: LazyKernel(fn, {"parallel": True, **options}),
                          SERIAL: LazyKernel(_renamed(fn, "_serial"), options)}
        self._called = {SERIAL: False, PARALLEL: False}
        functools.update_wrapper(self, fn)
        SizedKernel.instances.append(self)

    @property
    def parallel(self):
        """numba's dispatcher of the parallel variant."""
        return self._variants[PARALLEL].dispatcher()

    @property
    def serial(self):
        """numba's dispatcher of the serial variant."""
        return self._variants[SERIAL].dispatcher()

    def variant_for(self, args) -> str:
        """Which variant a call with ``args`` runs."""
        forced = _FORCED_VARIANT.get()
        if forced is not None:
            return forced
        return PARALLEL if self._work_size(args) >= PARALLEL_MIN_WORK else SERIAL

    def _python_size(self, args) -> int:
        """The elements the Python form would handle, for :data:`INTERPRET_MAX_WORK`: ``python_work(*args)``
        when the kernel gives it, else the size of its ``work`` argument."""
        return self._work_size(args) if self._python_work is None else int(self._python_work(*args))

    def _work_size(self, args) -> int:
        """The size of the call's ``work`` argument (an array's length or an integer)."""
        work = args[self._work]
        if self._work_field:
            work = getattr(work, self._work_field)
        return work.shape[0] if isinstance(work, np.ndarray) else int(work)

    def cached_on_disk(self, variant: str) -> bool:
        """Whether numba's on-disk cache holds a compiled version of ``variant`` (``"serial"`` or
        ``"parallel"``) for any argument types; False on a fresh install, until a first call
        compiles it (or :mod:`metrics_core.warmup` does). Read without loading numba where the
        cache's place is known without it (:func:`.interpreted.index_path`)."""
        return self._variants[variant].cached_on_disk()

    def __call__(self, *args):
        inputs = [a if i in self._writes else _readonly_input(a) for i, a in enumerate(args)]
        if (_INTERPRET_MAX_WORK.get() and not self._called[SERIAL]
                and _runs_as_python(self._variants[SERIAL], self.py_func, self._python_size(args), self)):
            from .interpreted import run

            return run(self.py_func, inputs)
        variant = self.variant_for(args)
        kernel = self.parallel if variant == PARALLEL else self.serial
        if self._called[variant]:
            return kernel(*inputs)
        # The first call in this process compiles the variant or loads it from the disk cache.
        # Loading needs no one else: only a variant not yet on disk takes the compile lock, so a
        # slow holder (a niced background warm-up on a busy machine) never delays a page whose
        # kernels are cached. Another process may be compiling it right now (the dashboard's
        # background warm-up beside the first page): wait for it and load its result instead of
        # compiling the same kernel side by side on the same cores.
        if self.cached_on_disk(variant):
            result = kernel(*inputs)
        else:
            with compile_lock(kernel):
                result = kernel(*inputs)
        self._called[variant] = True
        return result


def _largest_input(args) -> int:
    """The length of the longest array among ``args`` (also inside a tuple argument), 0 without one."""
    size = 0
    for a in args:
        for x in a if isinstance(a, tuple) else (a,):
            if isinstance(x, np.ndarray) and x.ndim:
                size = max(size, x.shape[0])
    return size


def runs_as_python(size: int, cached) -> bool:
    """Whether work of ``size`` elements inside :func:`interpret_until_compiled` runs as Python rather than
    compiled: within :data:`INTERPRET_CACHED_MAX_WORK` while this process has not loaded numba (loading
    it costs more), else within the block's limit (:data:`INTERPRET_MAX_WORK`) when ``cached()`` says the
    compiled form is not in numba's disk cache (asked only then). False outside the block or with a
    variant forced (:func:`use_variant`)."""
    limit = _INTERPRET_MAX_WORK.get()
    if not limit or size > limit or _FORCED_VARIANT.get() is not None:
        return False
    return (not _ready and size <= INTERPRET_CACHED_MAX_WORK) or not cached()


def _runs_as_python(compiled: LazyKernel, fn, size: int, cached=None) -> bool:
    """Whether a call of ``fn`` whose input has ``size`` elements runs its Python form: :func:`runs_as_python`
    says so, asking ``compiled.cached_on_disk`` (of the serial variant of ``cached``, a :class:`SizedKernel`,
    when given), and ``fn`` has a Python form. Whether it ran compiled in this process already the caller
    knows."""
    on_disk = compiled.cached_on_disk if cached is None else functools.partial(cached.cached_on_disk, SERIAL)
    if not runs_as_python(size, on_disk):
        return False
    from .interpreted import python_form

    return python_form(fn) is not None


@contextlib.contextmanager
def compile_lock(kernel):
    """Hold an exclusive lock (``flock``) on a file named after ``kernel`` in its numba cache
    directory while it is first called: processes that share the cache take turns to compile
    a kernel, so the second one loads the first one's result. No lock where the directory
    cannot be written (the kernel is then called as it is)."""
    try:
        import fcntl

        folder = kernel._cache._cache_path
        os.makedirs(folder, exist_ok=True)
        handle = open(os.path.join(folder, f"{kernel.py_func.__qualname__}.compile-lock"), "a+b")
    except (ImportError, AttributeError, OSError):
        yield
        return
    with handle:
        locked = _wait_for_lock(fcntl, handle)
        try:
            yield
        finally:
            if locked:
                fcntl.flock(handle, fcntl.LOCK_UN)


#: The longest a first call waits for another process's compile of the same kernel
#: (``METRICS_CORE_COMPILE_WAIT`` seconds, default 120). The lock only saves duplicate work (the
#: cache stays consistent when two processes compile at once: :mod:`.consistent_cache`), so past
#: this the kernel is compiled here rather than waiting on a holder that may be starved.
COMPILE_WAIT_SECONDS = float(os.environ.get("METRICS_CORE_COMPILE_WAIT", "120"))


def _wait_for_lock(fcntl, handle) -> bool:
    """Take the lock, polling, for at most :data:`COMPILE_WAIT_SECONDS`; whether it was taken."""
    deadline = time.monotonic() + COMPILE_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def njit(fn=None, *, work: str | None = None, writes: tuple[str, ...] = (), python_work=None, **options):
    """``numba.njit`` with on-disk caching; usable bare or with options.

    With ``parallel=True`` the kernel is a :class:`SizedKernel` (``work`` is then required);
    ``python_work(*args)``, when given, counts the elements a call handles for the limit of
    :func:`interpret_until_compiled` where the size of ``work`` would understate them (pairs of items).
    """
    options.setdefault("cache", True)
    options.setdefault("nogil", True)
    if fn is None:
        return functools.partial(njit, work=work, writes=writes, python_work=python_work, **options)
    if options.pop("parallel", False):
        if work is None:
            raise TypeError(f"parallel kernel {fn.__qualname__} must name its work argument")
        return SizedKernel(fn, work, tuple(writes), options, python_work)
    return LazyKernel(fn, options)


@functools.partial(LazyKernel, options={"cache": True, "inline": "always"})
def parallel_chunks(n, n_chunks, t):
    """Bounds [lo, hi) of chunk ``t`` when ``n`` items are cut into ``n_chunks``."""
    size = (n + n_chunks - 1) // n_chunks
    lo = min(n, t * size)
    hi = min(n, lo + size)
    return lo, hi


def n_threads() -> int:
    """Number of worker threads numba uses for parallel kernels (loads numba; inside
    :func:`interpret_until_compiled` while numba is not loaded, the number numba would start with)."""
    if not _ready and _INTERPRET_MAX_WORK.get():
        return default_threads()
    return load_numba().get_num_threads()


def default_threads() -> int:
    """The threads numba starts with: ``NUMBA_NUM_THREADS`` when set, else the CPUs this process may use."""
    given = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)
