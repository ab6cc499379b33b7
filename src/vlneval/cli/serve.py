"""``vlneval serve``, ``vlneval worker``, ``vlneval submit`` and ``vlneval admin``.

Thin wrappers over :mod:`vlneval.server`; they need the ``server`` extra.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from vlneval.cli.common import err
from vlneval.errors import VLNEvalError
from vlneval.server.services.formats import FORMATS

__all__ = ["register", "config_from_args"]

MIB = 1024 * 1024


def _need_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError as exc:
        raise VLNEvalError(
            f"the evaluation server needs the server extra ({exc.name} is missing): "
            'pip install "vlneval[server]"'
        ) from None


def _server_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-dir",
        default=None,
        help="uploads and SQLite file (default $VLNEVAL_SERVER_DATA or ~/.local/share/vlneval/server)",
    )
    p.add_argument(
        "--database-url",
        default=None,
        help="SQLAlchemy URL (default $VLNEVAL_DATABASE_URL or SQLite in the data folder)",
    )


def _limit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-upload-mb", type=float, default=64.0, help="largest upload (default 64)")
    p.add_argument(
        "--max-json-mb", type=float, default=256.0, help="largest JSON after gunzip (default 256)"
    )
    p.add_argument(
        "--lease-seconds",
        type=float,
        default=60.0,
        help="a silent worker's submission is re-claimed after this (default 60)",
    )
    p.add_argument(
        "--poll-seconds", type=float, default=0.5, help="idle worker's polling period (default 0.5)"
    )
    p.add_argument(
        "--max-attempts", type=int, default=3, help="claims before a submission fails (default 3)"
    )
    p.add_argument(
        "--scoring-timeout",
        type=float,
        default=1800.0,
        help="seconds one scoring may take (default 1800)",
    )
    p.add_argument(
        "--max-pending",
        type=int,
        default=20,
        help="queued submissions a team may have per phase (default 20)",
    )


def config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`ServerConfig` the command-line options describe."""
    from vlneval.server.core.config import ServerConfig, default_data_dir

    kw: dict[str, Any] = {
        "data_dir": Path(args.data_dir) if args.data_dir else default_data_dir(),
        "database_url": args.database_url or "",
    }
    if hasattr(args, "max_upload_mb"):
        kw.update(
            max_upload_bytes=int(args.max_upload_mb * MIB),
            max_decompressed_bytes=int(args.max_json_mb * MIB),
            lease_seconds=args.lease_seconds,
            poll_seconds=args.poll_seconds,
            max_attempts=args.max_attempts,
            scoring_timeout_seconds=args.scoring_timeout,
            max_pending_per_team=args.max_pending,
        )
    if getattr(args, "secure_cookies", False):
        kw["secure_cookies"] = True
    if getattr(args, "public_url", None):
        kw["public_url"] = args.public_url
    if getattr(args, "allowed_host", None):
        kw["allowed_hosts"] = tuple(args.allowed_host)
    return ServerConfig(**kw)


def _logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    s = sub.add_parser("serve", help="run the evaluation server (web app and scoring workers)")
    _server_args(s)
    _limit_args(s)
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument(
        "--workers",
        type=int,
        default=1,
        help="scoring worker processes to run (default 1; 0: run them yourself)",
    )
    s.add_argument(
        "--secure-cookies",
        action="store_true",
        help="always mark the session cookie Secure (it is, unless served over HTTP on loopback)",
    )
    s.add_argument(
        "--public-url",
        default=None,
        help="the address participants use, e.g. https://eval.example.org (default "
        "$VLNEVAL_PUBLIC_URL); shown in the submit hint, its host allowed to post forms",
    )
    s.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="HOST[:PORT]",
        help="a host whose pages may post the login and upload forms (repeatable; default "
        "$VLNEVAL_ALLOWED_HOSTS, comma-separated); loopback is always allowed",
    )
    s.add_argument("--log-level", default="info")
    s.set_defaults(func=cmd_serve)

    w = sub.add_parser("worker", help="score queued submissions (run one or more beside serve)")
    _server_args(w)
    _limit_args(w)
    w.add_argument("--max-jobs", type=int, default=None, help="stop after this many submissions")
    w.add_argument("--exit-when-idle", action="store_true", help="stop when the queue is empty")
    w.add_argument("--name", default=None, help="worker name in the database (default host:pid)")
    w.add_argument("--log-level", default="info")
    w.set_defaults(func=cmd_worker)

    _register_submit(sub)
    _register_admin(sub)


