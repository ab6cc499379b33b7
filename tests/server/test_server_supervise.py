"""The worker pool of ``vlneval serve``: restart back-off that doubles in a crash loop and
resets after a healthy period (with real processes, on a fast clock)."""

from __future__ import annotations

import functools
import sys
import time

from vlneval.server.core.config import ServerConfig
from vlneval.server.services.supervise import Backoff, WorkerPool


def test_backoff_doubles_to_its_cap_and_resets_after_a_healthy_run():
    b = Backoff(first=1.0, most=30.0, healthy=60.0)
    assert [b.delay(ran_for=0.2) for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    assert b.delay(ran_for=59.9) == 30
    assert b.delay(ran_for=60.0) == 1.0
    assert b.delay(ran_for=0.1) == 2.0


def _wait(pred, seconds=20.0):
    deadline = time.monotonic() + seconds
    while not pred() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pred()


def test_the_pool_restarts_a_crashing_worker_with_growing_then_reset_delays(tmp_path):
    """Three crashes at once: 0.05, 0.1, 0.2 s; then a worker that runs past the healthy period
    before it exits is restarted after 0.05 s again."""
    lifetime = tmp_path / "lifetime"
    lifetime.write_text("0")
    code = "import sys, time; time.sleep(float(open(sys.argv[1]).read())); sys.exit(1)"
    pool = WorkerPool(
        ServerConfig(data_dir=tmp_path / "data"),
        1,
        backoff=functools.partial(Backoff, first=0.05, most=0.4, healthy=1.0),
        poll=0.02,
        command=[sys.executable, "-c", code, str(lifetime)],
    )
    pool.start()
    try:
        _wait(lambda: len(pool.delays) >= 3)
        lifetime.write_text("1.5")  # the next workers live past the healthy period
        _wait(lambda: len(pool.delays) >= 5)
    finally:
        pool.stop(grace=2.0)
    delays = [d for _, d in pool.delays]
    assert delays[:3] == [0.05, 0.1, 0.2]
    # the worker started after the third crash may have read "0" or "1.5"; the first one known
    # to have lived 1.5 s is restarted after the first delay again
    assert 0.05 in delays[3:5]
    assert all(p is None or p.poll() is not None for p in pool.procs)
