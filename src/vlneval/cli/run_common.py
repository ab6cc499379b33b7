"""What the executors of ``vlneval run`` share (the local run of :mod:`vlneval.cli.run`, the
continuous one of :mod:`vlneval.cli.run_continuous`, Ray's of :mod:`vlneval.cli.ray_run`, and
the sweeps of :mod:`vlneval.cli.sweep`): the workload of the options, the run's card and
settings, its scoring."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vlneval import __version__
from vlneval.cli.scoring import emit_scored, open_scorer
from vlneval.cli.sharding import agent_kwargs
from vlneval.distributed.executors.workload import Workload
from vlneval.envs.core import positive_steps
from vlneval.errors import check_seed
from vlneval.tasks.common.protocol import episodes_card, software_fingerprint

__all__ = ["graph_card", "workload_of", "check_numbers", "score_out", "run_settings"]


def graph_card(episodes: Any, n_episodes: int, protocol: Any) -> dict[str, Any]:
    """The card of a run on ``episodes`` (their task, split and release) of ``n_episodes``."""
    return {
        "vlneval_version": __version__,
        "task": episodes.task,
        "split": episodes.split,
        "data_version": episodes.data_version,
        **episodes_card(n_episodes, len(episodes)),
        **protocol,
        "software": software_fingerprint(),
    }


def workload_of(args: argparse.Namespace, environment: str | None = None) -> Any:
    """The :class:`~vlneval.distributed.executors.workload.Workload` of ``vlneval run`` options
    (``environment``: the continuous environment id of a continuous run)."""
    return Workload(
        task=args.task, agent=args.agent, split=args.split, agent_args=agent_kwargs(args),
        data_root=args.data_root, episodes_file=args.episodes, graphs=args.graphs,
        data_version=args.data_version, path_type=args.path_type, action_space=args.action_space,
        max_steps=args.max_steps, features=args.features, batch_size=args.batch_size,
        seed=args.seed, environment=environment,
    )  # fmt: skip


def check_numbers(args: argparse.Namespace, seeds: tuple[int, ...] = ()) -> None:
    """Refuses a negative seed (``--seed``, or the ``seeds`` of a sweep) and a step limit the
    library refuses (:func:`~vlneval.envs.core.positive_steps`), before any file is read or
    written (a shard's files included).

    Raises:
        VLNEvalError: names the option and the value.
    """
    for flag, seed in (("--seed", args.seed), *(("--seeds", s) for s in seeds)):
        check_seed(seed, flag)
    positive_steps(args.max_steps, 0, "--max-steps")


def score_out(args: argparse.Namespace, *, partial: bool, protocol: Any, plan: Any = None) -> int:
    """Scores the run's ``--out`` (``partial``: the episodes it ran only) with its
    ``protocol``, and writes the result as ``vlneval score`` does (``plan``: its outputs)."""
    with open_scorer(args, **getattr(args, "score_options", {})) as scorer:
        result = scorer.score(args.out, subset=partial, run=protocol)
    emit_scored(args, result.to_dict(), result.rows() if args.per_episode else None, plan)
    return 0


def run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The run options a shard's manifest records (every shard of a run must share them)."""
    features = Path(args.features).name if args.features else None
    chosen = {"path_type": args.path_type} if args.path_type else {}  # NDH: the oracle's path
    return {"action_space": args.action_space, "max_steps": args.max_steps, "features": features,
            **chosen}  # fmt: skip
