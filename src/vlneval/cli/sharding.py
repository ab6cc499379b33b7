"""The shard options of ``vlneval run`` (every environment family), and their glue."""

from __future__ import annotations

import argparse
import contextlib
import signal
from pathlib import Path
from typing import Any

from vlneval.cli.common import err
from vlneval.distributed.checkpoint import parse_agent_args
from vlneval.distributed.detect import detect, resolve_shard
from vlneval.distributed.merge import card_path
from vlneval.distributed.session import recorder, shard_manifest
from vlneval.distributed.shardfile import KeptEpisodes, kept_episodes, open_shard
from vlneval.errors import VLNEvalError

__all__ = [
    "agent_kwargs",
    "kept_after_failure",
    "unsharded_without_launcher",
    "stopped_note",
    "CliShard",
]


def agent_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The agent's constructor arguments: ``--agent-arg`` pairs and ``checkpoint=``."""
    kwargs = parse_agent_args(getattr(args, "agent_arg", None))
    if getattr(args, "checkpoint", None) is not None:
        kwargs["checkpoint"] = str(args.checkpoint)
    return kwargs


def _kept(args: argparse.Namespace) -> KeptEpisodes | None:
    """What the run keeps of the episodes it finished (a shard, or any Ray run)."""
    return kept_episodes(args.out, resolve_shard(args.shard), ray=args.executor == "ray")


def kept_after_failure(args: argparse.Namespace) -> str:
    """What became of the episodes a run finished before its agent raised (:func:`_kept`)."""
    kept = _kept(args)
    if kept is None:
        return (
            f"nothing was written to {args.out} (the episodes finished before the error are not "
            "kept; with --shard 0/1 each episode is written as it ends, and --resume continues "
            "after a fix)"
        )
    records, n = kept.records, kept.finished
    if n == 0:
        return "no episode was finished: once the agent is fixed, run the same command again"
    finished = "1 episode finished is" if n == 1 else f"{n} episodes finished are"
    return (
        f"the {finished} kept in {records}: once the agent is fixed, the same command with "
        "--resume runs the rest (without --resume if the fix changes what the agent did in them)"
    )


def unsharded_without_launcher(args: argparse.Namespace) -> None:
    """``--shard auto`` with no launcher variables (a workstation trying a SLURM command): the
    run is an unsharded one writing ``--out``, said in a note (``--resume`` and
    ``--balance-scans`` then do nothing)."""
    if args.shard is None or args.shard.strip().lower() != "auto" or detect() is not None:
        return
    ignored = [f for f, on in (("--resume", args.resume), ("--balance-scans", args.balance_scans))
               if on]  # fmt: skip
    args.shard, args.resume, args.balance_scans = None, False, False
    err(
        "note: --shard auto: no launcher variables found (torchrun's RANK/WORLD_SIZE, SLURM's); "
        f"running unsharded into {args.out}"
        + (f" ({' and '.join(ignored)} ignored)" if ignored else "")
    )


def stopped_note(args: argparse.Namespace, signum: int) -> str:
    """What a run stopped by signal ``signum`` (Ctrl-C, SIGTERM) leaves (:func:`_kept`); a run
    stopped while ``--score`` scores it has written its predictions and card."""

    name = signal.Signals(signum).name
    if getattr(args, "scoring", False):  # stopped after the files were written
        given = [("--split", args.split), ("--profile", getattr(args, "profile", None)),
                 ("--data-root", getattr(args, "data_root", None))]  # fmt: skip
        opts = "".join(f" {flag} {value}" for flag, value in given if value)
        opts += " --subset" if getattr(args, "scoring_partial", False) else ""
        return (
            f"stopped by {name} while scoring: {args.out} and {card_path(args.out)} are written; "
            f"score them with `vlneval score --task {args.task}{opts} --predictions {args.out}`"
        )
    kept = _kept(args)
    if kept is None:
        return (
            f"stopped by {name}: nothing was written to {args.out} (a plain run keeps no episodes)"
        )
    if kept.assigned is None or not kept.records.is_file():
        return (
            f"{kept.label}: stopped by {name} before its first episode: run the same command again"
        )
    return (
        f"{kept.label}: stopped by {name} at {kept.finished}/{kept.assigned} episodes (kept in "
        f"{kept.records}); run the same command with --resume to finish"
    )


