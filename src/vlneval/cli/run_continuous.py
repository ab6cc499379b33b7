"""``vlneval run`` in a continuous environment (``--env continuous-*``, or a task that runs in
one): builds the environment and a baseline agent (or a remote agent, ``--agent
http://host:port``), calls the rollout (:mod:`vlneval.agents.continuous`), writes the
predictions and the card, scores on request; ``--executor ray`` runs it on a Ray cluster
(:mod:`vlneval.cli.ray_run`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vlneval.agents.continuous import given_id, kept_out_of_gc, run_card, run_continuous, score_run
from vlneval.agents.remote import session_ended
from vlneval.cli.common import err
from vlneval.cli.ray_run import cmd_run_ray
from vlneval.cli.run_common import workload_of
from vlneval.cli.scoring import Plan, emit_scored
from vlneval.cli.sharding import CliShard, agent_kwargs
from vlneval.distributed.merge import card_path
from vlneval.envs.recording import predictions_bytes
from vlneval.errors import VLNEvalError
from vlneval.io import to_json_bytes, write_outputs
from vlneval.tasks import get_task

__all__ = ["cmd_run_continuous"]


def cmd_run_continuous(args: argparse.Namespace, env_id: str, plan: Plan) -> int:
    """Runs a continuous baseline agent on the split (or this shard of it)."""
    _refuse_graph_options(args)
    _twin_only(args)
    if args.executor == "ray":
        return cmd_run_ray(args, environment=env_id)
    split = args.split or get_task(args.task).default_split
    shard = CliShard.of(args)
    workload = workload_of(args, env_id)
    env = workload.load().graphs
    agent = workload.continuous_agent(env)  # a baseline, or http://...
    agent_id = given_id(agent, args.agent)  # errors name it as a graph run does
    if shard is not None:
        hooks = shard.open(
            env.episodes, kind="continuous", settings={"max_steps": args.max_steps},
            environment=env_id,
        )  # fmt: skip
        if hooks is None:
            return shard.finish(None)
        with session_ended(agent), shard:
            run = run_continuous(
                env, agent, indices=hooks["indices"], on_record=hooks["on_record"],
                seed=args.seed, agent_id=agent_id,
            )  # fmt: skip
        return shard.finish(run_card(env, env_id, agent, run, split=split, seed=args.seed))
    indices = list(range(min(args.limit, len(env)))) if args.limit is not None else None
    with session_ended(agent):
        run = run_continuous(
            env, agent, indices=indices, seed=args.seed, progress=not args.quiet, agent_id=agent_id
        )
    # the run's records live until the command ends: no collection walks them again (thawed
    # before returning, so a process that calls main() again collects as usual)
    with kept_out_of_gc() as keep:
        keep()
        return _emit(args, env, env_id, agent, run, split, indices, plan)


def _emit(
    args: argparse.Namespace, env: Any, env_id: str, agent: Any, run: Any, split: str,
    indices: list[int] | None, plan: Plan,
) -> int:  # fmt: skip
    """Writes the run's predictions and card, and scores them when asked."""
    card = run_card(env, env_id, agent, run, split=split, seed=args.seed)
    out = Path(args.out)
    write_outputs([(plan.outputs["--out"], predictions_bytes(out, run.predictions)),
                   (card_path(out), to_json_bytes(card))])  # fmt: skip
    if not args.quiet:
        err(
            f"wrote {out} ({len(run.predictions)} episodes, {run.steps} steps) and {card_path(out)}"
        )
    if args.score:
        args.scoring = True  # a stop now leaves the files written
        summary, rows = score_run(
            env, run, card, out, profile=args.profile, subset=indices is not None,
            progress=not args.quiet, unreachable=getattr(args, "unreachable", None),
        )  # fmt: skip
        emit_scored(args, summary, rows if args.per_episode else None, plan)
    return 0


def _twin_only(args: argparse.Namespace) -> None:
    """Refuses ``--score`` with a ``--distance`` other than twin: a run is scored on the twin
    worlds the agent ran in, and records no distance_to_goal to carry."""
    given = getattr(args, "distance", None)
    if args.score and given is not None and given.lower() != "twin":
        raise VLNEvalError(
            f"--distance {given}: run --score scores on the twin worlds the agent ran in "
            "(--distance twin; a run records no distance_to_goal): drop --distance, or score "
            f"the written file with vlneval score --distance {given}"
        )


def _refuse_graph_options(args: argparse.Namespace) -> None:
    """The options of graph runs that a continuous run cannot honour."""
    given = [
        flag
        for flag, value in (
            ("--action-space", args.action_space), ("--features", args.features),
        )
        if value
    ]  # fmt: skip
    if agent_kwargs(args):
        given.append("--checkpoint/--agent-arg")
    if args.batch_size != 1:
        given.append("--batch-size")
    if given:
        raise VLNEvalError(
            f"a continuous environment runs the baseline agents (stop, random, shortest) or a "
            f"remote agent (--agent http://host:port) on its own action space: drop "
            f"{', '.join(given)}"
        )
