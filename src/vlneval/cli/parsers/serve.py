"""The arguments of the commands of :mod:`vlneval.cli.serve` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

from vlneval.io import path_option
from vlneval.server.services.formats import FORMATS

__all__ = ["register"]


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
    s.set_defaults(func="vlneval.cli.serve:cmd_serve")

    w = sub.add_parser("worker", help="score queued submissions (run one or more beside serve)")
    _server_args(w)
    _limit_args(w)
    w.add_argument("--max-jobs", type=int, default=None, help="stop after this many submissions")
    w.add_argument("--exit-when-idle", action="store_true", help="stop when the queue is empty")
    w.add_argument("--name", default=None, help="worker name in the database (default host:pid)")
    w.add_argument("--log-level", default="info")
    w.set_defaults(func="vlneval.cli.serve:cmd_worker")

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
    p.set_defaults(func="vlneval.cli.serve:cmd_submit")


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
    ph.add_argument("--graphs", default=None, type=path_option, help="connectivity folder")
    ph.add_argument(
        "--data-root", default=None, type=path_option, help="find the files under this data root"
    )
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
    a.set_defaults(func="vlneval.cli.serve:cmd_admin")


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
