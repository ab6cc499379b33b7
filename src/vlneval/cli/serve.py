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

from vlneval.cli.common import err, load_declared
from vlneval.errors import VLNEvalError
from vlneval.io import atomic_write_text
from vlneval.reports.terminal import print_notices, render_summary, summary_notices
from vlneval.server.client import Client, SubmitError
from vlneval.server.core.config import ServerConfig, default_data_dir
from vlneval.server.services.supervise import WorkerPool

__all__ = ["config_from_args"]

MIB = 1024 * 1024


def _need_extra() -> None:
    try:
        import fastapi  # noqa: F401  # deferred: fastapi
        import sqlalchemy  # noqa: F401  # deferred: sqlalchemy
    except ImportError as exc:
        raise VLNEvalError(
            f"the evaluation server needs the server extra ({exc.name} is missing): "
            'pip install "vlneval[server]"'
        ) from None


def config_from_args(args: argparse.Namespace) -> Any:
    """The :class:`ServerConfig` the command-line options describe."""
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


def cmd_serve(args: argparse.Namespace) -> int:
    """Runs the web app (uvicorn) and ``--workers`` scoring workers."""
    _need_extra()
    import uvicorn  # deferred: uvicorn

    from vlneval.server.app import create_app  # deferred: fastapi

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
    from vlneval.server.core.migrate import wait_for_schema  # deferred: sqlalchemy
    from vlneval.server.services.worker import Worker  # deferred: sqlalchemy

    _logging(args.log_level)
    cfg = config_from_args(args)
    wait_for_schema(cfg.database_url)
    worker = Worker(cfg, name=args.name)
    worker.install_signal_handlers()
    worker.run(max_jobs=args.max_jobs, exit_when_idle=args.exit_when_idle)
    return 0


def _print_result(sub: dict[str, Any]) -> int:
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
    from vlneval.server.admin_cli import run  # deferred: sqlalchemy

    return run(args, config_from_args(args))
