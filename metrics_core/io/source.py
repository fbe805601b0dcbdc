"""Turn a path or an uploaded buffer into checked bytes and a format.

Everything that can be wrong with a file before its rows are parsed is found
here, each with a one-line :class:`MetricsError`: a path that does not exist
or is a directory, an empty file, a corrupt gzip stream, binary content (a NUL
byte), UTF-16 text, bytes that are not UTF-8 (with the byte offset and line),
and formats we do not read (Excel, ZIP, ...). A UTF-8 byte-order mark is
removed silently; a text whose lines end with a lone carriage return (old Mac
files) is read with those as line ends.

Reading respects :mod:`.limits`: special files (devices, FIFOs, sockets) are
refused before any byte is read; a file larger than ``max_bytes`` is refused
from its size; gzip data is decompressed in a stream that stops as soon as
``max_bytes`` or ``max_ratio`` is passed (a decompression bomb never reaches
memory whole); a line longer than ``max_line_bytes`` is refused before parsing.
"""

from __future__ import annotations

import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..errors import MetricsError
from . import formats as F
from .quote import clip
from .limits import RATIO_FREE_BYTES, ReadLimits, check_line_lengths, current, format_size
from .text_scan import scan_text

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
    bytes of a Parquet buffer; ``path`` is set instead for a Parquet file
    given by its path (pyarrow reads the columns needed from it) and for a
    Parquet directory (Spark's part files). ``fmt`` is a format from :mod:`.formats`, or
    ``formats.TEXT``/None when the content must decide.
    """

    name: str
    data: bytes | None
    fmt: str | None
    path: Path | None = None
    gzipped: bool = False
    newlines: int | None = None  # newline bytes in ``data`` when a large text's scan counted them


PARQUET_SUFFIXES = (".parquet", ".pq")
_FILE_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISSOCK, "a socket"))


def _is_hidden(path: Path, root: Path) -> bool:
    """Files pyarrow's dataset reader skips: any path part starting with ``.`` or ``_`` (``_SUCCESS``, ``.crc``)."""
    return any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def _parquet_directory(p: Path, name: str) -> Path:
    """``p`` when it holds Parquet part files only (hidden files aside); MetricsError naming the others."""
    files = [f for f in sorted(p.rglob("*")) if f.is_file() and not _is_hidden(f, p)]
    parquet = [f for f in files if f.name.lower().endswith(PARQUET_SUFFIXES)]
    if not parquet:
        raise MetricsError(
            f"{name}: is a directory, not a file; pass a file (a directory is read only when it holds "
            f"Parquet part files, as Spark writes them)"
        )
    others = [f for f in files if not f.name.lower().endswith(PARQUET_SUFFIXES)]
    if others:
        shown = ", ".join(clip(str(f.relative_to(p))) for f in others[:5])
        more = f" and {len(others) - 5} more" if len(others) > 5 else ""
        raise MetricsError(
            f"{name}: a directory is read as one Parquet dataset, but {len(others)} of its files are not Parquet "
            f"(.parquet, .pq): {shown}{more}; move them out or pass one file"
        )
    return p


def _read_path(p: Path, name: str, limits: ReadLimits) -> bytes | Path:
    try:
        st = p.stat()
    except FileNotFoundError:
        raise MetricsError(f"{name}: no such file; check the path") from None
    except PermissionError:
        raise MetricsError(f"{name}: permission denied; check the file's read permission") from None
    except OSError as e:
        raise MetricsError(f"{name}: cannot be read ({e.strerror or e})") from None
    if stat.S_ISDIR(st.st_mode):
        return _parquet_directory(p, name)
    if not stat.S_ISREG(st.st_mode):
        what = next((label for test, label in _FILE_KINDS if test(st.st_mode)), "not a regular file")
        raise MetricsError(f"{name}: is {what}, not a regular file; save the data to a file and pass that")
    if st.st_size > limits.max_bytes:
        raise limits.exceeded("max_bytes", f"{name}: the file holds {format_size(st.st_size)}")
    try:
        with open(p, "rb") as f:
            if f.read(len(PARQUET_MAGIC)) == PARQUET_MAGIC:
                return p  # pyarrow reads the columns it needs from the file itself (limits checked on its footer)
            f.seek(0)
            want = min(st.st_size, limits.max_bytes) + 1  # a buffer sized by the file, not by the limit
            data = f.read(want)
            if len(data) == want:  # the file grew while it was read: read on, up to the limit
                data += f.read(limits.max_bytes + 1 - len(data))
    except PermissionError:
        raise MetricsError(f"{name}: permission denied; check the file's read permission") from None
    except OSError as e:
        raise MetricsError(f"{name}: cannot be read ({e.strerror or e})") from None
    if len(data) > limits.max_bytes:
        raise limits.exceeded("max_bytes", f"{name}: the file holds more than {format_size(limits.max_bytes)}")
    return data


def _read_buffer(obj, name: str, limits: ReadLimits) -> bytes:
    if isinstance(obj, (bytes, bytearray, memoryview)):
        value = obj
    elif hasattr(obj, "getvalue"):
        value = obj.getvalue()
    elif hasattr(obj, "read"):
        value = obj.read(limits.max_bytes + 1)
    else:
        raise MetricsError(f"cannot read input of type {type(obj).__name__}; pass a path, bytes or a file object")
    if isinstance(value, str):
        value = value.encode("utf-8")
    if len(value) > limits.max_bytes:
        raise limits.exceeded("max_bytes", f"{name}: the input holds more than {format_size(limits.max_bytes)}")
    return bytes(value)


def gunzip(data: bytes, name: str, limits: ReadLimits) -> bytes:
    """Decompress gzip data (every member) with zlib's ``max_length``: never more than the limit + 1 bytes."""
    allowed = min(limits.max_bytes, max(RATIO_FREE_BYTES, limits.max_ratio * len(data)))
    parts, total = [], 0
    rest = data
    try:
        while rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)  # one gzip member
            chunk = d.decompress(rest, allowed + 1 - total)
            parts.append(chunk)
            total += len(chunk)
            if total > allowed:
                break
            if not d.eof:
                raise EOFError("compressed data ended before the end-of-stream marker")
            rest = d.unused_data
    except (zlib.error, EOFError) as e:
        raise MetricsError(f"{name}: corrupt or truncated gzip data ({e}); re-compress the file") from None
    if total > allowed:
        del parts
        if allowed == limits.max_bytes:
            raise limits.exceeded("max_bytes", f"{name}: decompresses to more than {format_size(allowed)}")
        raise limits.exceeded(
            "max_ratio", f"{name}: {format_size(len(data))} of gzip data decompress to more than "
                         f"{format_size(allowed)} (more than {limits.max_ratio} times the compressed size)")
    return parts[0] if len(parts) == 1 else b"".join(parts)


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
            f"offset {e.start}{_surrogate(data[e.start:e.start + 3])}); save the file as UTF-8"
        ) from None


