"""Worker processes started and kept alive by ``vlneval serve --workers N``.

Each worker is ``python -m vlneval worker`` with the server's settings; the database URL travels
in the environment (not on the command line, where ``ps`` would show a password). A worker that
exits is started again after a back-off that doubles up to 30 s and resets once a worker has
run for a minute; a worker whose ``serve`` dies (even by SIGKILL) notices its parent is gone
and stops after its current submission; on shutdown every worker gets SIGTERM (it finishes
its current submission) and, after a grace period, SIGKILL (its lease then expires and another
worker scores the submission).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from vlneval.server.core.config import ServerConfig

__all__ = ["WorkerPool", "Backoff", "worker_command", "PARENT_ENV", "HEALTHY_SECONDS"]

PARENT_ENV = "VLNEVAL_WORKER_PARENT"  # the pid of `vlneval serve`: a worker exits when it dies
HEALTHY_SECONDS = 60.0  # a worker that ran this long before exiting restarts after 1 s again

log = logging.getLogger("vlneval.server.services.supervise")


def worker_command(cfg: ServerConfig) -> list[str]:
    """The command line of one worker with ``cfg``'s limits.

    Example:
        >>> worker_command(ServerConfig(data_dir="/tmp/x"))[1:4]
        ['-m', 'vlneval', 'worker']
    """
    return [
        sys.executable, "-m", "vlneval", "worker",
        "--lease-seconds", str(cfg.lease_seconds),
        "--poll-seconds", str(cfg.poll_seconds),
        "--max-attempts", str(cfg.max_attempts),
        "--scoring-timeout", str(cfg.scoring_timeout_seconds),
        "--max-upload-mb", str(cfg.max_upload_bytes / (1024 * 1024)),
        "--max-json-mb", str(cfg.max_decompressed_bytes / (1024 * 1024)),
    ]  # fmt: skip


class Backoff:
    """The delay before restarting a worker that exited: it doubles while the worker keeps
    exiting soon after its start, up to ``most`` seconds, and is ``first`` again once a worker
    ran ``healthy`` seconds (a new fault, not a crash loop).

    Example:
        >>> b = Backoff()
        >>> [b.delay(ran_for=2.0) for _ in range(7)]
        [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
        >>> b.delay(ran_for=HEALTHY_SECONDS), b.delay(ran_for=0.5)
        (1.0, 2.0)
    """

    def __init__(
        self, first: float = 1.0, most: float = 30.0, healthy: float = HEALTHY_SECONDS
    ) -> None:
        self.first, self.most, self.healthy = first, most, healthy
        self.current = first

    def delay(self, ran_for: float) -> float:
        """The delay before the next start of a worker that exited after ``ran_for`` seconds."""
        if ran_for >= self.healthy:
            self.current = self.first
        out = self.current
        self.current = min(self.current * 2, self.most)
        return out


class WorkerPool:
    """``n`` worker processes, restarted when they exit (after a :class:`Backoff` delay).

    Args:
        cfg: the server's settings (the workers get them in their environment).
        n: how many workers.
        backoff: makes each worker's :class:`Backoff` (the defaults: 1 s doubling to 30 s,
            reset after a minute of healthy running).
        poll: how often (seconds) the pool looks for exited workers.
        command: the worker command line (default: :func:`worker_command`).
    """

    def __init__(
        self,
        cfg: ServerConfig,
        n: int,
        *,
        backoff: Callable[[], Backoff] = Backoff,
        poll: float = 1.0,
        command: list[str] | None = None,
    ) -> None:
        self.cfg, self.n, self.poll = cfg, n, poll
        self.command = command or worker_command(cfg)
        self.backoffs = [backoff() for _ in range(n)]
        self.delays: list[tuple[int, float]] = []  # (worker, delay) of every restart
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * n
        self.started = [0.0] * n
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="worker-pool")

    def _spawn(self, i: int) -> None:
        env = {**os.environ, **self.cfg.to_env(), PARENT_ENV: str(os.getpid())}
        self.procs[i] = subprocess.Popen(self.command, env=env)  # noqa: S603
        self.started[i] = time.monotonic()
        log.info("started worker %d (pid %d)", i, self.procs[i].pid)  # type: ignore[union-attr]

    def start(self) -> None:
        """Starts the workers and the thread that restarts them."""
        for i in range(self.n):
            self._spawn(i)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(self.poll):
            for i, p in enumerate(self.procs):
                if p is not None and p.poll() is not None and not self._stop.is_set():
                    delay = self.backoffs[i].delay(time.monotonic() - self.started[i])
                    log.warning(
                        "worker %d (pid %d) exited with %s; restarting in %.1f s",
                        i, p.pid, p.returncode, delay,
                    )  # fmt: skip
                    self.delays.append((i, delay))
                    if self._stop.wait(delay):
                        return
                    self._spawn(i)

    def stop(self, grace: float = 30.0) -> None:
        """SIGTERM to every worker, SIGKILL to those still running after ``grace`` seconds."""
        self._stop.set()
        live = [p for p in self.procs if p is not None and p.poll() is None]
        for p in live:
            p.terminate()
        deadline = time.monotonic() + grace
        for p in live:
            try:
                p.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
