"""The file formats metrics_core reads, and how a format is recognised.

A format is decided in this order:

1. content that can only be one thing: gzip (bytes ``1f 8b``, decompressed
   and recognised again), Parquet (``PAR1``), ZIP/Excel (``PK``) and the old
   Excel/OLE container (refused, with the list below);
2. the file extension (``.csv``, ``.tsv``, ``.parquet`` ...);
3. for ``.txt``, unknown extensions and uploaded buffers without a name, the
   first non-blank line: ``{`` starts JSON lines, a tab or comma makes a
   delimited file, and a header-less line shaped like ``qid Q0 docid rank
   score tag`` or ``qid iter docid rel`` is TREC.
"""

from __future__ import annotations

CSV = "csv"
TSV = "tsv"
TEXT = "text"  # delimiter decided from the content
PARQUET = "parquet"
JSONL = "jsonl"
TREC = "trec"

#: extension (lower case, without the dot) -> format
EXTENSIONS: dict[str, str] = {
    "csv": CSV,
    "tsv": TSV,
    "tab": TSV,
    "txt": TEXT,
    "parquet": PARQUET,
    "pq": PARQUET,
    "jsonl": JSONL,
    "ndjson": JSONL,
    "json": JSONL,
    "jsonlines": JSONL,
    "trec": TREC,
    "run": TREC,
    "qrels": TREC,
    "res": TREC,
}

#: extensions we know and refuse (with the supported list in the message)
UNSUPPORTED_EXTENSIONS: dict[str, str] = {
    "xlsx": "Excel workbook",
    "xlsm": "Excel workbook",
    "xls": "Excel workbook",
    "ods": "OpenDocument spreadsheet",
    "zip": "ZIP archive",
    "7z": "7-Zip archive",
    "rar": "RAR archive",
    "bz2": "bzip2 archive",
    "xz": "xz archive",
    "zst": "Zstandard archive",
    "feather": "Feather/Arrow IPC file",
    "arrow": "Feather/Arrow IPC file",
    "orc": "ORC file",
    "avro": "Avro file",
    "pkl": "Python pickle",
    "pickle": "Python pickle",
    "h5": "HDF5 file",
    "hdf5": "HDF5 file",
    "sqlite": "SQLite database",
    "db": "database file",
}

SUPPORTED_TEXT = (
    "CSV (.csv), TSV (.tsv), Parquet (.parquet, .pq), JSON lines (.jsonl, .ndjson, .json), "
    "TREC run/qrels (.trec, .run, .qrels, .txt), and any text format gzipped (.gz)"
)


def unsupported(name: str, what: str) -> str:
    """The one-line message for a format we do not read."""
    return f"{name}: unsupported format ({what}); supported formats: {SUPPORTED_TEXT}. Export the data to one of them."


def extensions_of(name: str) -> list[str]:
    """Lower-case extensions of a file name, outermost last: ``bm25.trec.gz`` -> ``["trec", "gz"]``."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    parts = base.split(".")
    return [p.lower() for p in parts[1:] if p]


def format_from_extension(name: str | None) -> str | None:
    """The format named by the innermost known extension (``.gz`` skipped), or None."""
    if not name:
        return None
    exts = [e for e in extensions_of(name) if e != "gz"]
    for ext in reversed(exts):
        if ext in EXTENSIONS:
            return EXTENSIONS[ext]
    return None


def unsupported_extension(name: str | None) -> str | None:
    """A description when the outermost extension is one we refuse, else None."""
    if not name:
        return None
    exts = extensions_of(name)
    if exts and exts[-1] in UNSUPPORTED_EXTENSIONS:
        return UNSUPPORTED_EXTENSIONS[exts[-1]]
    return None
