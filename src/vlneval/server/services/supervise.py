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

from vlneval.server.core.config import ServerConfig

__all__ = ["WorkerPool", "worker_command", "PARENT_ENV", "HEALTHY_SECONDS"]

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


class WorkerPool:
    """``n`` worker processes, restarted when they exit."""

    def __init__(self, cfg: ServerConfig, n: int) -> None:
        self.cfg, self.n = cfg, n
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * n
        self.started = [0.0] * n
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="worker-pool")

    def _spawn(self, i: int) -> None:
        env = {**os.environ, **self.cfg.to_env(), PARENT_ENV: str(os.getpid())}
        self.procs[i] = subprocess.Popen(worker_command(self.cfg), env=env)  # noqa: S603
        self.started[i] = time.monotonic()
        log.info("started worker %d (pid %d)", i, self.procs[i].pid)  # type: ignore[union-attr]

    def start(self) -> None:
        """Starts the workers and the thread that restarts them."""
        for i in range(self.n):
            self._spawn(i)
        self._thread.start()

    def _watch(self) -> None:
        backoff = [1.0] * self.n
        while not self._stop.wait(1.0):
            for i, p in enumerate(self.procs):
                if p is not None and p.poll() is not None and not self._stop.is_set():
                    log.warning(
                        "worker %d (pid %d) exited with %s; restarting", i, p.pid, p.returncode
                    )
                    if time.monotonic() - self.started[i] >= HEALTHY_SECONDS:
                        backoff[i] = 1.0  # it ran well for a while: a new fault, not a loop
                    time.sleep(backoff[i])
                    backoff[i] = min(backoff[i] * 2, 30.0)
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
