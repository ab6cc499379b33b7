"""``vlneval run-ce``: run an agent in a continuous environment; ``vlneval score-ce``: score
VLN-CE predictions with a chosen distance source."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vlneval.cli.common import add_data_args, add_format_arg, err, load_declared, scored_plan
from vlneval.cli.sharding import CliShard, add_shard_args, agent_kwargs

__all__ = ["register", "cmd_run_ce", "cmd_score_ce"]

ENV_IDS = ("continuous-r2r-ce", "continuous-rxr-ce", "continuous-velocity", "continuous-waypoint")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    p = sub.add_parser(
        "run-ce",
        help="run an agent in a continuous environment (twin worlds): predictions, card, score",
        description="Runs a baseline agent on a split in a continuous environment built from the "
        "Matterport3D navigation graphs (r2r-twin: R2R episodes; r2r-ce: VLN-CE episodes) and writes "
        "the predictions (VLN-CE r2r-ce form) with a protocol card beside them.",
    )
    add_data_args(p)
    p.add_argument(
        "--env",
        default="continuous-r2r-ce",
        help=f"environment id: {', '.join(ENV_IDS)} (-vN optional)",
    )
    p.add_argument(
        "--agent", required=True, choices=["stop", "random", "shortest"], help="baseline agent"
    )
    p.add_argument("--out", required=True, help="predictions file (.json); the card goes beside it")
    p.add_argument("--seed", type=int, default=0, help="seed of the agents' generators (default 0)")
    p.add_argument(
        "--max-steps",
        type=int,
        default=None,
        help="action limit per episode (default: the space's)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="run the first N episodes only (partial)",
    )
    p.add_argument(
        "--score", action="store_true", help="score the predictions on the twin grid at the end"
    )
    p.add_argument("--json", default=None, metavar="SUMMARY", help="with --score: summary JSON")
    p.add_argument(
        "--per-episode", default=None, metavar="FILE", help="with --score: .csv, .jsonl or .parquet"
    )
    add_format_arg(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    add_shard_args(p)
    p.set_defaults(func=cmd_run_ce)

    s = sub.add_parser("score-ce", help="score VLN-CE predictions with a chosen distance source")
    add_data_args(s)
    s.add_argument(
        "--predictions", required=True, help="r2r-ce JSON or RxR-Habitat JSONL predictions"
    )
    s.add_argument(
        "--form", default="auto", choices=["auto", "r2r-ce", "rxr-jsonl"], help="predictions form"
    )
    s.add_argument(
        "--distance",
        default="auto",
        choices=["auto", "carried", "twin", "none"],
        help="auto: distances carried in the file if any, else none (NE, SR... unavailable)",
    )
    s.add_argument(
        "--gt",
        default=None,
        help="dense reference paths (default: {split}_gt.json.gz beside the episodes)",
    )
    s.add_argument(
        "--unreachable",
        default=None,
        choices=["failure", "exclude"],
        help="episodes ending where the goal is unreachable: failures (default) or excluded",
    )
    s.add_argument("--subset", action="store_true", help="score only predicted episodes (partial)")
    s.add_argument("--protocol", default=None, help="JSON file of self-declared protocol fields")
    s.add_argument("--json", default=None, metavar="SUMMARY", help="write the summary JSON here")
    s.add_argument("--per-episode", default=None, metavar="FILE", help=".csv, .jsonl or .parquet")
    add_format_arg(s)
    s.add_argument("--quiet", action="store_true", help="print no table")
    s.add_argument("--all-errors", action="store_true", help="list every problem, not the first 20")
    s.set_defaults(func=cmd_score_ce)


def _card_path(out: Path) -> Path:
    name = out.name[: -len(".json")] if out.name.endswith(".json") else out.name
    return out.with_name(f"{name}.protocol.json")


def _write_outputs(
    args: argparse.Namespace, summary: dict[str, Any], rows: list[dict[str, Any]]
) -> None:
    from vlneval.cli.common import emit_scored

    emit_scored(args, summary, rows if args.per_episode else None, getattr(args, "plan", None))


def cmd_run_ce(args: argparse.Namespace) -> int:
    """Runs the agent, writes predictions and card, scores on request."""
    from vlneval.agents.continuous import make_agent, run_continuous
    from vlneval.envs.registration import ENVS, make_env
    from vlneval.io import write_outputs
    from vlneval.reports.tables import to_json_bytes
    from vlneval.tasks import get_task

    args.plan = scored_plan(args, out=True, table=args.score)  # refused before the run
    spec = ENVS.spec(args.env)
    if not spec.id.startswith("continuous-"):
        from vlneval.errors import VLNEvalError

        raise VLNEvalError(
            f"{spec.id} is not a continuous environment (use `vlneval run` for graph environments)"
        )
    task = get_task(args.task)
    split = args.split or task.default_split
    shard = CliShard.of(args)
    if agent_kwargs(args):
        from vlneval.errors import VLNEvalError

        raise VLNEvalError("run-ce runs the baseline agents: --checkpoint and --agent-arg need run")
    env = make_env(
        spec.id,
        task=args.task,
        split=split,
        root=args.data_root,
        graphs=args.graphs,
        privileged=args.agent == "shortest",
        max_steps=args.max_steps,
    )
    agent = make_agent(args.agent, env.action_space)
    if shard is not None:
        return _run_shard(args, shard, spec.id, env, agent, split)
    indices = list(range(min(args.limit, len(env)))) if args.limit is not None else None
    run = run_continuous(env, agent, indices=indices, seed=args.seed, progress=not args.quiet)
    out = Path(args.out)
    card = _run_card(args, spec.id, env, agent, run, split)
    write_outputs([(args.plan.outputs["--out"], to_json_bytes(run.predictions, indent=False)),
                   (_card_path(out), to_json_bytes(card))])  # fmt: skip
    err(f"wrote {out} ({len(run.predictions)} episodes, {run.steps} steps) and {_card_path(out)}")
    if args.score:
        from vlneval.continuous.oracle import GridOracle
        from vlneval.tasks.vlnce.format import parse_ce_predictions
        from vlneval.tasks.vlnce.score import DistanceSource, score_continuous

        eps, worlds = env.episodes, env._worlds
        source = DistanceSource(
            "twin",
            "grid geodesic on the twin worlds the agent ran in",
            lambda i: GridOracle(
                worlds(eps.scans[i]),
                transform=None if eps.frame == "world" else _habitat_to_world(),
                snap=0.5,
            ),
        )
        preds = parse_ce_predictions(out, eps)
        profile = args.profile or "vlnce-exact"
        from vlneval.tasks.profiles import get_profile

        ev = score_continuous(
            eps,
            preds,
            get_profile(profile),
            source,
            subset=indices is not None,
            run=card,
            show_progress=not args.quiet,
        )
        # The environment's own measurements join each row: integrated length, simulated time.
        measured = {e["episode_id"]: e for e in run.episodes}
        rows = [{**r, **_measured(measured[r[eps.id_field]])} for r in ev.rows()]
        summary = ev.to_dict()
        summary["measured"] = card["measured"]
        _write_outputs(args, summary, rows)
    return 0


def _run_shard(
    args: argparse.Namespace, shard: CliShard, env_id: str, env: Any, agent: Any, split: str
) -> int:
    """One shard: each episode's prediction and measurements written as it ends."""
    from vlneval.agents.continuous import RunRecord, run_continuous

    settings = {"max_steps": args.max_steps}
    hooks = shard.open(env.episodes, kind="continuous", settings=settings, environment=env_id)
    if hooks is None:
        return shard.finish(None)
    run = RunRecord()
    for i in hooks["indices"]:  # one episode at a time, so each is on disk when it ends
        one = run_continuous(env, agent, indices=[i], seed=args.seed)
        hooks["on_record"](i, one.predictions, one.episodes[0])
        run.predictions.update(one.predictions)
        run.episodes += one.episodes
        run.steps, run.env_card = run.steps + one.steps, one.env_card
    return shard.finish(_run_card(args, env_id, env, agent, run, split))


