"""The scoring worker: claim a queued submission, score it, record the result, repeat.

Run as many as you like (``vlneval worker``, on one machine or several sharing the data folder
and database). While a worker scores, a heartbeat thread extends its lease; if the worker dies
(even by SIGKILL) the lease runs out and another worker claims the submission again, up to
``max_attempts`` times. SIGTERM or Ctrl-C lets the current submission finish, then stops; a
second signal stops at once (the lease then hands the submission to another worker). A
submission is scored in a thread of its own, so that a signal is always the worker's to handle
(an output written while scoring finishes, then the worker stops). A worker
that scores one file longer than ``scoring_timeout_seconds`` records the failure and exits, so
that its supervisor (``vlneval serve`` or systemd) starts a fresh one.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from vlneval import __version__
from vlneval.server.core.config import ServerConfig
from vlneval.server.core.database import Database
from vlneval.server.services.budget import StepBudget
from vlneval.server.services.queue import Claim, claim, finish, heartbeat, release
from vlneval.server.services.scoring import (
    Outcome,
    PhaseData,
    PhaseSpec,
    check_unchanged,
    internal_failure,
    load_phase_data,
    raw_redactor,
    score_file,
)
from vlneval.server.services.storage import StorageError, UploadStore
from vlneval.server.services.supervise import PARENT_ENV
from vlneval.server.services.uploads import UploadLimits

__all__ = ["Worker", "FAULT_DELAY_ENV"]

log = logging.getLogger("vlneval.server.services.worker")

# Testing hook: seconds a worker waits (heartbeating) between claiming and scoring, so that a
# fault test can kill it while it holds a submission.
FAULT_DELAY_ENV = "VLNEVAL_WORKER_FAULT_DELAY"


class Worker:
    """One scoring worker.

    Args:
        cfg: the server configuration (data folder, database, limits, lease).
        db: an open database (default: opened from ``cfg``).
        name: how the worker is named in the database (default ``host:pid``).
    """

    def __init__(
        self, cfg: ServerConfig, db: Database | None = None, name: str | None = None
    ) -> None:
        self.cfg = cfg
        self.db = db or Database(cfg.database_url)
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.store = UploadStore(cfg.uploads_dir)
        self.limits = UploadLimits.from_config(cfg)
        self.version = __version__
        self.stopping = threading.Event()
        self._phases: dict[PhaseSpec, PhaseData] = {}
        self.processed = 0

    def install_signal_handlers(self) -> None:
        """SIGTERM/SIGINT: finish the current submission, then stop; twice: stop now."""

        def handler(signum: int, _frame: Any) -> None:
            if self.stopping.is_set():
                log.warning("second signal: stopping now")
                os._exit(128 + signum)
            log.info("signal %d: finishing the current submission, then stopping", signum)
            self.stopping.set()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def run(self, *, max_jobs: int | None = None, exit_when_idle: bool = False) -> int:
        """Processes submissions until stopped; returns how many were processed."""
        log.info("worker %s started (database %r)", self.name, self.db)
        idle = self.cfg.poll_seconds
        parent = os.environ.get(PARENT_ENV)
        while not self.stopping.is_set():
            if max_jobs is not None and self.processed >= max_jobs:
                break
            if parent and str(os.getppid()) != parent:
                log.warning("worker %s: its server (pid %s) is gone; stopping", self.name, parent)
                break
            if self.run_one():
                idle = self.cfg.poll_seconds
                continue
            if exit_when_idle:
                break
            self.stopping.wait(idle)
            idle = min(idle * 1.5, max(self.cfg.poll_seconds, 2.0))
        self.close_phases()
        log.info("worker %s stopped after %d submission(s)", self.name, self.processed)
        return self.processed

    def close_phases(self) -> None:
        """Drops every loaded phase, removing their public copies."""
        phases, self._phases = list(self._phases.values()), {}
        for data in phases:
            data.close()

    def run_one(self) -> bool:
        """Claims and processes one submission; False when none was waiting."""
        c = claim(
            self.db,
            self.name,
            lease_seconds=self.cfg.lease_seconds,
            max_attempts=self.cfg.max_attempts,
        )
        if c is None:
            return False
        log.info("claimed submission %s (attempt %d)", c.uid, c.attempts)
        started = time.monotonic()
        done = threading.Event()
        beat = threading.Thread(target=self._heartbeat, args=(c, done, started), daemon=True)
        beat.start()
        try:
            self._fault_delay()
            outcome = self._score_apart(c)
        except BaseException:
            done.set()
            beat.join()
            if self.stopping.is_set():
                release(self.db, c)
            raise
        done.set()
        beat.join()
        recorded = finish(self.db, c, outcome, scorer_version=self.version)
        self.processed += 1
        elapsed = time.monotonic() - started
        if not recorded:
            log.warning("submission %s: lease lost while scoring; result discarded", c.uid)
        else:
            log.info(
                "submission %s %s in %.2f s%s", c.uid, outcome.status, elapsed, _brief(outcome, c)
            )
        return True

    def _score_apart(self, c: Claim) -> Outcome:
        """:meth:`_score` in a thread of its own, so that this worker's signal handlers stay
        in place throughout: an output written on the way swaps the handlers of the main
        thread alone (to remove its temporary files when a signal would end the process), and
        a SIGTERM then ended the worker mid-write instead of letting the submission finish."""
        with ThreadPoolExecutor(1, thread_name_prefix=f"score-{c.uid}") as scorer:
            # waiting for it, this (the main) thread still runs a signal's handler at once
            return scorer.submit(self._score, c).result()

    def _fault_delay(self) -> None:
        delay = float(os.environ.get(FAULT_DELAY_ENV, "0") or 0)
        if delay > 0:
            time.sleep(delay)

    def _heartbeat(self, c: Claim, done: threading.Event, started: float) -> None:
        period = max(self.cfg.lease_seconds / 3.0, 0.05)
        while not done.wait(period):
            if time.monotonic() - started > self.cfg.scoring_timeout_seconds:
                self._give_up(c)
            try:
                if not heartbeat(self.db, c, lease_seconds=self.cfg.lease_seconds):
                    log.warning("submission %s: lease lost", c.uid)
                    return
            except Exception:  # noqa: BLE001 - a database hiccup: the next beat retries
                log.exception("heartbeat failed")

    def _give_up(self, c: Claim) -> None:
        limit = self.cfg.scoring_timeout_seconds
        outcome = internal_failure(
            f"scoring {c.uid} took longer than {limit:.0f} s", None, spec=c.spec
        )
        outcome.messages = [
            f"scoring took longer than this server's limit of {limit:.0f} s; it is not counted "
            "against your quota, and the organisers have been told"
        ]
        finish(self.db, c, outcome, scorer_version=self.version)
        log.error("worker %s exits after a scoring timeout (its supervisor restarts it)", self.name)
        self.close_phases()  # os._exit skips the finalisers that would remove the public copies
        os._exit(3)

    def _phase(self, spec: PhaseSpec) -> PhaseData:
        data = self._phases.get(spec)
        if data is not None:
            check_unchanged(spec)  # evaluate() reads the file again: it must be the same one
        else:
            data = load_phase_data(spec)
            self._phases[spec] = data
        return data

    def _score(self, c: Claim) -> Outcome:
        try:
            data = self._phase(c.spec)
        except Exception as exc:  # noqa: BLE001 - the phase's data is broken: the organisers' side
            reason = f"loading the data of submission {c.uid}'s phase"
            return internal_failure(reason, raw_redactor(c.spec.episodes_file), exc, spec=c.spec)
        try:
            raw = self.store.read_verified(c.storage_key, c.sha256)
        except StorageError as exc:
            return internal_failure(str(exc), data.redactor, spec=c.spec)
        budget = StepBudget.of_phase(c.n_episodes, self.cfg) if c.n_episodes else None
        return score_file(
            self.store.path(c.storage_key),
            raw,
            c.filename,
            c.spec,
            data,
            declared=c.declared or None,
            limits=self.limits,
            budget=budget,
        )


def _brief(outcome: Outcome, c: Claim) -> str:
    if outcome.metrics is not None:
        value = outcome.metrics.get(c.spec.primary_metric)
        return f": {c.spec.primary_metric} {value}"
    return f" ({outcome.error_kind}, {len(outcome.messages)} message(s))"
