"""Model names from file names: one rule for the command line, Spark and the dashboard.

:func:`model_name` is the file name without its trailing known extensions:
data formats the readers know (``.csv``, ``.tsv``, ``.parquet``, ``.trec``,
``.jsonl``, ...) and compression (``.gz``, ``.bz2``, ...). Any other dotted
part belongs to the name: ``model.v2.parquet`` -> ``model.v2``,
``runs/bm25.trec.gz`` -> ``bm25``, a Parquet directory ``runs/bm25.parquet/``
-> ``bm25``. Both ``/`` and ``\\`` separate folders (browsers on Windows send
full paths).

:func:`model_names` names several runs for one table: each gets the shortest
of its names that no other run shares (the name up to its first dot, then
:func:`model_name`, then the full file name, then with the parent folder, then
a ``#n`` suffix), with a note when two runs needed telling apart.

A file name that is not valid UTF-8 names its model with the undecodable bytes written as
``\\xNN`` (:func:`text_of_path`): ``b"caf\\xe9.csv"`` -> ``caf\\xe9``.
"""

from __future__ import annotations

from .io.formats import EXTENSIONS
from .terminal import escape_surrogates

COMPRESSION_EXTENSIONS = frozenset({"gz", "gzip", "bz2", "xz", "zst", "snappy"})
DATA_EXTENSIONS = frozenset(EXTENSIONS) | COMPRESSION_EXTENSIONS


def text_of_path(path) -> str:
    """``str(path)`` with each byte of a file name that is not UTF-8 (which Python holds as a lone
    surrogate) written as ``\\xNN`` (:func:`metrics_core.terminal.escape_surrogates`): a name every
    table, file and database can hold, and that still says which bytes the name has."""
    return escape_surrogates(path)


def _split(path: str) -> tuple[str, str]:
    """(parent folder name, file name) of a path with / or \\ separators (a trailing one ignored)."""
    parts = [text_of_path(p) for p in str(path).replace("\\", "/").rstrip("/").split("/")]
    name = parts[-1]
    parent = parts[-2] if len(parts) > 1 else ""
    return parent, name


def model_name(path: str) -> str:
    """The file name without its trailing known data and compression extensions (see the module docstring)."""
    _, name = _split(path)
    parts = name.split(".")
    while len(parts) > 1 and parts[-1].lower() in DATA_EXTENSIONS:
        parts.pop()
    return ".".join(parts) or name


def short_model_name(path: str) -> str:
    """The model name up to its first dot (``bm25.v1.run`` -> ``bm25``): the first choice in a table."""
    name = model_name(path)
    return name.split(".", 1)[0] or name


def model_names(paths: list[str]) -> tuple[list[str], list[str]]:
    """Model name of each run path, and notes about disambiguated duplicates (see the module docstring)."""
    names = [short_model_name(p) for p in paths]
    notes = []
    for clash in sorted({n for n in names if names.count(n) > 1}):
        idx = [i for i, n in enumerate(names) if n == clash]
        for candidate in (
            lambda i: model_name(paths[i]),
            lambda i: _split(paths[i])[1],
            lambda i: f"{_split(paths[i])[0]}/{model_name(paths[i])}",
            lambda i: f"{_split(paths[i])[0]}/{_split(paths[i])[1]}",
        ):
            new = [candidate(i) for i in idx]
            if len(set(new)) == len(new) and not set(new) & (set(names) - {clash}):
                break
        else:
            new = [clash if j == 0 else f"{clash}#{j + 1}" for j in range(len(idx))]
        for i, n in zip(idx, new):
            names[i] = n
        notes.append(f"{len(idx)} runs are named {clash!r}; using {', '.join(repr(n) for n in new)}")
    return names, notes
