"""Returning freed heap memory to the operating system between the phases of a large run."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

__all__ = ["release_memory", "prefer_mmap"]

M_MMAP_THRESHOLD = -3  # mallopt's parameter number (glibc malloc.h)


@functools.cache
def _libc_function(name: str) -> object | None:
    library = ctypes.util.find_library("c")
    if not library:
        return None
    try:
        return getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError):  # not glibc: nothing to do
        return None


def _trim() -> object | None:
    return _libc_function("malloc_trim")


def prefer_mmap(threshold: int = 1 << 20) -> None:
    """Makes glibc serve every allocation of ``threshold`` bytes or more with its own mapping,
    returned to the system as soon as it is freed; a no-op elsewhere.

    By default glibc raises this threshold each time a large block is freed, after which large
    temporaries (a numpy array of a few MB) come from the heap and stay resident when freed.
    The ``vlneval`` command fixes it once at start (a library should not change its host's
    allocator, so only the command does).

    Example:
        >>> prefer_mmap()
    """
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(M_MMAP_THRESHOLD, int(threshold))  # type: ignore[operator]


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
