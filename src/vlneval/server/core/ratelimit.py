"""Small in-process rate limits: a token bucket per key (a team's token, a client address).

Each key may make ``burst`` requests at once and then ``rate`` per minute. The buckets live in
the web process (one ``vlneval serve``); they bound what one client can make the server do in a
minute, while quotas (in the database) bound what a team may submit in a day. The clock is a
parameter, so tests run on a fake one. :func:`rate_limit` answers a request past its key's rate
with 429 and ``Retry-After``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException as StarletteHTTPException

if TYPE_CHECKING:
    from fastapi import Request

__all__ = ["RateLimiter", "rate_limit"]

MAX_KEYS = 10_000  # the least recently used buckets are forgotten past this many (full again)


class RateLimiter:
    """Token buckets by key.

    Args:
        rate: requests per minute, refilled continuously.
        burst: requests allowed at once (the bucket's size).
        clock: seconds, monotonic (default :func:`time.monotonic`).

    Example:
        >>> now = [0.0]
        >>> lim = RateLimiter(rate=60, burst=2, clock=lambda: now[0])
        >>> [lim.allow("a") for _ in range(3)], lim.allow("b")
        ([0.0, 0.0, 1.0], 0.0)
        >>> now[0] = 1.0
        >>> lim.allow("a")
        0.0
    """

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.per_second, self.burst, self.clock = rate / 60.0, float(burst), clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, key: str) -> float:
        """Takes a token for ``key``: 0.0 when allowed, else the seconds until one is free."""
        now = self.clock()
        with self._lock:
            tokens, last = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.per_second)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                wait = 0.0
            else:
                self._buckets[key] = (tokens, now)
                wait = (1.0 - tokens) / self.per_second if self.per_second > 0 else float("inf")
            while len(self._buckets) > MAX_KEYS:
                self._buckets.popitem(last=False)
            return wait


def rate_limit(request: Request, which: str, key: str) -> None:
    """Refuses (429, with ``Retry-After``) a request past its per-key rate."""
    limiter: RateLimiter = getattr(request.app.state, f"{which}_limiter")
    wait = limiter.allow(key)
    if wait > 0:
        seconds = max(1, int(wait + 0.999))
        raise StarletteHTTPException(
            429,
            f"too many {which} requests; try again in {seconds} s",
            headers={"Retry-After": str(seconds)},
        )
