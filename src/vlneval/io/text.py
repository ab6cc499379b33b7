"""Short pieces of error messages: a long value clipped, a byte offset as line and column."""

from __future__ import annotations

#: How many characters of a path messages show (a str of JSON text taken for one is long).
PATH_CLIP = 240


def clip(text: str, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters for a message (a 1 MB id stays readable).

    Example:
        >>> clip("x" * 100, 10)
        'xxxxxxxxxx… (100 characters)'
    """
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def position(raw: bytes, offset: int) -> str:
    """``line L, column C (byte N)`` of a byte offset.

    Example:
        >>> position(b'[1,\\n 2]', 5)
        'line 2, column 2 (byte 5)'
    """
    line = raw.count(b"\n", 0, offset) + 1
    col = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {col} (byte {offset})"
