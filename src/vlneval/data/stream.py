"""Reading a large top-level JSON array in blocks of whole records.

A 100 MB predictions file need not be in memory at once: it is read (and gunzipped) in blocks,
each cut after the last top-level comma, and every cut is handed on as a small, complete JSON
array (``[rec, rec, ...]``). A compiled pass tracks strings, escapes and nesting to find the
cuts. Whether each block is valid JSON is for the consumer to check (the field scanner does).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = ["array_blocks", "Incomplete", "BLOCK"]

BLOCK = 1 << 22  # 4 MiB of file per read


def _boundary(buf: bytes) -> tuple[int, int]:
    from vlneval.data._stream_kernel import last_boundary

    return last_boundary(np.frombuffer(buf, dtype=np.uint8))  # type: ignore[no-any-return]


def _raw_blocks(path: Path, size: int) -> Iterator[bytes]:
    with path.open("rb") as fh:
        head = fh.read(2)
        fh.seek(0)
        if head != b"\x1f\x8b":
            while block := fh.read(size):
                yield block
            return
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while block := fh.read(size):
            yield inflate.decompress(block)
        yield inflate.flush()


def array_blocks(path: str | Path, *, size: int = BLOCK) -> Iterator[bytes] | None:
    """Blocks of whole records of the JSON array in ``path`` (``.json`` or gzipped), each a
    complete JSON array; None when the file does not start with ``[``.

    The generator raises :class:`Incomplete` if the array never closes or is followed by
    anything but white space; callers treat that as a reason to decline.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.json"
        >>> _ = p.write_text('[{"a": "x,]"}, [1, 2], 3]')
        >>> list(array_blocks(p, size=5))[-1][-3:]
        b' 3]'
    """
    path = Path(path)
    blocks = _raw_blocks(path, size)
    pending = b""
    for block in blocks:
        pending += block
        stripped = pending.lstrip()
        if stripped:
            if stripped[:1] != b"[":
                return None
            pending = stripped[1:]
            break
    else:
        return None
    return _cut(pending, blocks)


class Incomplete(Exception):
    """The array never closed, or something other than white space followed it."""


def _cut(pending: bytes, blocks: Iterator[bytes]) -> Iterator[bytes]:
    exhausted = False
    while True:
        last, end = _boundary(pending)
        if end >= 0:
            rest = pending[end + 1 :]
            for block in blocks:
                rest += block
            if rest.strip():
                raise Incomplete("data after the closing bracket")
            yield b"[" + pending[: end + 1]
            return
        if last >= 0:
            yield b"[" + pending[:last] + b"]"
            pending = pending[last + 1 :]
        if exhausted:
            raise Incomplete("the array never closes")
        following = next(blocks, None)
        if following is None:
            exhausted = True
        else:
            pending += following
