"""A kernel's own Python source run by the interpreter: the first small call of a fresh install
answers without waiting for numba to compile (or even load).

Compiling a kernel costs a fixed time (the ranking families kernel about 16 CPU s on a fresh
install); interpreting its Python function costs time per row (a few microseconds per row and
family). So inside :func:`~metrics_core.kernels._jit.interpret_until_compiled` a kernel called from
Python on a small input (a :class:`~metrics_core.kernels._jit.SizedKernel`, whose serial variant is
then the one that counts, or a :class:`~metrics_core.kernels._jit.LazyKernel`) that is neither
compiled in this process nor in numba's disk cache runs :func:`python_form` of its function instead:
the same function body, with, in its globals only,

- ``nb`` (numba) replaced by a stand-in whose ``prange`` is ``range``;
- every kernel it calls (helpers compiled with ``inline="always"``, other kernels, numba's
  dispatchers that replaced them once numba loaded) replaced by that kernel's Python form;
- a function that only has a compiled form (``@overload``, as :mod:`.item_ids`'s ``item_hash``)
  replaced by the Python implementation given with :func:`python_implementation`, if any.

One formula in one place: nothing is written twice. A kernel is interpreted only when this
substitution covers every global it reads, transitively (:func:`python_form` returns None
otherwise and the kernel compiles as usual): the only attribute of ``nb`` read is ``prange``,
every function called is a kernel or has a Python implementation, the other globals are
values (NumPy, ``math``, constants). Kernels that build typed containers or call numba's
``objmode``, ``literal_unroll`` and the like are never interpreted.

Arithmetic is IEEE double in both forms, operation by operation in the same order: NumPy scalars
read from arrays compute what the compiled code computes. Functions of the C library differ:
``math.exp``/``math.lgamma`` called from Python are the C library's, compiled they are numba's or
LLVM's, which may round the last bit differently (pAp, intra-list distance over tie groups: equal to
a relative 1e-12 in ``tests/test_interpreted_kernels.py``, every other metric exactly). Integer
arithmetic wraps in numba and in NumPy's fixed-width scalars alike; NumPy's overflow warnings are
silenced while a Python form runs. Python's own integers (the loop counters) do not overflow at the
sizes interpreted here.

Whether the compiled variant is in numba's disk cache is read without loading numba
(:func:`index_path`) when numba's cache location is the environment's ``NUMBA_CACHE_DIR`` or the
source's writable ``__pycache__`` (numba's own first choices); otherwise numba is asked.
"""

from __future__ import annotations

import dis
import os
import sys
import threading
import types

import numpy as np


#: compiled-only functions (``@overload`` stubs) -> their Python implementation
_IMPLEMENTATIONS: dict = {}
#: Python function -> its Python form (None: not interpretable)
_FORMS: dict = {}
_MAKING = threading.RLock()  # one thread makes forms at a time (a form's globals are filled after it is listed)


class NotInterpretable(Exception):
    """A global of a kernel has no Python form (a numba-only feature)."""


class _PythonNumba:
    """``nb`` inside a Python form: ``prange`` is ``range``; nothing else of numba is offered."""

    prange = range

    def __repr__(self) -> str:
        return "<numba's prange as range, for kernels run by the interpreter>"


PYTHON_NUMBA = _PythonNumba()


def python_implementation(stub, chooses: bool = False):
    """Register the decorated function as the Python implementation of the compiled-only ``stub``
    (a function numba compiles through ``@overload``); it runs with the Python forms of the kernels it
    calls. With ``chooses`` it is the overload's own function, which returns the implementation for
    its arguments (as numba calls it with their types): ``stub(*args)`` is then
    ``implementation(*args)(*args)``, the implementation chosen from the values themselves."""
    def register(implementation):
        _IMPLEMENTATIONS[stub] = (implementation, chooses)
        return implementation
    return register


def _chosen(chooser):
    """``stub(*args)`` for an overload function ``chooser`` (see :func:`python_implementation`)."""
    def call(*args):
        return chooser(*args)(*args)
    return call


def _is_numba(value) -> bool:
    return getattr(type(value), "stands_for_numba", False) or (isinstance(value, types.ModuleType)
                                                                and value.__name__ == "numba")


