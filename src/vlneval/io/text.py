"""Short pieces of messages: a long value clipped, a byte offset as line and column, paths named
by the folders that tell them apart."""

from __future__ import annotations

import functools
import os
import reprlib
from collections.abc import Sequence
from itertools import islice
from typing import Any

#: How many characters of a path messages show (a str of JSON text taken for one is long).
PATH_CLIP = 240


def clip(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for a message (a 1 MB id stays readable).

    Example:
        >>> clip("x" * 100, 10)
        'xxxxxxxxxx… (100 characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def brief(value: Any, limit: int = 60, *, sized: bool = False) -> str:
    """The first ``limit`` characters of ``repr(value)``, built without going deeper into
    nested lists, or further into a long string, than those need: the whole repr of a list
    nested 100,000 deep raises RecursionError, and that of a 500 MB string is 500 MB. A string
    cut tells its length; with ``sized``, any value cut is marked so, a list (any container)
    telling its number of items (that of its whole repr would need the repr written).

    Example:
        >>> deep = []
        >>> for _ in range(100_000):
        ...     deep = [deep]
        >>> brief(["a", 1.5, 0]), brief(deep, 8), brief([10**5000])
        ("['a', 1.5, 0]", '[[[[[[[[', '[an integer of about 5,000 digits]')
        >>> brief("x" * 10**6, 6)
        "'xxxxx… (1,000,000 characters)"
        >>> print(brief(chr(10) * 8, 12))  # the cut decided on the escaped text
        '\\n\\n\\n\\n\\n\\… (8 characters)
        >>> brief([7] * 10**5, 8, sized=True), brief(deep, 4, sized=True)
        ('[7, 7, 7… (100,000 items)', '[[[[… (1 item)')
    """
    shown = _repr(limit).repr(value)
    if len(shown) <= limit:
        return shown
    if isinstance(value, str):  # cut (escapes count): its length told
        return f"{shown[:limit]}… ({len(value):,} characters)"
    if not sized:
        return shown[:limit]
    n = len(value) if hasattr(value, "__len__") else None
    return f"{shown[:limit]}…" + ("" if n is None else f" ({n:,} item{'s' * (n != 1)})")


class _Brief(reprlib.Repr):
    """A ``reprlib.Repr`` that writes an integer of more digits than ``repr`` writes (4,300 by
    default, else ValueError) by its size, wherever it is nested."""

    def repr_int(self, x: int, level: int) -> str:
        try:
            return super().repr_int(x, level)
        except ValueError:
            return f"an integer of about {x.bit_length() * 0.30103:,.0f} digits"

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        """As ``repr``, in the dict's own order (``reprlib`` sorts the keys)."""
        if not x or level <= 0:
            return "{" + self.fillvalue * bool(x) + "}"
        items = islice(x.items(), self.maxdict)
        shown = [f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}" for k, v in items]
        return "{" + ", ".join(shown + [self.fillvalue] * (len(x) > self.maxdict)) + "}"


@functools.cache
def _repr(limit: int) -> reprlib.Repr:
    """A ``reprlib.Repr`` whose first ``limit`` characters are those of ``repr``."""
    r = _Brief()
    r.maxlevel = limit  # one character per level at least
    wide = 2 * limit + 8  # reprlib keeps the start of a long value: about half of this
    r.maxstring = r.maxlong = r.maxother = wide
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = r.maxfrozenset = r.maxdeque = limit
    return r


def position(raw: bytes, offset: int) -> str:
    """``line L, column C (byte N)`` of a byte offset.

    Example:
        >>> position(b'[1,\\n 2]', 5)
        'line 2, column 2 (byte 5)'
    """
    line = raw.count(b"\n", 0, offset) + 1
    col = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {col} (byte {offset})"


def short_names(paths: Sequence[str]) -> tuple[list[str], str]:
    """Each path below the folder every path is in, and that folder (empty when none is
    common, or only the root is: the paths are then named as given). Every row keeps the
    folders that tell it apart, at the same depth as the others.

    Example:
        >>> short_names(["/x/exp/a/run/ckpt.json", "/x/exp/b/run/ckpt.json", "/x/exp/c.json"])
        (['a/run/ckpt.json', 'b/run/ckpt.json', 'c.json'], '/x/exp')
        >>> short_names(["/e/seed_0/i_1.json", "/e/seed_0/i_2.json", "/e/seed_1/i_1.json"])
        (['seed_0/i_1.json', 'seed_0/i_2.json', 'seed_1/i_1.json'], '/e')
        >>> short_names(["runs/iter_1.json", "runs/iter_2.json"])
        (['iter_1.json', 'iter_2.json'], 'runs')
    """
    try:
        common = os.path.commonpath([os.path.dirname(p) for p in paths]) if paths else ""
    except ValueError:  # absolute and relative paths mixed
        common = ""
    if common in ("", os.sep):
        return list(paths), ""
    return [os.path.relpath(p, common) for p in paths], common
