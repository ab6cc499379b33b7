"""A shard run from start to finish: plan, manifest, per-episode records, completion.

The command that runs agents (``vlneval run``, every environment family) opens the shard with
:func:`shard_manifest` of the split's whole episode table, runs the agent on
``writer.remaining`` (global indices) passing each finished episode to :func:`recorder`'s
callback, and ends with ``writer.complete(card)``.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from vlneval._version import __version__
from vlneval.agents.progress import episode_progress
from vlneval.distributed.checkpoint import checkpoint_fingerprint
from vlneval.distributed.plan import ShardSpec, ids_digest, plan
from vlneval.distributed.shardfile import FORMAT, ShardWriter
from vlneval.errors import VLNEvalError

__all__ = ["recorder", "shard_manifest", "Stopped", "stop_on_sigterm"]


class Stopped(KeyboardInterrupt):
    """A run stopped by SIGTERM (a SLURM time limit, a preemption), raised as Ctrl-C's
    ``KeyboardInterrupt`` is, so that the same cleanup runs (the last progress line, a Ray
    cluster this process started) and the command can say how to ``--resume``.

    Attributes:
        signum: the signal's number.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stopped(signum: int, _frame: Any) -> None:
    raise Stopped(signum)


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """Inside, SIGTERM raises :class:`Stopped` (in the main thread; elsewhere nothing changes).

    Example:
        >>> import os
        >>> try:
        ...     with stop_on_sigterm():
        ...         os.kill(os.getpid(), signal.SIGTERM)
        ... except Stopped as exc:
        ...     print(exc.signum == signal.SIGTERM, exc)
        True SIGTERM
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def shard_manifest(
    spec: ShardSpec,
    episodes: Any,
    *,
    kind: str,
    seed: int,
    agent: Mapping[str, Any],
    settings: Mapping[str, Any],
    profile: str | None = None,
    data_version: str | None = None,
    environment: str | None = None,
    checkpoint: str | Path | None = None,
    balance_scans: bool = False,
) -> dict[str, Any]:
    """The manifest fields of shard ``spec`` of a run over ``episodes`` (any table with ``task``,
    ``split``, ``ids``, ``scans`` and ``id_field``)."""
    ids = [str(e) for e in episodes.ids]
    if spec.count > len(ids):  # refused before a plan of that many shards is built
        raise VLNEvalError(
            f"shard {spec.label} ({spec.source}): more shards than the {len(ids)} episodes of "
            f"{episodes.task} {episodes.split}: use at most {len(ids)} shards"
        )
    assigned = plan(ids, spec.count, scans=list(episodes.scans), balance_scans=balance_scans)
    ckpt = checkpoint_fingerprint(checkpoint) if checkpoint is not None else None
    instr_ids = getattr(episodes, "instr_ids", None)
    return {
        "format": FORMAT,
        "kind": kind,
        "task": episodes.task,
        "split": episodes.split,
        "data_version": data_version,
        "profile": profile,
        "vlneval_version": __version__,
        "episodes_sha256": ids_digest(ids),
        "n_expected": len(ids),
        "shard_index": spec.index,
        "shard_count": spec.count,
        "shard_source": spec.source,
        "balance_scans": balance_scans,
        "seed": seed,
        "agent": dict(agent),
        "environment": environment,
        "settings": dict(settings),
        "checkpoint_sha256": None if ckpt is None else ckpt["sha256"],
        "checkpoint": ckpt,
        # a continuous run's records are r2r-ce predictions, keyed by episode_id whatever its
        # table calls the ids (instr_id in a twin of R2R)
        "id_field": "episode_id" if kind == "continuous" else episodes.id_field,
        "episode_ids": ids,
        "instr_ids": None if instr_ids is None else [str(x) for x in instr_ids],
        "assigned": assigned[spec.index],
    }


@contextmanager
def recorder(
    writer: ShardWriter, *, progress: bool, interval: float = 30.0
) -> Iterator[Callable[..., None]]:
    """Yields ``record(index, record, extra=None)``: writes the line, advances the progress."""
    m = writer.manifest
    total = len(m["assigned"])
    label = f"shard {m['shard_index']}/{m['shard_count']}"
    with episode_progress(
        total, label=label, enabled=progress, done=writer.done, interval=interval
    ) as advance:

        def record(i: int, rec: Any, extra: Any = None) -> None:
            writer.write(i, rec, extra)
            advance(1)

        yield record