class CliShard:
    """The shard of one ``run`` invocation (None from :meth:`of` without --shard)."""

    def __init__(self, args: argparse.Namespace, spec: Any) -> None:
        self.args, self.spec = args, spec
        self.writer: Any = None
        self._stack = contextlib.ExitStack()

    @classmethod
    def of(cls, args: argparse.Namespace) -> CliShard | None:
        """The shard asked for, after checking the options that do not combine with it."""
        spec = resolve_shard(args.shard)
        if spec is None:
            if args.resume or args.balance_scans:
                raise VLNEvalError("--resume and --balance-scans need --shard (i/n or auto)")
            return None
        for flag, given in (("--limit", args.limit is not None), ("--score", args.score)):
            if given:
                raise VLNEvalError(
                    f"{flag} does not combine with --shard: merge the shards with `vlneval "
                    "merge`, then score the merged file"
                )
        return cls(args, spec)

    def open(
        self, episodes: Any, *, kind: str, settings: dict[str, Any], environment: str | None = None
    ) -> dict[str, Any] | None:
        """Starts the shard; the keyword arguments for the rollout (``indices``, ``on_record``),
        or None when nothing is left to run."""
        a = self.args
        manifest = shard_manifest(
            self.spec, episodes, kind=kind, seed=a.seed,
            agent={"spec": a.agent, "args": {k: v for k, v in agent_kwargs(a).items()
                                             if k != "checkpoint"}},
            settings=settings, profile=a.profile, data_version=getattr(a, "data_version", None),
            environment=environment, checkpoint=a.checkpoint, balance_scans=a.balance_scans,
        )  # fmt: skip
        root = getattr(a, "data_root", None)  # for merge's note on scoring it, from any folder
        manifest["data_root"] = None if root is None else str(Path(root).resolve())
        if not a.resume:
            _warn_discarded(a.out, self.spec)
        self.writer = open_shard(a.out, self.spec, manifest, resume=a.resume)
        if not self.writer.remaining:
            return None
        record = self._stack.enter_context(recorder(self.writer, progress=not a.quiet))
        return {"indices": self.writer.remaining, "on_record": record}

    def __enter__(self) -> CliShard:
        return self

    def __exit__(self, *exc: Any) -> None:
        """Ends the progress reporting (a no-op after :meth:`finish`): a failed run's last
        progress line ("stopped") comes before its error, not after it at exit."""
        self._stack.__exit__(*exc)

    def finish(self, card: dict[str, Any] | None, *, announce: bool = True) -> int:
        """Completes the shard and (with ``announce``) says where it is; the exit code."""
        self._stack.close()
        w = self.writer
        kept, ran = len(w.manifest["assigned"]) - len(w.remaining), len(w.remaining)
        w.complete(card if card is not None else w.manifest.get("card"))
        if not announce or self.args.quiet:
            return 0
        n = self.spec.count
        pattern = Path(self.args.out).with_name(w.records.name.replace(
            f"shard-{self.spec.index:0{len(str(n - 1))}d}-of", "shard-*-of"))  # fmt: skip
        err(
            f"shard {self.spec.label} ({self.spec.source}): {len(w.manifest['assigned'])} episodes"
            f" ({kept} already written, {ran} run); wrote "
            f"{w.records} and {w.manifest_path}; when all {n} are done: vlneval merge "
            f"{pattern} --out {self.args.out}"
        )
        return 0


def _warn_discarded(out: str | Path, spec: Any) -> None:
    """Says (before a run without ``--resume`` empties it) how many finished episodes the shard's
    records file holds: a requeued job re-runs its command and would lose them silently."""
    kept = kept_episodes(out, spec, ray=False)
    if kept is not None and kept.finished:
        err(
            f"warning: starting shard {spec.label} over: the {kept.finished} finished episodes "
            f"in {kept.records} are discarded (pass --resume to keep them)"
        )