def _register_submit(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("submit", help="submit a predictions file to an evaluation server")
    p.add_argument("--server", required=True, help="server URL, e.g. https://eval.example.org")
    p.add_argument("--token", default=None, help="team API token (default $VLNEVAL_TOKEN)")
    p.add_argument("--challenge", help="challenge slug")
    p.add_argument("--phase", help="phase slug")
    p.add_argument("--predictions", help="predictions file (.json or .json.gz)")
    p.add_argument("--protocol", default=None, help="JSON file of self-declared protocol fields")
    p.add_argument("--method", default="", help="method name shown on the leaderboard")
    p.add_argument("--description", default="")
    p.add_argument("--url", default="", help="paper or code link shown on the leaderboard")
    p.add_argument(
        "--status", default=None, metavar="ID", help="show (or --wait for) an earlier submission"
    )
    p.add_argument(
        "--wait", action="store_true", help="wait until it is scored and print the scores"
    )
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds to --wait (default 1800)")
    p.add_argument("--json", default=None, metavar="FILE", help="write the submission record here")
    p.set_defaults(func=cmd_submit)


def _register_admin(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    a = sub.add_parser("admin", help="organiser commands: challenges, phases, teams, rescoring")
    _server_args(a)
    asub = a.add_subparsers(dest="admin_command", required=True)
    asub.add_parser("migrate", help="create or upgrade the database schema")
    c = asub.add_parser("create-challenge", help="add a challenge")
    c.add_argument("--slug", required=True)
    c.add_argument("--title", default="")
    c.add_argument("--description", default="")
    ph = asub.add_parser("create-phase", help="add a phase with its hidden episodes file")
    ph.add_argument("--challenge", required=True)
    ph.add_argument("--slug", required=True)
    ph.add_argument("--title", default="")
    ph.add_argument("--description", default="")
    ph.add_argument("--task", required=True, help="r2r, r4r, rxr, demo, ...")
    ph.add_argument("--split", default=None)
    ph.add_argument("--profile", default=None)
    ph.add_argument("--episodes", default=None, help="the hidden episodes file (with goals)")
    ph.add_argument("--graphs", default=None, help="connectivity folder")
    ph.add_argument("--data-root", default=None, help="find the files under this data root")
    ph.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="a task option passed to the scorer (e.g. data_version=v2); repeatable",
    )
    _phase_settings(ph)
    ph.add_argument(
        "--primary-metric",
        default=None,
        help="ranking metric (default: the task's, e.g. RGSPL for reverie, GP for ndh)",
    )
    up = asub.add_parser("update-phase", help="change a phase's settings")
    up.add_argument("--challenge", required=True)
    up.add_argument("--phase", required=True)
    up.add_argument("--title", default=None)
    up.add_argument("--description", default=None)
    _phase_settings(up)
    up.add_argument(
        "--rehash", action="store_true", help="accept the episodes file's current checksum"
    )
    t = asub.add_parser("create-team", help="add a team and print its API token")
    t.add_argument("--name", required=True)
    r = asub.add_parser("rotate-token", help="give a team a new token")
    r.add_argument("--team", required=True)
    lb = asub.add_parser(
        "leaderboard", help="a phase's full leaderboard with every metric (private ones too)"
    )
    lb.add_argument("--challenge", required=True)
    lb.add_argument("--phase", required=True)
    lb.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (default), csv, or json (a list of entries)",
    )
    md = asub.add_parser(
        "moderate",
        help="hide, delete, flag or pin as baseline a submission on its leaderboard",
    )
    md.add_argument("--submission", required=True, help="the submission's id")
    md.add_argument(
        "--action",
        required=True,
        choices=["hide", "show", "delete", "restore", "flag", "unflag", "baseline", "unbaseline"],
        help="hide/show and delete/restore (reason shown to the team), flag/unflag (reason "
        "shown on the board), baseline/unbaseline (shown, not ranked)",
    )
    md.add_argument("--reason", default="", help="why (needed to hide, delete or flag)")
    asub.add_parser("list", help="challenges, phases, teams and the queue")
    rq = asub.add_parser(
        "requeue",
        help="score a finished or failed submission, or a phase's internal failures, again",
    )
    rq.add_argument("--submission", default=None, help="the submission's id")
    rq.add_argument("--challenge", default=None)
    rq.add_argument("--phase", default=None)
    rq.add_argument(
        "--internal",
        action="store_true",
        help="every submission of --challenge/--phase the server failed to score",
    )
    rq.add_argument(
        "--force",
        action="store_true",
        help="queue a failure again even when its team has since used its quota (it then counts)",
    )
    a.set_defaults(func=cmd_admin)


