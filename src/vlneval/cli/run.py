"""``vlneval run``: run an agent on a split; ``vlneval agents``: list agents and environments.

Every subcommand module is imported by ``vlneval.cli.main``; the library parts only a command
needs (reports, diagnostics, agents, envs: about 0.2 s of imports) are imported inside it, so
that ``vlneval score`` does not pay for them.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
from pathlib import Path
from typing import Any

from vlneval import __version__
from vlneval.cli.common import (
    add_data_args,
    add_format_arg,
    add_task_option_args,
    emit_scored,
    err,
    given_task_options,
    open_scorer,
    scored_plan,
)
from vlneval.cli.sharding import (
    CliShard,
    add_executor_args,
    add_shard_args,
    agent_kwargs,
    kept_after_failure,
    stopped_note,
    unsharded_without_launcher,
)
from vlneval.errors import AgentError, VLNEvalError, check_seed
from vlneval.io import to_json_bytes, write_outputs
from vlneval.tasks import get_task

__all__ = ["register", "cmd_run", "cmd_agents", "workload_of", "check_numbers"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    p = sub.add_parser(
        "run",
        help="run an agent on a split: predictions, protocol card, optional score",
        description="Runs an agent on every episode of a split in one of vlneval's environments "
        "(the task's: a navigation graph, a street graph, or a continuous twin world) and writes "
        "the predictions (the task's format; continuous: VLN-CE r2r-ce) and a protocol card "
        "beside them.",
    )
    add_data_args(p)
    p.add_argument(
        "--agent",
        required=True,
        help="stop, random, random-walk, shortest (see `vlneval agents`), package.module:Class, "
        "or http://host:port (an agent served over HTTP, e.g. by `vlneval serve-agent`)",
    )
    p.add_argument(
        "--out",
        required=True,
        help="predictions file (.json or .json.gz); the card goes beside it as NAME.protocol.json",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the agents' generators (default 0)")
    p.add_argument(
        "--env",
        default=None,
        help="environment id (see `vlneval agents`, -vN optional); a continuous-* id runs the "
        "continuous twin worlds (default: the task's)",
    )
    p.add_argument(
        "--action-space",
        choices=["panoramic", "egocentric"],
        default=None,
        help="default: the agent's own (random: egocentric; others: panoramic)",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="step limit per episode (default: 35 panoramic, 100 egocentric, 150 street; "
        "continuous: the action space's, 500 discrete steps)",
    )
    p.add_argument("--features", default=None, help="pre-extracted features (.tsv or .h5)")
    p.add_argument("--batch-size", type=int, default=1, help="episodes stepped together")
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="run the first N episodes only (scored as partial)",
    )
    p.add_argument("--score", action="store_true", help="score the predictions at the end")
    p.add_argument(
        "--json", default=None, metavar="SUMMARY", help="with --score: summary JSON (- stdout)"
    )
    p.add_argument(
        "--per-episode",
        default=None,
        metavar="FILE",
        help="with --score: .csv, .jsonl or .parquet, or - for stdout with --format csv|jsonl",
    )
    add_format_arg(p)
    p.add_argument(
        "--quiet", action="store_true", help="no progress bar, no table, no 'ran ... wrote' line"
    )
    add_task_option_args(p)
    add_shard_args(p)
    add_executor_args(p)
    p.set_defaults(func=cmd_run)

    a = sub.add_parser("agents", help="list the registered agents and environments")
    a.set_defaults(func=cmd_agents)


def _card(episodes: Any, n_episodes: int, protocol: Any) -> dict[str, Any]:
    """The card of a run on ``episodes`` (their task, split and release) of ``n_episodes``."""
    from vlneval.tasks.common.protocol import episodes_card, software_fingerprint

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
    from vlneval.distributed.executors.workload import Workload

    return Workload(
        task=args.task, agent=args.agent, split=args.split, agent_args=agent_kwargs(args),
        data_root=args.data_root, episodes_file=args.episodes, graphs=args.graphs,
        data_version=args.data_version, path_type=args.path_type, action_space=args.action_space,
        max_steps=args.max_steps, features=args.features, batch_size=args.batch_size,
        seed=args.seed, environment=environment,
    )  # fmt: skip


def cmd_run(args: argparse.Namespace) -> int:
    """Runs the agent, writes predictions and card, scores on request. When the agent raises,
    or the run is stopped (Ctrl-C, SIGTERM: exit 130, 143), the last line says what became of
    the episodes it finished."""
    from vlneval.distributed.session import stop_on_sigterm

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
    from vlneval.agents.rollout import run_agent
    from vlneval.agents.street import run_street
    from vlneval.distributed.merge import card_path
    from vlneval.envs.graph.submission import task_records
    from vlneval.envs.recording import predictions_bytes

    _scoring_outputs(args)
    check_numbers(args)
    plan = scored_plan(args, out=True, table=args.score)  # refused before the run, not after
    unsharded_without_launcher(args)
    _check_names(args)
    env_id = _env_id(args)
    from vlneval.envs.registration import env_family  # loaded by _env_id already

    if env_id is not None and env_family(env_id) == "continuous":
        from vlneval.cli.run_continuous import cmd_run_continuous

        return cmd_run_continuous(args, env_id, plan)
    if args.executor == "ray":
        from vlneval.cli.ray_run import cmd_run_ray

        return cmd_run_ray(args)
    workload = workload_of(args)
    agent = workload.agent_info()
    shard = CliShard.of(args)
    checkpoint = None  # a shard's manifest hashes it, and the merged card shows it
    if shard is None and args.checkpoint is not None:
        from vlneval.distributed.checkpoint import checkpoint_fingerprint

        checkpoint = checkpoint_fingerprint(args.checkpoint)  # refused now if it is not there
    loaded = workload.load()
    args.score_options = loaded.score_options
    for note in loaded.notes:
        err(f"note: {note}")
    hooks = (
        {} if shard is None else shard.open(loaded.episodes, kind="graph", settings=_settings(args))
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
    card = _card(loaded.episodes, result.n_episodes, result.protocol)
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
        return _score(args, partial=result.partial, protocol=result.protocol, plan=plan)
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


def check_numbers(args: argparse.Namespace, seeds: tuple[int, ...] = ()) -> None:
    """Refuses a negative seed (``--seed``, or the ``seeds`` of a sweep) and a step limit the
    library refuses (:func:`~vlneval.envs.core.positive_steps`), before any file is read or
    written (a shard's files included).

    Raises:
        VLNEvalError: names the option and the value.
    """
    from vlneval.envs.core import positive_steps

    for flag, seed in (("--seed", args.seed), *(("--seeds", s) for s in seeds)):
        check_seed(seed, flag)
    positive_steps(args.max_steps, 0, "--max-steps")


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


def _score(args: argparse.Namespace, *, partial: bool, protocol: Any, plan: Any = None) -> int:
    with open_scorer(args, **getattr(args, "score_options", {})) as scorer:
        result = scorer.score(args.out, subset=partial, run=protocol)
    emit_scored(args, result.to_dict(), result.rows() if args.per_episode else None, plan)
    return 0


def _env_id(args: argparse.Namespace) -> str | None:
    """The full id of the environment to run (``--env``, else the task's own), None for the
    graph environment; an environment of a family the task does not run in is refused (a
    street task: street; a continuous task: continuous; others: graph or continuous), and a
    graph environment's id sets the action space."""
    from vlneval.envs.registration import ENVS, check_family, env_family

    task = get_task(args.task)
    if args.env is None:
        return ENVS.spec(task.run_env).id if task.run_env else None
    spec = ENVS.spec(args.env)
    check_family(task.name, spec.id, said=f"--env {spec.id}")
    space = spec.kwargs.get("action_space") if env_family(spec.id) == "graph" else None
    if space is not None:
        if args.action_space not in (None, space):
            raise VLNEvalError(
                f"--env {spec.id} has the {space} action space, not {args.action_space}"
            )
        args.action_space = space
    return spec.id


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The run options a shard's manifest records (every shard of a run must share them)."""
    features = Path(args.features).name if args.features else None
    chosen = {"path_type": args.path_type} if args.path_type else {}  # NDH: the oracle's path
    return {"action_space": args.action_space, "max_steps": args.max_steps, "features": features,
            **chosen}  # fmt: skip


def cmd_agents(args: argparse.Namespace) -> int:
    """Prints the registered agents and environments."""
    from vlneval.agents.registry import AGENTS
    from vlneval.envs.registration import ENVS

    print("agents (--agent NAME, or package.module:Class):")
    for spec in AGENTS.latest():
        print(f"  {spec.id:22s} {spec.description}")
    print("environments:")
    for spec in ENVS.latest():
        print(f"  {spec.id:22s} {spec.description}")
    return 0
