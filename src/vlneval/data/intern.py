"""Interning byte spans across the blocks of a file: one code per distinct text.

The viewpoint ids of a 200,000-episode file repeat a few thousand distinct texts millions of
times. :class:`SpanInterner` gives each span the code of its text in one compiled pass per
block, keeping each distinct text's bytes once, so that only the distinct texts ever become
Python strings (:meth:`SpanInterner.texts`, at the end).

Example:
    >>> interner = SpanInterner()
    >>> interner.add(b"ab cd ab", np.array([0, 3, 6]), np.array([2, 5, 8])).tolist()
    [0, 1, 0]
    >>> interner.add(b"cd ef", np.array([0, 3]), np.array([2, 5])).tolist()
    [1, 2]
    >>> interner.texts()
    ['ab', 'cd', 'ef']
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from vlneval.data.scan import Buffer, _buffer, _int64, span_strings

__all__ = ["SpanInterner", "VIEWPOINT_CAPACITY"]

#: Room for every viewpoint id of the 90 Matterport3D scans (10,559 nodes) without growing.
VIEWPOINT_CAPACITY = 1 << 14


def _grown(a: np.ndarray, need: int, fill: int) -> np.ndarray:
    """``a`` with room for ``need`` items (doubling), its first ``fill`` items kept."""
    if need <= len(a):
        return a
    out = np.empty(max(need, 2 * len(a)), dtype=a.dtype)
    out[:fill] = a[:fill]
    return out


def _checked(raw: Buffer, starts: Any, ends: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The buffer and spans as the kernels take them; spans outside the buffer are refused
    (the kernels do not check bounds)."""
    buf, starts, ends = _buffer(raw), _int64(starts), _int64(ends)
    if len(starts) != len(ends) or (
        len(starts) and ((ends < starts).any() or starts.min() < 0 or ends.max() > len(buf))
    ):
        raise ValueError("spans must lie in the buffer: as many ends as starts, in order")
    return buf, starts, ends


class SpanInterner:
    """Distinct texts of byte spans seen so far, and a compiled table to find them."""

    def __init__(self, capacity: int = 1024) -> None:
        """An empty table with room for ``capacity`` distinct texts before it grows."""
        capacity = max(int(capacity), 16)
        self.blob = np.empty(1 << 16, np.uint8)
        self.starts = np.empty(capacity, np.int64)
        self.ends = np.empty(capacity, np.int64)
        self.hashes = np.empty(capacity, np.uint64)
        self.slots = np.full(1 << (2 * capacity).bit_length(), -1, np.int32)
        self.used = np.zeros(2, np.int64)  # [entries, blob bytes]

    def __len__(self) -> int:
        return int(self.used[0])

    def add(self, raw: Buffer, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The code (``int32``) of each span ``raw[starts[j]:ends[j]]``."""
        from vlneval.data._intern_kernel import intern_spans, rehash

        buf, starts, ends = _checked(raw, starts, ends)
        n, size = int(self.used[0]), int(self.used[1])
        need = n + len(starts)
        self.blob = _grown(self.blob, size + int((ends - starts).sum()), size)
        self.starts = _grown(self.starts, need, n)
        self.ends = _grown(self.ends, need, n)
        self.hashes = _grown(self.hashes, need, n)
        table = (self.starts, self.ends, self.hashes)
        codes = np.empty(len(starts), np.int32)
        q = 0
        while True:
            q = intern_spans(buf, starts, ends, codes, q, table, self.blob, self.slots, self.used)
            if q == len(starts):
                return codes
            self.slots = rehash(self.hashes, int(self.used[0]), 2 * len(self.slots))

    def find(self, raw: Buffer, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The code (``int32``) of each span's text, -1 where the text was never added.

        Example:
            >>> interner = SpanInterner()
            >>> _ = interner.add(b"ab cd", np.array([0, 3]), np.array([2, 5]))
            >>> interner.find(b"cd xy", np.array([0, 3]), np.array([2, 5])).tolist()
            [1, -1]
        """
        from vlneval.data._intern_kernel import find_spans

        buf, starts, ends = _checked(raw, starts, ends)
        table = (self.starts, self.ends, self.hashes)
        return find_spans(buf, starts, ends, table, self.blob, self.slots)  # type: ignore[no-any-return]

    def texts(self) -> list[str]:
        """Every distinct text, in order of code (interned strings).

        Raises:
            UnicodeDecodeError: a text is not valid UTF-8.
        """
        n = len(self)
        return list(map(sys.intern, span_strings(self.blob, self.starts[:n], self.ends[:n])))
