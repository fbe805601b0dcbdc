"""Turn a path or an uploaded buffer into checked bytes and a format.

Everything that can be wrong with a file before its rows are parsed is found
here, each with a one-line :class:`MetricsError`: a path that does not exist
or is a directory, an empty file, a corrupt gzip stream, binary content (a NUL
byte), UTF-16 text, bytes that are not UTF-8 (with the byte offset and line),
and formats we do not read (Excel, ZIP, ...). A UTF-8 byte-order mark is
removed silently.
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..errors import MetricsError
from . import formats as F

GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass
class Source:
    """Checked input.

    ``data`` holds UTF-8 text bytes without a BOM (text formats) or the raw
    bytes of a Parquet file; ``path`` is set instead for a Parquet directory
    (Spark's part files). ``fmt`` is a format from :mod:`.formats`, or
    ``formats.TEXT``/None when the content must decide.
    """

    name: str
    data: bytes | None
    fmt: str | None
    path: Path | None = None
    gzipped: bool = False


def _read_path(p: Path, name: str) -> bytes | Path:
    if not p.exists():
        raise MetricsError(f"{name}: no such file; check the path")
    if p.is_dir():
        if any(True for _ in p.rglob("*.parquet")):
            return p
        raise MetricsError(
            f"{name}: is a directory, not a file; pass a file (a directory is read only when it holds "
            f"Parquet part files, as Spark writes them)"
        )
    try:
        return p.read_bytes()
    except PermissionError:
        raise MetricsError(f"{name}: permission denied; check the file's read permission") from None
    except OSError as e:
        raise MetricsError(f"{name}: cannot be read ({e.strerror or e})") from None


def _read_buffer(obj) -> bytes:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    if hasattr(obj, "getvalue"):
        value = obj.getvalue()
    elif hasattr(obj, "read"):
        value = obj.read()
    else:
        raise MetricsError(f"cannot read input of type {type(obj).__name__}; pass a path, bytes or a file object")
    if isinstance(value, str):
        return value.encode("utf-8")
    return bytes(value)


def line_of_offset(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset."""
    return data.count(b"\n", 0, offset) + 1


def _check_utf8(data: bytes, name: str) -> None:
    """Validate UTF-8 with pyarrow (no Python copy); locate the first bad byte only on failure."""
    if not data:
        return
    offsets = pa.array([0, len(data)], pa.int64()).buffers()[1]
    arr = pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        arr.cast(pa.large_string())
        return
    except pa.ArrowInvalid:
        pass
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise MetricsError(
            f"{name}: line {line_of_offset(data, e.start)}: not valid UTF-8 (byte 0x{data[e.start]:02x} at byte "
            f"offset {e.start}); save the file as UTF-8"
        ) from None


def _check_text(data: bytes, name: str) -> bytes:
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    elif data.startswith(UTF16_BOMS) or data[:4] in (b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00"):
        raise MetricsError(f"{name}: is UTF-16/UTF-32 encoded text; save it as UTF-8")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise MetricsError(
            f"{name}: binary content (NUL byte at byte offset {nul}, line {line_of_offset(data, nul)}); expected a "
            f"text file or Parquet; supported formats: {F.SUPPORTED_TEXT}"
        )
    _check_utf8(data, name)
    if not data.strip():
        raise MetricsError(f"{name}: the file is empty; it needs a header line and at least one data row")
    return data


def load_source(path_or_buffer, name: str | None = None) -> Source:
    """Read and check the input; see the module docstring for what is refused."""
    path: Path | None = None
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = Path(path_or_buffer)
        name = name or str(path_or_buffer)
    else:
        name = name or getattr(path_or_buffer, "name", None) or "<input>"
        if not isinstance(name, str):
            name = str(name)
    what = F.unsupported_extension(name)
    if what:
        raise MetricsError(F.unsupported(name, what))
    if path is not None:
        got = _read_path(path, name)
        if isinstance(got, Path):
            return Source(name=name, data=None, fmt=F.PARQUET, path=got)
        data = got
    else:
        data = _read_buffer(path_or_buffer)
    if not data:
        raise MetricsError(f"{name}: the file is empty; it needs a header line and at least one data row")

    gzipped = False
    fmt_name = name
    if data.startswith(GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as e:
            raise MetricsError(f"{name}: corrupt or truncated gzip data ({e}); re-compress the file") from None
        gzipped = True
        if not data:
            raise MetricsError(f"{name}: the file is empty (after gzip decompression)")
    elif F.extensions_of(name)[-1:] == ["gz"]:
        raise MetricsError(f"{name}: has a .gz extension but is not gzip data; rename or re-compress it")

    if data.startswith(PARQUET_MAGIC):
        return Source(name=name, data=data, fmt=F.PARQUET, gzipped=gzipped)
    if data.startswith(ZIP_MAGICS):
        raise MetricsError(F.unsupported(name, "ZIP archive or Excel workbook"))
    if data.startswith(OLE_MAGIC):
        raise MetricsError(F.unsupported(name, "Excel 97-2003 workbook or other OLE file"))
    fmt = F.format_from_extension(fmt_name)
    if fmt == F.PARQUET:
        raise MetricsError(f"{name}: not a Parquet file (it does not start with the bytes PAR1); check the file")
    data = _check_text(data, name)
    return Source(name=name, data=data, fmt=fmt, gzipped=gzipped)
