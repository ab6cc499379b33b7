"""``vlneval run``: run an agent on a split.

Imported only when the command runs (its arguments are :mod:`vlneval.cli.parsers.run`), so
the library it needs is imported at the top; ``vlneval agents`` is :mod:`vlneval.cli.info`'s.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
from pathlib import Path

from vlneval.agents.rollout import run_agent
from vlneval.agents.street import run_street
from vlneval.cli.common import err, given_task_options
from vlneval.cli.ray_run import cmd_run_ray
from vlneval.cli.run_common import check_numbers, graph_card, run_settings, score_out, workload_of
from vlneval.cli.run_continuous import cmd_run_continuous
from vlneval.cli.scoring import scored_plan
from vlneval.cli.sharding import (
    CliShard,
    kept_after_failure,
    stopped_note,
    unsharded_without_launcher,
)
from vlneval.distributed.checkpoint import checkpoint_fingerprint
from vlneval.distributed.merge import card_path
from vlneval.distributed.session import stop_on_sigterm
from vlneval.envs.graph.submission import task_records
from vlneval.envs.recording import predictions_bytes
from vlneval.envs.registration import env_family, run_env
from vlneval.errors import AgentError, VLNEvalError
from vlneval.io import to_json_bytes, write_outputs
from vlneval.tasks import get_task

__all__ = ["cmd_run"]


def cmd_run(args: argparse.Namespace) -> int:
    """Runs the agent, writes predictions and card, scores on request. When the agent raises,
    or the run is stopped (Ctrl-C, SIGTERM: exit 130, 143), the last line says what became of
    the episodes it finished."""
    try:
        with stop_on_sigterm():
            return _run(args)
    except AgentError as exc:
        raise AgentError(f"{exc}\n{kept_after_failure(args)}", exc.agent_traceback) from exc
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (a time limit, a preemption)
        signum = int(getattr(exc, "signum", signal.SIGINT))
        err(stopped_note(args, signum))
        return 128 + signum


def _run(args: argparse.Namespace) -> int:
    _scoring_outputs(args)
    check_numbers(args)
    plan = scored_plan(args, out=True, table=args.score)  # refused before the run, not after
    unsharded_without_launcher(args)
    _check_names(args)
    env_id, args.action_space = run_env(args.task, args.env, args.action_space, said="--env")
    if env_id is not None and env_family(env_id) == "continuous":
        return cmd_run_continuous(args, env_id, plan)
    if args.executor == "ray":
        return cmd_run_ray(args)
    workload = workload_of(args)
    agent = workload.agent_info()
    shard = CliShard.of(args)
    checkpoint = None  # a shard's manifest hashes it, and the merged card shows it
    if shard is None and args.checkpoint is not None:
        checkpoint = checkpoint_fingerprint(args.checkpoint)  # refused now if it is not there
    loaded = workload.load()
    args.score_options = loaded.score_options
    for note in loaded.notes:
        err(f"note: {note}")
    hooks = (
        {}
        if shard is None
        else shard.open(loaded.episodes, kind="graph", settings=run_settings(args))
    )
    if hooks is None:
        return shard.finish(None)  # type: ignore[union-attr]
    rollout = {"max_steps": args.max_steps, "seed": args.seed, "limit": args.limit, **hooks}
    rollout["progress"] = not args.quiet and shard is None
    with shard or contextlib.nullcontext():
        if loaded.kind == "street":
            result = run_street(agent, loaded.episodes, loaded.graphs, **rollout)
        else:
            result = run_agent(
                agent,
                loaded.episodes,
                loaded.graphs,
                action_space=args.action_space,
                features=args.features,
                batch_size=args.batch_size,
                sensors=loaded.sensors,
                **rollout,
            )
            result.records, note = task_records(args.task, loaded.episodes, result.records)
            if note is not None:
                result.protocol["prediction_format"] = note
    card = graph_card(loaded.episodes, result.n_episodes, result.protocol)
    if shard is not None:
        return shard.finish(card)
    if checkpoint is not None:
        card["checkpoint"] = checkpoint
    out = Path(args.out)
    write_outputs([(plan.outputs["--out"], predictions_bytes(out, result.records)),
                   (card_path(out), to_json_bytes(card))])  # fmt: skip
    if not args.quiet:  # --quiet: errors, warnings and the outputs asked for only
        err(
            f"ran {agent.id} on {result.n_episodes} of {result.n_expected} {result.task} "
            f"{result.split} episodes (seed {args.seed}, {result.protocol['action_space']['name']}"
            f", {result.truncated} truncated) in {result.seconds:.1f} s; wrote {out} and "
            f"{card_path(out)}"
        )
    if args.score:
        args.scoring = True  # a stop now leaves the files written
        args.scoring_partial = result.partial
        return score_out(args, partial=result.partial, protocol=result.protocol, plan=plan)
    return 0


def _scoring_outputs(args: argparse.Namespace) -> None:
    """Refuses ``--json`` and ``--per-episode`` without ``--score`` (they are its outputs),
    before the run.

    Raises:
        VLNEvalError: names the options given.
    """
    given = [
        flag for flag in ("--json", "--per-episode") if getattr(args, flag[2:].replace("-", "_"))
    ]
    if given and not args.score:
        raise VLNEvalError(
            f"{' and '.join(given)} {'is an output' if len(given) == 1 else 'are outputs'} of "
            "scoring: add --score to score the run"
        )


def _check_names(args: argparse.Namespace) -> None:
    """Refuses an unknown ``--profile`` (or one that does not score the task) and an unknown
    task option value before the run, with or without ``--score``: a typo is said at once,
    not after a long run or never. Names typed in another case are taken.

    Raises:
        UnknownNameError: no such profile or option value (with the closest name).
        VLNEvalError: the profile does not score the task (names the task's profiles).
    """
    task = get_task(args.task)
    for name, value in (given_task_options(args) or {}).items():
        setattr(args, name, value)
    if args.profile is not None:
        args.profile = task.scoring_profile(args.profile).name  # the library's check
