"""The source files the package's compiled kernels are made of, and one digest of their text.

numba keeps a cached kernel while the file that defines it keeps its size and modification
time; it does not look at the files of the kernels it calls or inlines (a helper of another
module, an overload such as :mod:`.item_ids`'s). After an edit to such a file (a ``git pull``
in an editable install, a developer's change), a kernel of an unchanged file would go on
loading the code compiled with the old helper. Each kernel of the package therefore also
stamps its cache with :func:`digest` (see :func:`metrics_core.kernels.consistent_cache.use_for`):
an edit to any module that defines kernels makes every kernel compile again, once.

The modules are every module of this ``kernels`` package and :data:`MODULES_OUTSIDE`; a test
checks that no other module of the package defines a kernel.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pkgutil

#: modules outside ``metrics_core.kernels`` that define compiled kernels
MODULES_OUTSIDE = ("metrics_core.layout.kernels", "metrics_core.layout.sort_and_join", "metrics_core.diagnostics")


def module_names() -> list[str]:
    """Every module that defines kernels, by name, sorted."""
    here = os.path.dirname(__file__)
    inside = [f"{__package__}.{info.name}" for info in pkgutil.iter_modules([here])]
    return sorted(inside + list(MODULES_OUTSIDE))


def _source_path(name: str) -> str:
    """The file of module ``name`` (a path inside a zip when the package is imported from one)."""
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    return os.path.join(package_root, *name.split(".")) + ".py"


@functools.lru_cache(maxsize=1)
def digest() -> str:
    """SHA-256 over the names and texts of :func:`module_names` (read once per process; works
    from a zip, as shipped to Spark executors, where the same text gives the same digest)."""
    loader = __loader__  # a file loader, or zipimport's: both read a path of the package
    total = hashlib.sha256()
    for name in module_names():
        total.update(name.encode() + b"\0" + hashlib.sha256(loader.get_data(_source_path(name))).digest())
    return total.hexdigest()
