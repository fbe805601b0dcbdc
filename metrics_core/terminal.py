"""Text shown on a terminal: control characters escaped, so a name cannot drive the terminal.

A file name, model name, id or message may hold characters a terminal obeys instead of showing:
``ESC ] 0 ; title BEL`` sets the window title, ``ESC [ 2 J`` clears the screen, a carriage return
overwrites the line, a bidirectional override reorders it. :func:`escape` is the one function
every printer of the command line uses; :class:`TerminalWriter` applies it to everything written
to a stream (the command line wraps ``stderr`` always, and ``stdout`` except for data written
with :func:`write_data` to a file or pipe, where CSV stays exact).

Escaped, as Python writes them (``\\x1b``, ``\\x07``, ``\\u202e``, ``\\udce9``):

* the C0 controls (U+0000-U+001F) but the newline when ``keep_newlines`` (a printer's own line
  breaks), DEL (U+007F) and the C1 controls (U+0080-U+009F);
* the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069);
* the line and paragraph separators (U+2028, U+2029);
* lone surrogates (U+D800-U+DFFF), which no output encoding accepts: a byte of a file name that
  is not UTF-8, which reaches Python as U+DC80-U+DCFF, is written as that byte (``\\xe9``), and the noncharacters U+FFFE and U+FFFF (which XML cannot hold).

Everything else, including every printable non-ASCII character, is shown as it is.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

__all__ = ["escape", "escape_surrogates", "TerminalWriter", "OutputError", "write_data"]

_OTHERS = "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff"
_PATTERN = re.compile(f"[\x00-\x1f{_OTHERS}]")
_PATTERN_KEEP_NEWLINES = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHERS}]")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (``surrogateescape``)
        code -= 0xDC00
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_surrogates(text: Any) -> str:
    """``str(text)`` with its lone surrogates escaped as :func:`escape` writes them (the byte
    ``\\xNN`` of a file name that is not UTF-8, ``\\uNNNN`` for any other), the rest as it is: text
    every encoder, table and database accepts (a model named after such a file)."""
    return _SURROGATE.sub(_escaped, str(text))


def escape(text: Any, *, keep_newlines: bool = False) -> str:
    """``str(text)`` with every character a terminal would obey written as its escape
    (``"\\x1b]0;x\\x07"`` -> ``"\\\\x1b]0;x\\\\x07"``); newlines kept when ``keep_newlines``."""
    return (_PATTERN_KEEP_NEWLINES if keep_newlines else _PATTERN).sub(_escaped, str(text))


class OutputError(OSError):
    """A stream a :class:`TerminalWriter` writes to refused the text (a full disk, ``/dev/full``);
    ``errno`` and ``strerror`` are the system's. A closed pipe stays :class:`BrokenPipeError`."""


def _through(call, *args):
    try:
        return call(*args)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(exc.errno, exc.strerror or str(exc)) from exc


class TerminalWriter:
    """A text stream that writes through :func:`escape` (newlines kept) to ``stream``; a write or
    flush the stream refuses raises :class:`OutputError`; every other attribute (``fileno``,
    ``isatty``, ``encoding``) is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        _through(self.stream.write, escape(text, keep_newlines=True))
        return len(text)

    def flush(self) -> None:
        _through(self.stream.flush)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def write_data(text: str) -> None:
    """Write data meant for programs (CSV) to ``sys.stdout``: exact to a file or a pipe, escaped
    (:class:`TerminalWriter`) when ``stdout`` is a terminal, where a person reads it."""
    out = sys.stdout
    raw = out.stream if isinstance(out, TerminalWriter) else out
    if _is_terminal(raw):
        out.write(text)
    else:
        _through(raw.write, text)
