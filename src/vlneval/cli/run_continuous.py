"""``vlneval run`` in a continuous environment (``--env continuous-*``, or a task that runs in
one): builds the environment and a baseline agent (or a remote agent, ``--agent
http://host:port``), calls the rollout (:mod:`vlneval.agents.continuous`), writes the
predictions and the card, scores on request; ``--executor ray`` runs it on a Ray cluster
(:mod:`vlneval.cli.ray_run`)."""

from __future__ import annotations

import argparse
import gc
from pathlib import Path
from typing import Any

from vlneval.cli.common import Plan, emit_scored, err
from vlneval.cli.sharding import CliShard, agent_kwargs

__all__ = ["cmd_run_continuous"]


def cmd_run_continuous(args: argparse.Namespace, env_id: str, plan: Plan) -> int:
    """Runs a continuous baseline agent on the split (or this shard of it)."""
    from vlneval.agents.continuous import run_card, run_continuous
    from vlneval.agents.remote import continuous_agent
    from vlneval.envs.loading import load_episodes
    from vlneval.envs.registration import make_env
    from vlneval.tasks import get_task

    _refuse_graph_options(args)
    if getattr(args, "executor", "local") == "ray":
        from vlneval.cli.ray_run import cmd_run_ray

        return cmd_run_ray(args, environment=env_id)
    split = args.split or get_task(args.task).default_split
    shard = CliShard.of(args)
    episodes, graphs = load_episodes(
        args.task, split, root=args.data_root, episodes_file=args.episodes, graphs=args.graphs
    )
    env = make_env(
        env_id, episodes, args.graphs or graphs, privileged=args.agent == "shortest",
        max_steps=args.max_steps,
    )  # fmt: skip
    agent = continuous_agent(args.agent, env.action_space)  # a baseline, or http://...
    if shard is not None:
        hooks = shard.open(
            env.episodes, kind="continuous", settings={"max_steps": args.max_steps},
            environment=env_id,
        )  # fmt: skip
        if hooks is None:
            return shard.finish(None)
        run = _ended(run_continuous, agent, env, agent, indices=hooks["indices"],
                     on_record=hooks["on_record"], seed=args.seed)  # fmt: skip
        return shard.finish(run_card(env, env_id, agent, run, split=split, seed=args.seed))
    indices = list(range(min(args.limit, len(env)))) if args.limit is not None else None
    run = _ended(run_continuous, agent, env, agent, indices=indices, seed=args.seed,
                 progress=not args.quiet)  # fmt: skip
    # the run's records live until the command ends: no collection walks them again (thawed
    # before returning, so a process that calls main() again collects as usual)
    freeze = gc.isenabled() and not gc.get_freeze_count()
    if freeze:
        gc.freeze()
    try:
        return _emit(args, env, env_id, agent, run, split, indices, plan)
    finally:
        if freeze:
            gc.unfreeze()


def _emit(
    args: argparse.Namespace, env: Any, env_id: str, agent: Any, run: Any, split: str,
    indices: list[int] | None, plan: Plan,
) -> int:  # fmt: skip
    """Writes the run's predictions and card, and scores them when asked."""
    from vlneval.agents.continuous import run_card, score_run
    from vlneval.io import to_json_bytes, write_outputs

    card = run_card(env, env_id, agent, run, split=split, seed=args.seed)
    out = Path(args.out)
    card_file = _card_path(out)
    write_outputs([(plan.outputs["--out"], to_json_bytes(run.predictions, indent=False)),
                   (card_file, to_json_bytes(card))])  # fmt: skip
    err(f"wrote {out} ({len(run.predictions)} episodes, {run.steps} steps) and {card_file}")
    if args.score:
        summary, rows = score_run(
            env, run, card, out, profile=args.profile, subset=indices is not None,
            progress=not args.quiet,
        )  # fmt: skip
        emit_scored(args, summary, rows if args.per_episode else None, plan)
    return 0


def _ended(rollout: Any, agent: Any, *args: Any, **kwargs: Any) -> Any:
    """``rollout(*args, **kwargs)``, then a remote agent's open session is ended."""
    from vlneval.agents.remote import session_ended

    with session_ended(agent):
        return rollout(*args, **kwargs)


def _card_path(out: Path) -> Path:
    name = out.name[: -len(".json")] if out.name.endswith(".json") else out.name
    return out.with_name(f"{name}.protocol.json")


def _refuse_graph_options(args: argparse.Namespace) -> None:
    """The options of graph runs that a continuous run cannot honour."""
    from vlneval.errors import VLNEvalError

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
