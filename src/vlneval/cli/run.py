"""``vlneval run``: run an agent on a split; ``vlneval agents``: list agents and environments."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vlneval.cli.common import add_data_args, err

__all__ = ["register", "cmd_run", "cmd_agents", "card_path"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    p = sub.add_parser(
        "run",
        help="run an agent on a split: predictions, protocol card, optional score",
        description="Runs an agent on every episode of a split in vlneval's graph environment and "
        "writes the predictions (R2R format) and a protocol card beside them.",
    )
    add_data_args(p)
    p.add_argument(
        "--agent",
        required=True,
        help="stop, random, random-walk, shortest (see `vlneval agents`) or package.module:Class",
    )
    p.add_argument(
        "--out",
        required=True,
        help="predictions file (.json or .json.gz); the card goes beside it as NAME.protocol.json",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the agents' generators (default 0)")
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
        help="step limit per episode (default: 35 panoramic, 100 egocentric)",
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
    p.add_argument(
        "--data-version",
        default=None,
        help="dataset release where a benchmark has several (REVERIE: v2, the default, or v1)",
    )
    p.add_argument("--score", action="store_true", help="score the predictions at the end")
    p.add_argument("--json", default=None, metavar="SUMMARY", help="with --score: summary JSON")
    p.add_argument(
        "--per-episode", default=None, metavar="FILE", help="with --score: .csv, .jsonl or .parquet"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    p.set_defaults(func=cmd_run)

    a = sub.add_parser("agents", help="list the registered agents and environments")
    a.set_defaults(func=cmd_agents)


def card_path(out: str | Path) -> Path:
    """Where the protocol card of predictions file ``out`` goes.

    Example:
        >>> card_path("runs/preds.json").as_posix(), card_path("preds.json.gz").as_posix()
        ('runs/preds.protocol.json', 'preds.protocol.json')
    """
    p = Path(out)
    name = p.name
    for suffix in (".json.gz", ".json", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return p.with_name(f"{name}.protocol.json")


def _card(result: Any) -> dict[str, Any]:
    from vlneval import __version__
    from vlneval.tasks.common.protocol import software_fingerprint

    episodes = (
        f"partial: {result.n_episodes} of {result.n_expected}"
        if result.partial
        else str(result.n_episodes)
    )
    return {
        "vlneval_version": __version__,
        "task": result.task,
        "split": result.split,
        "episodes": episodes,
        **result.protocol,
        "software": software_fingerprint(),
    }


def cmd_run(args: argparse.Namespace) -> int:
    """Runs the agent, writes predictions and card, scores on request."""
    from vlneval.agents.registry import get_agent
    from vlneval.agents.rollout import run_agent
    from vlneval.envs.graph.submission import task_records
    from vlneval.envs.loading import load_episodes
    from vlneval.envs.recording import write_predictions
    from vlneval.io import atomic_write_bytes
    from vlneval.reports.tables import to_json_bytes

    agent = get_agent(args.agent)
    street = _street_run(args, agent)
    setup = None if street is not None else _task_setup(args)
    sensors: list[Any] = []
    if street is not None:
        result = street
    elif setup is None:
        episodes, graphs = load_episodes(
            args.task,
            args.split,
            root=args.data_root,
            episodes_file=args.episodes,
            graphs=args.graphs,
        )
    else:
        episodes, graphs, sensors = setup.episodes, setup.graphs, list(setup.sensors)
        args.score_options = dict(setup.score_options)
        for note in setup.notes:
            err(f"note: {note}")
    if street is None:
        result = run_agent(
            agent,
            episodes,
            graphs,
            action_space=args.action_space,
            max_steps=args.max_steps,
            features=args.features,
            seed=args.seed,
            batch_size=args.batch_size,
            limit=args.limit,
            progress=not args.quiet,
            sensors=sensors,
        )
        result.records, note = task_records(args.task, episodes, result.records)
        if note is not None:
            result.protocol["prediction_format"] = note
    out = Path(args.out)
    write_predictions(out, result.records)
    card = card_path(out)
    atomic_write_bytes(card, to_json_bytes(_card(result)))
    err(
        f"ran {agent.id} on {result.n_episodes} of {result.n_expected} {result.task} {result.split} "
        f"episodes (seed {args.seed}, {result.protocol['action_space']['name']}, "
        f"{result.truncated} truncated) in {result.seconds:.1f} s; wrote {out} and {card}"
    )
    if args.score:
        return _score(args, result)
    return 0


def _score(args: argparse.Namespace, result: Any) -> int:
    from vlneval.evaluation import evaluate
    from vlneval.reports.tables import write_rows, write_summary
    from vlneval.reports.terminal import render_summary

    evaluation = evaluate(
        args.task,
        args.split,
        args.out,
        profile=args.profile,
        root=args.data_root,
        episodes_file=args.episodes,
        graphs=args.graphs,
        subset=result.partial,
        run=result.protocol,
        options=getattr(args, "score_options", None) or None,
    )
    if args.json:
        write_summary(args.json, evaluation.to_dict())
    if args.per_episode:
        write_rows(args.per_episode, evaluation.rows())
    if not args.quiet:
        sys.stdout.write(render_summary(evaluation.to_dict(), color=sys.stdout.isatty()))
    return 0


def _street_run(args: argparse.Namespace, agent: Any) -> Any:
    """The run of a street-graph task (Touchdown, ``vlneval.envs.street.env``); None for others."""
    from vlneval.agents.street import run_street
    from vlneval.envs.street.loading import is_street_task, load_street_episodes

    if not is_street_task(args.task):
        return None
    if args.action_space is not None or args.features is not None:
        from vlneval.errors import VLNEvalError

        raise VLNEvalError(
            f"task {args.task} runs in the street action space (forward, turn left/right, stop) "
            "without features: drop --action-space and --features"
        )
    episodes, graph = load_street_episodes(
        args.task,
        args.split,
        root=args.data_root,
        episodes_file=args.episodes,
        graphs=args.graphs,
        data_version=args.data_version,
    )
    args.score_options = {"data_version": args.data_version} if args.data_version else {}
    return run_street(
        agent, episodes, graph, max_steps=args.max_steps, seed=args.seed, limit=args.limit,
        progress=not args.quiet,
    )  # fmt: skip


def _task_setup(args: argparse.Namespace) -> Any:
    """Episodes, graphs, sensors and scoring options of tasks with extra observations (REVERIE
    objects, ``vlneval.envs.graph.objects``); None for the others, which need only their episodes."""
    import importlib.util

    if importlib.util.find_spec("vlneval.envs.graph.objects") is None:
        return None
    from vlneval.envs.graph.objects import object_task_setup

    return object_task_setup(
        args.task,
        args.split,
        root=args.data_root,
        episodes_file=args.episodes,
        graphs=args.graphs,
        data_version=args.data_version,
    )


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
