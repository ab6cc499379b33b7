"""Reading a large top-level JSON array in blocks of whole records, without copying it.

A 100 MB predictions file need not be in memory at once: it is read (and gunzipped) into one
reused buffer, and every block handed on is a view of that buffer holding a complete, valid
JSON array of whole records (``[rec, rec, ...]``). The cut is made at the last ``},`` of the
buffer, whose comma is overwritten by ``]``; msgspec then checks that the block is valid JSON,
which proves the comma was a top-level separator (a comma inside a string or a nested value
leaves the block unbalanced). Only when that guess fails does a compiled pass track strings,
escapes and nesting to find the cut. The partial record after the cut moves to the front of the
buffer, and the next read fills the space behind it.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import numpy as np

from vlneval.data.scan import is_json

__all__ = ["array_blocks", "Incomplete", "BLOCK"]

BLOCK = 1 << 22  # 4 MiB of file per read
_OPEN, _CLOSE, _COMMA = 0x5B, 0x5D, 0x2C
_SPACE = b" \t\n\r"
_READ_ERRORS = (OSError, EOFError, zlib.error)


class Incomplete(Exception):
    """The array never closed, something other than white space followed it, or a block is
    not valid JSON."""


def _open(path: Path) -> IO[bytes] | None:
    """The file's bytes, gunzipped when it is gzipped; None for anything but a regular file (a
    pipe can be read only once: the validating reader does that)."""
    if not path.is_file():
        return None
    fh = path.open("rb")
    if fh.peek(2)[:2] != b"\x1f\x8b":
        return fh
    fh.close()
    return gzip.open(path, "rb")  # type: ignore[return-value]


def _fill(fh: IO[bytes], buf: bytearray, start: int) -> int:
    """Reads into ``buf[start:]`` until it is full or the file ends; the new fill level."""
    view = memoryview(buf)
    while start < len(buf):
        n = fh.readinto(view[start:])  # type: ignore[attr-defined]
        if not n:
            break
        start += n
    return start


def _top_comma(buf: bytearray, fill: int) -> int:
    """The position of the last top-level comma of ``buf[1:fill]`` (-1 if none), with the
    block up to it checked as valid JSON; raises :class:`Incomplete` for invalid JSON."""
    guess = buf.rfind(b"},", 1, fill)
    if guess > 0 and _valid_cut(buf, guess + 1):
        return guess + 1
    from vlneval.data._stream_kernel import last_boundary

    last, _ = last_boundary(np.frombuffer(buf, dtype=np.uint8, count=fill - 1, offset=1))
    if last < 0:
        return -1
    if not _valid_cut(buf, last + 1):
        raise Incomplete("a block is not valid JSON")
    return int(last) + 1


def _valid_cut(buf: bytearray, comma: int) -> bool:
    buf[comma] = _CLOSE
    ok = is_json(memoryview(buf)[: comma + 1])
    buf[comma] = _COMMA
    return ok


def array_blocks(path: str | Path, *, size: int = BLOCK) -> Iterator[memoryview] | None:
    """Blocks of whole records of the JSON array in ``path`` (``.json`` or gzipped), each a
    complete and valid JSON array; None when the file does not start with ``[``.

    Each block is a view of one reused buffer: it is valid only until the next block is asked
    for. The generator raises :class:`Incomplete` if the array never closes, is followed by
    anything but white space, or is not valid JSON; callers treat that as a reason to decline.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.json"
        >>> _ = p.write_text('[{"a": "x},]"}, [1, 2], 3]')
        >>> [bytes(b) for b in array_blocks(p, size=12)]
        [b'[{"a": "x},]"}]', b'[ [1, 2], 3]']
    """
    buf = bytearray(max(size, 2) + 1)
    try:
        fh = _open(Path(path))
    except _READ_ERRORS:
        return None  # the validating reader says what is wrong with the file
    if fh is None:
        return None
    try:
        fill = _fill(fh, buf, 0)
    except _READ_ERRORS:
        fh.close()
        return None
    start = 0
    while start < fill and buf[start] in _SPACE:
        start += 1
    if start == fill or buf[start] != _OPEN:
        fh.close()
        return None
    buf[1 : fill - start] = buf[start + 1 : fill]
    buf[0] = _OPEN
    return _blocks(fh, buf, fill - start)


def _blocks(fh: IO[bytes], buf: bytearray, fill: int) -> Iterator[memoryview]:
    with fh:
        while True:
            try:
                fill = _fill(fh, buf, fill)
            except _READ_ERRORS as exc:  # a damaged or truncated gzip stream
                raise Incomplete(f"the file cannot be read to its end ({exc})") from exc
            if fill < len(buf):  # the file has ended
                yield _last(buf, fill)
                return
            comma = _top_comma(buf, fill)
            if comma < 0:  # one record longer than the buffer: grow it
                bigger = bytearray(2 * len(buf))
                bigger[:fill] = buf
                buf = bigger
                continue
            buf[comma] = _CLOSE
            yield memoryview(buf)[: comma + 1]
            rest = fill - comma - 1
            buf[1 : 1 + rest] = buf[comma + 1 : fill]
            fill = 1 + rest


def _last(buf: bytearray, fill: int) -> memoryview:
    """The final block: everything left, which must end with the closing bracket."""
    end = fill
    while end > 0 and buf[end - 1] in _SPACE:
        end -= 1
    block = memoryview(buf)[:end]
    if end < 2 or buf[end - 1] != _CLOSE or not is_json(block):
        raise Incomplete("the array never closes, or is not valid JSON")
    return block