def _surrogate(head: bytes) -> str:
    """``": an encoded lone surrogate \\ud800 ..."`` when ``head`` is one (CESU-8 or WTF-8 text), else ``""``."""
    try:
        ch = head.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return ""
    if len(ch) == 1 and 0xD800 <= ord(ch) <= 0xDFFF:
        return f": an encoded lone surrogate \\u{ord(ch):04x}, a UTF-16 half that is not a character"
    return ""


def _check_text(data: bytes, name: str) -> tuple[bytes, int | None]:
    """The text without a BOM, checked, and its number of newlines when a large text's scan counted them."""
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
    elif data.startswith(UTF16_BOMS) or data[:4] in (b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00"):
        raise MetricsError(f"{name}: is UTF-16/UTF-32 encoded text; save it as UTF-8")
    facts = scan_text(data)
    if facts is None or not facts.plain_ascii:  # plain ASCII holds no NUL and is valid UTF-8
        nul = data.find(b"\x00")
        if nul >= 0:
            raise MetricsError(
                f"{name}: binary content (NUL byte at byte offset {nul}, line {line_of_offset(data, nul)}); expected "
                f"a text file or Parquet; supported formats: {F.SUPPORTED_TEXT}"
            )
        _check_utf8(data, name)
    if not data or data.isspace():  # isspace stops at the first other byte; strip() would copy the file
        raise MetricsError(f"{name}: the file is empty; it needs a header line and at least one data row")
    text = cr_line_ends(data)
    return text, (facts.newlines if facts is not None and text is data else None)


def cr_line_ends(data: bytes) -> bytes:
    """Text whose only line ends are lone carriage returns, with newlines instead (else unchanged)."""
    if b"\n" in data or b"\r" not in data:
        return data
    return data.replace(b"\r", b"\n")


def load_source(path_or_buffer, name: str | None = None, limits: ReadLimits | None = None) -> Source:
    """Read and check the input; see the module docstring for what is refused.

    ``limits`` default to :func:`metrics_core.io.limits.current`.
    """
    limits = current() if limits is None else limits
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
        got = _read_path(path, name, limits)
        if isinstance(got, Path):
            return Source(name=name, data=None, fmt=F.PARQUET, path=got)
        data = got
    else:
        data = _read_buffer(path_or_buffer, name, limits)
    if not data:
        raise MetricsError(f"{name}: the file is empty; it needs a header line and at least one data row")

    gzipped = False
    fmt_name = name
    if data.startswith(GZIP_MAGIC):
        data = gunzip(data, name, limits)
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
    data, newlines = _check_text(data, name)
    check_line_lengths(data, limits.max_line_bytes, name, limits)
    return Source(name=name, data=data, fmt=fmt, gzipped=gzipped, newlines=newlines)
