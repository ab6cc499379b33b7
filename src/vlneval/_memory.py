"""Returning freed heap memory to the operating system between the phases of a large run."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

__all__ = ["release_memory"]


@functools.cache
def _trim() -> object | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to do
        return None


def release_memory() -> None:
    """Asks glibc to return the free parts of its heap (``malloc_trim``); a no-op elsewhere.

    Parsing a large file frees hundreds of megabytes of temporaries; without this, glibc keeps
    them, and the next phase's peak adds to them instead of reusing them.

    Example:
        >>> release_memory()
    """
    trim = _trim()
    if trim is not None:
        trim(0)  # type: ignore[operator]
