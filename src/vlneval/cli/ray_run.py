"""``vlneval run --executor ray``: the run on a Ray cluster, written as a shard.

The Ray run is shard 0/1 of the run's plan (the whole split) unless ``--shard i/n`` is given,
with the files of a local shard beside ``--out``, so ``--resume`` continues a killed run and
``vlneval merge`` takes them as any other shard's. Without ``--shard`` the run ends by merging
into ``--out``. Graph, street and continuous runs go the same way.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from vlneval.agents.continuous import given_id
from vlneval.cli.common import err
from vlneval.cli.run_common import graph_card, run_settings, score_out, workload_of
from vlneval.cli.sharding import CliShard
from vlneval.distributed.detect import resolve_shard
from vlneval.distributed.executors.ray_executor import RayOptions, import_ray, run_on_ray
from vlneval.distributed.merge import card_path, merge
from vlneval.distributed.plan import ShardSpec
from vlneval.envs.recording import measured_block
from vlneval.errors import VLNEvalError
from vlneval.tasks.common.protocol import EPISODE_COUNTS, episodes_card

__all__ = ["cmd_run_ray", "options_of"]


def options_of(args: argparse.Namespace) -> Any:
    """The :class:`~vlneval.distributed.executors.ray_executor.RayOptions` of the options."""
    return RayOptions(
        num_actors=args.num_actors, actor_cpus=args.actor_cpus, actor_gpus=args.actor_gpus,
        chunk=args.chunk, address=args.address, max_retries=args.max_retries,
    )  # fmt: skip


def _spec(args: argparse.Namespace, continuous: bool) -> tuple[Any, bool]:
    spec = resolve_shard(args.shard)
    if args.limit is not None:
        raise VLNEvalError("--limit does not combine with --executor ray: run a part locally")
    if continuous and args.score:
        raise VLNEvalError(
            "--score does not combine with a continuous run on ray: drop it, then score the "
            "merged predictions with `vlneval score`"
        )
    if spec is None:
        if args.balance_scans:
            raise VLNEvalError("--balance-scans needs --shard (i/n or auto)")
        return ShardSpec(0, 1, "ray"), False
    if args.score:
        raise VLNEvalError(
            "--score does not combine with --shard: merge the shards with `vlneval merge`, "
            "then score the merged file"
        )
    return spec, True


def cmd_run_ray(args: argparse.Namespace, environment: str | None = None) -> int:
    """Runs the split (or ``--shard``) on Ray; merges into ``--out`` without ``--shard``.
    ``environment``: the continuous environment of a continuous run."""
    spec, explicit = _spec(args, environment is not None)
    import_ray()  # a missing Ray is said before any file or progress line
    options, workload = options_of(args), workload_of(args, environment)
    loaded = workload.load()  # the driver's copy: the plan and the manifest
    # refuses a bad spec or argument (or an unreachable remote agent) before any actor starts
    if environment is None:
        agent_id = workload.agent_info().id
        opened: dict[str, Any] = {"kind": "graph", "settings": run_settings(args)}
    else:
        agent_id = given_id(workload.continuous_agent(loaded.graphs), args.agent)
        opened = {"kind": "continuous", "settings": {"max_steps": args.max_steps},
                  "environment": environment}  # fmt: skip
    args.score_options = dict(loaded.score_options)
    for note in loaded.notes:
        err(f"note: {note}")
    shard, episodes = CliShard(args, spec), loaded.episodes
    hooks = shard.open(episodes, **opened)
    started = time.perf_counter()
    card = None
    if hooks is not None:
        shard.writer.manifest["executor"] = options.card()
        log = None if args.quiet else err
        seen = _Seen(hooks["on_record"])
        with shard:  # a stopped run's last progress line comes before what it kept
            run = run_on_ray(workload, hooks["indices"], options=options, on_record=seen,
                             log=log)  # fmt: skip
        shard.writer.manifest["executor"]["actors"] = [_where(a) for a in run.actors]
        if run.placement is not None:
            shard.writer.manifest["executor"]["placement"] = run.placement
        if environment is None:
            n = len(shard.writer.manifest["assigned"])
            card = graph_card(episodes, n, run.protocol)
        else:
            card = _continuous_card(run, loaded, seen)
        if run.restarts:
            err(f"ray: {run.restarts} actor(s) replaced; every chunk they held ran again")
    if explicit:
        return shard.finish(card)
    shard.finish(card, announce=False)
    return _merge_and_report(args, shard, agent_id, time.perf_counter() - started)


class _Seen:
    """The shard's record callback, keeping each continuous episode's measurements."""

    def __init__(self, record: Any) -> None:
        self.record = record
        self.extras: list[dict[str, Any]] = []

    def __call__(self, i: int, rec: Any, extra: Any = None) -> None:
        self.record(i, rec, extra)
        if extra is not None:
            self.extras.append(extra)


def _where(actor: dict[str, Any]) -> dict[str, Any]:
    """What the manifest keeps of where an actor ran (not its pid)."""
    keys = ("actor", "node", "gpus", "cuda_visible_devices", "device", "placement_group")
    return {k: actor.get(k) for k in keys}


def _continuous_card(run: Any, loaded: Any, seen: _Seen) -> dict[str, Any]:
    """The run card of a continuous shard (its chunks' cards, with this invocation's episodes
    and their measurements), as a local continuous shard writes it."""
    card = dict(run.protocol)
    card.update(episodes_card(len(seen.extras), len(loaded.episodes)))
    card["measured"] = measured_block(seen.extras)
    return card


def _merge_and_report(args: argparse.Namespace, shard: CliShard, agent_id: str,
                      seconds: float) -> int:  # fmt: skip
    w = shard.writer
    merged = merge([w.manifest_path], out=args.out)
    if not args.quiet:
        err(
            f"ran {agent_id} on {merged.n_episodes} {merged.task} {merged.split} episodes on ray "
            f"({args.num_actors} actors, chunks of {args.chunk}, seed {args.seed}) in "
            f"{seconds:.1f} s; wrote {args.out} and {card_path(args.out)} (records: {w.records})"
        )
    if args.score:
        args.scoring = True  # a stop now leaves the files written
        protocol = {k: v for k, v in (w.manifest.get("card") or {}).items()
                    if k not in ("vlneval_version", "task", "split", *EPISODE_COUNTS, "software")}  # fmt: skip
        return score_out(args, partial=False, protocol=protocol)
    return 0
