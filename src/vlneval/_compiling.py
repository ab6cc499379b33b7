"""One line on stderr while numba compiles a kernel for more than a second.

Numba compiles a kernel on its first call in a fresh environment (a few seconds) and caches the
machine code for later processes. The few modules that still use numba (batched environment
stepping, continuous DTW, the street graph's breadth-first search) wrap each kernel's first call
in :func:`first_call`, so that a user never watches a silent pause. The notice follows numba's
own ``numba:compile`` event: a first call that reads the cache, or whose own work is slow (the
street graph's searches for every route), says nothing, so it never claims a compile that does
not happen.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["first_call", "silenced", "NOTICE_AFTER_S"]

NOTICE_AFTER_S = 1.0  # a compile shorter than this says nothing
_done: set[str] = set()
_lock = threading.Lock()
_silent = [0]  # blocks inside silenced(), in any thread


@contextmanager
def silenced() -> Iterator[None]:
    """No notice while the block runs, in any thread (the command line's ``--quiet``).

    Example:
        >>> with silenced():
        ...     pass  # a kernel compiled here says nothing
    """
    with _lock:  # ``+=`` on a shared counter is not atomic
        _silent[0] += 1
    try:
        yield
    finally:
        with _lock:
            _silent[0] -= 1


@contextmanager
def first_call(what: str) -> Iterator[None]:
    """Runs the block; the first time for ``what``, prints a notice once numba has been
    compiling in it for a second (the callers have imported numba).

    Example:
        >>> with first_call("a quick kernel"):
        ...     pass  # nothing compiled: nothing is printed
    """
    if what in _done or _silent[0]:
        yield
        return
    from numba.core import event  # deferred: numba

    began = time.perf_counter()
    compiling = [0]  # numba compiles now (nested compiles count each)
    shown = threading.Event()

    def notice() -> None:
        with _lock:
            if not compiling[0] or shown.is_set():
                return
            shown.set()
        print(
            f"vlneval: compiling {what} (first use after install; cached for later runs)...",
            file=sys.stderr,
            flush=True,
        )

    class Compiles(event.Listener):
        def on_start(self, ev: Any) -> None:
            compiling[0] += 1
            if time.perf_counter() - began >= NOTICE_AFTER_S:
                notice()

        def on_end(self, ev: Any) -> None:
            compiling[0] -= 1

    timer = threading.Timer(NOTICE_AFTER_S, notice)
    timer.daemon = True
    with event.install_listener("numba:compile", Compiles()):
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