def _global_names(code: types.CodeType) -> set[str]:
    """The global names ``code`` (and code defined inside it) loads."""
    found = {ins.argval for ins in dis.get_instructions(code) if ins.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _global_names(const)
    return found


def _numba_attributes(code: types.CodeType, names: set[str]) -> set[str]:
    """The attributes read from any of the global ``names`` in ``code`` (and code defined inside it)."""
    found = set()
    previous = None
    for ins in dis.get_instructions(code):
        if (previous is not None and previous.opname == "LOAD_GLOBAL" and previous.argval in names
                and ins.opname in ("LOAD_ATTR", "LOAD_METHOD")):
            found.add(ins.argval)
        previous = ins
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _numba_attributes(const, names)
    return found


def _python_value(value, strict: bool):
    """What a kernel's global ``value`` is inside a Python form (raises :class:`NotInterpretable`);
    ``strict``: a plain Python function must have a Python implementation (a kernel can only call
    kernels and overloads), else it is left as it is (an overload's chooser runs in Python)."""
    if _is_numba(value):
        return PYTHON_NUMBA
    if getattr(type(value), "is_package_kernel", False):  # a LazyKernel or SizedKernel
        return _form_or_raise(value.py_func)
    if type(value).__module__.startswith("numba") and isinstance(getattr(value, "py_func", None), types.FunctionType):
        return _form_or_raise(value.py_func)  # a dispatcher bound in the module once numba loaded
    if isinstance(value, types.FunctionType):
        if value not in _IMPLEMENTATIONS:
            if strict:
                raise NotInterpretable(f"{value.__qualname__} has no Python implementation")
            return value  # a function an overload's chooser calls in Python (as numba does)
        implementation, chooses = _IMPLEMENTATIONS[value]
        if chooses:
            return _chosen(_form_or_raise(implementation, strict=False))
        return _form_or_raise(implementation)
    return value  # NumPy's and math's functions, classes, modules, constants: the same in Python


def _form_or_raise(fn, strict: bool = True):
    form = python_form(fn, strict)
    if form is None:
        raise NotInterpretable(f"{fn.__qualname__} is not interpretable")
    return form


def python_form(fn, strict: bool = True) -> types.FunctionType | None:
    """``fn`` (a kernel's Python function) with its kernel globals replaced by their Python forms (see
    the module docstring), or None when some global has none. Made once per function."""
    if fn in _FORMS:
        return _FORMS[fn]
    with _MAKING:
        return _FORMS[fn] if fn in _FORMS else _make(fn, strict)


def _make(fn, strict: bool) -> types.FunctionType | None:
    namespace = dict(fn.__globals__)
    form = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)
    form.__qualname__ = fn.__qualname__
    form.__doc__ = fn.__doc__
    _FORMS[fn] = form  # before the globals: a kernel may call itself
    try:
        for cell in fn.__closure__ or ():  # a closure's variables are not globals: none may be a kernel
            if _python_value(cell.cell_contents, strict) is not cell.cell_contents:
                raise NotInterpretable(f"{fn.__qualname__} closes over a kernel or numba")
        read = _global_names(fn.__code__)
        numba_names = {name for name in read if _is_numba(namespace.get(name))}
        extra = _numba_attributes(fn.__code__, numba_names) - {"prange"}
        if extra:
            raise NotInterpretable(f"{fn.__qualname__} reads numba's {', '.join(sorted(extra))}")
        for name in read:
            if name in namespace:
                namespace[name] = _python_value(namespace[name], strict)
    except NotInterpretable:
        _FORMS[fn] = None
        return None
    return form


def run(fn, args):
    """Call the Python form of ``fn`` (a kernel's function that has one, see :func:`python_form`) with ``args``."""
    form = _FORMS.get(fn) or python_form(fn)
    with np.errstate(over="ignore"):  # fixed-width integers wrap, as in the compiled code
        return form(*args)


def index_path(kernel, config_file: str) -> str | None:
    """Where numba keeps the index of ``kernel``'s cached versions, found without loading numba; None
    when numba's choice cannot be told here (a configuration file or custom locators: ask numba).

    numba's locators in order: ``NUMBA_CACHE_DIR`` (then ``<dir>/<folder>_<sha1 of the folder>``), the
    ``__pycache__`` beside the source when writable, then others; the index is named
    ``<module>.<qualified name>-<first line>.py<version><abiflags>.nbi``. ``kernel``: a
    :class:`~metrics_core.kernels._jit.LazyKernel`; ``config_file``: numba's configuration file,
    read from the working directory when it exists."""
    if os.path.isfile(config_file) or os.environ.get("NUMBA_CACHE_LOCATOR_CLASSES"):
        return None
    fn = kernel.py_func
    source = os.path.abspath(fn.__code__.co_filename)
    folder = os.path.dirname(source)
    cache_dir = os.environ.get("NUMBA_CACHE_DIR", "")
    if cache_dir:
        import hashlib

        where = os.path.join(cache_dir, "_".join([os.path.basename(folder),
                                                  hashlib.sha1(folder.encode()).hexdigest()]))
    else:
        where = os.path.join(folder, "__pycache__")
        if not os.access(where if os.path.isdir(where) else folder, os.W_OK):
            return None
    module = os.path.splitext(os.path.basename(source))[0]
    name = f"{module}.{fn.__qualname__}".replace("<", "").replace(">", "")
    version = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return os.path.join(where, f"{name}-{fn.__code__.co_firstlineno}.{version}.nbi")