def _measured(e: dict[str, Any]) -> dict[str, Any]:
    return {
        "path_length_integrated": e["path_length_integrated"],
        "time_s": e["time_s"],
        "collisions": e["collisions"],
        "clipped": e["clipped"],
    }


def _habitat_to_world() -> Any:
    from vlneval.tasks.vlnce.format import habitat_to_world

    return habitat_to_world


def _run_card(
    args: argparse.Namespace, env_id: str, env: Any, agent: Any, run: Any, split: str
) -> dict[str, Any]:
    import numpy as np

    from vlneval import __version__
    from vlneval.tasks.common.protocol import software_fingerprint

    n = len(run.predictions)
    eps = run.episodes
    return {
        "vlneval_version": __version__,
        "task": env.task,
        "split": split,
        "environment": env_id,
        "episodes": f"partial: {n} of {len(env)}" if n < len(env) else str(n),
        **run.env_card,
        **getattr(agent, "protocol", {}),
        "seeds": [args.seed],
        "n_runs": 1,
        "measured": {
            "mean_path_length_integrated_m": float(
                np.mean([e["path_length_integrated"] for e in eps])
            )
            if eps
            else None,
            "mean_time_s": float(np.mean([e["time_s"] for e in eps])) if eps else None,
            "collisions": int(sum(e["collisions"] for e in eps)),
            "clipped_commands": int(sum(e["clipped"] for e in eps)),
        },
        "software": software_fingerprint(),
    }


def cmd_score_ce(args: argparse.Namespace) -> int:
    """Scores VLN-CE predictions with the requested distance source."""
    import dataclasses

    from vlneval.tasks import get_task
    from vlneval.tasks.common.request import ScoreOptions, SplitRequest
    from vlneval.tasks.profiles import get_profile
    from vlneval.tasks.vlnce.score import VlnceScorer

    args.plan = scored_plan(args)  # refused before scoring
    task = get_task(args.task)
    if task.open_scorer is None or task.name not in ("r2r-ce",):
        from vlneval.errors import VLNEvalError

        raise VLNEvalError(
            f"score-ce scores VLN-CE tasks (r2r-ce); use `vlneval score --task {task.name}`"
        )
    profile = get_profile(args.profile or task.default_profile)
    if args.unreachable:
        profile = dataclasses.replace(profile, unreachable=args.unreachable)  # type: ignore[type-var,call-arg]
    request = SplitRequest(
        task,
        args.split or task.default_split,
        profile,
        root=args.data_root,
        episodes_file=args.episodes,
        graphs=args.graphs,
        options={"distance": args.distance, "gt_file": args.gt, "show_progress": not args.quiet},
    )
    how = ScoreOptions(subset=args.subset, form=args.form, declared=load_declared(args.protocol))
    ev = VlnceScorer(request).score(args.predictions, how)
    _write_outputs(args, ev.to_dict(), ev.rows())
    return 0