def _phase_settings(p: argparse.ArgumentParser) -> None:
    p.add_argument("--leaderboard", choices=["public", "private"], default=None)
    p.add_argument("--daily-quota", default=None, help="submissions a day per team, or none")
    p.add_argument("--total-quota", default=None, help="submissions in all per team, or none")
    p.add_argument(
        "--opens", default=None, help="ISO 8601 time (UTC unless a zone is given), or none"
    )
    p.add_argument("--closes", default=None, help="ISO 8601 time, or none")
    p.add_argument(
        "--entries",
        choices=["best", "chosen"],
        default=None,
        help="a team that picked no entry is shown with its best (default) or not at all",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """Runs the web app (uvicorn) and ``--workers`` scoring workers."""
    _need_extra()
    import uvicorn

    from vlneval.server.app import create_app
    from vlneval.server.services.supervise import WorkerPool

    _logging(args.log_level)
    cfg = config_from_args(args)
    app = create_app(cfg)
    pool = WorkerPool(cfg, args.workers) if args.workers > 0 else None
    if pool is not None:
        pool.start()
    err(
        f"vlneval server: http://{args.host}:{args.port}/ (data {cfg.data_dir}, {args.workers} worker(s))"
    )
    if args.host not in ("127.0.0.1", "localhost", "::1") and not (
        cfg.public_url or cfg.allowed_hosts
    ):
        err(
            "note: browsers reaching this server by another name than a loopback one cannot log "
            "in or submit forms until it is allowed: --public-url URL or --allowed-host HOST"
        )
    # uvicorn re-raises SIGTERM after its graceful shutdown: turn it into an exit that runs the
    # finally clause below, so that the workers are stopped too.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level.lower())
    finally:
        if pool is not None:
            pool.stop()
    return 0


def _exit_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(0)


def cmd_worker(args: argparse.Namespace) -> int:
    """Scores queued submissions until stopped."""
    _need_extra()
    from vlneval.server.core.migrate import wait_for_schema
    from vlneval.server.services.worker import Worker

    _logging(args.log_level)
    cfg = config_from_args(args)
    wait_for_schema(cfg.database_url)
    worker = Worker(cfg, name=args.name)
    worker.install_signal_handlers()
    worker.run(max_jobs=args.max_jobs, exit_when_idle=args.exit_when_idle)
    return 0


def _print_result(sub: dict[str, Any]) -> int:
    from vlneval.reports.terminal import print_notices, render_summary, summary_notices

    status = sub["status"]
    if status == "finished" and sub.get("result"):
        sys.stdout.write(render_summary(sub["result"]["summary"], color=sys.stdout.isatty()))
        print_notices(summary_notices(sub["result"]["summary"]))  # warnings on stderr
        return 0
    for m in sub.get("messages", []):
        err(f"error: {m}" if sub.get("error_kind") == "invalid" else m)
    if status == "failed":
        return 2 if sub.get("error_kind") == "invalid" else 1
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    """Submits (or looks up) a submission; with ``--wait`` prints its scores."""
    _need_extra()
    from vlneval.server.client import Client, SubmitError

    token = args.token or os.environ.get("VLNEVAL_TOKEN")
    if not token:
        raise VLNEvalError("a team token is needed: --token TOKEN or $VLNEVAL_TOKEN")
    with Client(args.server, token) as client:
        if args.status:
            sub = client.submission(args.status)
        else:
            for name in ("challenge", "phase", "predictions"):
                if not getattr(args, name):
                    raise VLNEvalError(f"--{name} is required to submit")
            from vlneval.cli.common import load_declared

            try:
                sub = client.submit(
                    args.challenge,
                    args.phase,
                    args.predictions,
                    protocol=load_declared(args.protocol),
                    method=args.method,
                    description=args.description,
                    url=args.url,
                )
            except SubmitError as exc:
                err(f"error: {exc}")
                return 2
            err(f"submitted: {sub['id']} ({sub['status']}); {args.server.rstrip('/')}{sub['page']}")
        if args.wait and sub["status"] not in ("finished", "failed"):
            sub = client.wait(sub["id"], timeout=args.timeout)
    if args.json:
        from vlneval.io import atomic_write_text

        atomic_write_text(args.json, json.dumps(sub, indent=2))
    if not args.wait and sub["status"] not in ("finished", "failed"):
        err(
            f"status: {sub['status']} (vlneval submit --server {args.server} --status {sub['id']} --wait)"
        )
        return 0
    return _print_result(sub)


def cmd_admin(args: argparse.Namespace) -> int:
    """Runs one organiser command."""
    _need_extra()
    from vlneval.server.admin_cli import run

    return run(args, config_from_args(args))
