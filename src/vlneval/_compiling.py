"""One line on stderr when a numba kernel's first call is slow (it is being compiled).

Numba compiles a kernel on its first call in a fresh environment (a few seconds) and caches the
machine code for later processes. The few modules that still use numba (batched environment
stepping, continuous DTW, the street graph's breadth-first search) wrap each kernel's first call
in :func:`first_call`, so that a user never watches a silent pause.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["first_call", "NOTICE_AFTER_S"]

NOTICE_AFTER_S = 1.0  # a first call shorter than this says nothing
_done: set[str] = set()
_lock = threading.Lock()


@contextmanager
def first_call(what: str) -> Iterator[None]:
    """Runs the block; the first time for ``what``, prints a notice if it exceeds a second.

    Example:
        >>> with first_call("a quick kernel"):
        ...     pass  # under a second: nothing is printed
    """
    if what in _done:
        yield
        return
    began = time.perf_counter()
    shown = threading.Event()

    def notice() -> None:
        shown.set()
        print(
            f"vlneval: compiling {what} (first use after install; cached for later runs)...",
            file=sys.stderr,
            flush=True,
        )

    timer = threading.Timer(NOTICE_AFTER_S, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with _lock:
            _done.add(what)
        if shown.is_set():
            took = time.perf_counter() - began
            print(f"vlneval: {what} ready ({took:.1f} s)", file=sys.stderr, flush=True)
