"""The ``vlneval admin`` subcommands: parse nothing, call :mod:`vlneval.server.services.admin`, print.

Nothing printed here quotes a phase's hidden labels: a created phase is described by its
episode count and checksum only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from sqlalchemy import func, select

from vlneval.errors import InvalidInputError
from vlneval.server.core.config import ServerConfig
from vlneval.server.core.database import Database
from vlneval.server.core.migrate import upgrade
from vlneval.server.models import FAILED, Challenge, Submission, Team
from vlneval.server.services import admin
from vlneval.server.services.entries import moderate
from vlneval.server.services.export import export_rows, phase_metrics, to_csv, to_json, to_table
from vlneval.server.services.leaderboard import leaderboard
from vlneval.server.services.submissions import Refused, iso_utc
from vlneval.tasks.profiles import get_profile

__all__ = ["run"]


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The phase settings given as flags; ``none`` clears a quota or a date (no limit)."""
    out: dict[str, Any] = {}
    if args.leaderboard is not None:
        out["leaderboard_public"] = args.leaderboard == "public"
    for key in ("daily_quota", "total_quota"):
        value = getattr(args, key)
        if value is not None:
            out[key] = _quota(value, f"--{key.replace('_', '-')}")
    for key, flag in (("opens_at", "opens"), ("closes_at", "closes")):
        value = getattr(args, flag)
        if value is not None:
            out[key] = None if value.strip().lower() == "none" else admin.parse_time(value)
    if getattr(args, "entries", None) is not None:
        out["entry_rule"] = args.entries
    return out


def _quota(value: str, flag: str) -> int | None:
    """A quota flag's value: a count of 0 or more in ASCII digits (``str.isdigit`` takes
    ``²`` too, which ``int`` does not), or ``none`` (no limit).

    Example:
        >>> _quota("5", "--daily-quota"), _quota("None", "--daily-quota")
        (5, None)
    """
    if value.strip().lower() == "none":
        return None
    if not (value.strip().isascii() and value.strip().isdigit()):
        raise InvalidInputError(f"{flag} {value!r}: give a count of 0 or more, or none (no limit)")
    return int(value)


def _parse_options(items: list[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"--option {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def _create_challenge(db: Database, args: argparse.Namespace) -> str:
    admin.create_challenge(db, args.slug, args.title, args.description)
    return f"created challenge {args.slug}"


def _create_phase(db: Database, args: argparse.Namespace) -> str:
    data = admin.create_phase(
        db,
        args.challenge,
        args.slug,
        task=args.task,
        split=args.split,
        profile=args.profile,
        episodes_file=args.episodes,
        graphs=args.graphs,
        data_root=args.data_root,
        title=args.title,
        options=_parse_options(args.option),
        description=args.description,
        primary_metric=args.primary_metric,
        **_settings(args),
    )
    sha = f", episodes file SHA-256 {data.data_sha256[:16]}…" if data.data_sha256 else ""
    with db.read() as s:
        phase = admin.find_phase(s, args.challenge, args.slug)
        profile, settings = phase.profile, _phase_settings(phase)
    return (
        f"created phase {args.challenge}/{args.slug}: {data.n_episodes} episodes{sha}\n"
        f"  {settings}{_complete_only(profile, data.n_episodes)}{_moves_rule(profile)}"
    )


def _phase_settings(p: Any) -> str:
    """A phase's stored options, quotas and submission window, as ``admin`` prints them."""
    options = ", ".join(f"{k}={v}" for k, v in sorted((p.options or {}).items())) or "none"
    return (
        f"options {options}; quotas {_shown(p.daily_quota)} a day, {_shown(p.total_quota)} in "
        f"all; opens {_shown(p.opens_at)}, closes {_shown(p.closes_at)}"
    )


def _complete_only(profile: str, n: int) -> str:
    """The note that a phase takes complete files, for a profile that scores partial ones."""
    if get_profile(profile).require_complete:
        return ""
    return (
        f"\nnote: profile {profile} scores partial files as its script does; this phase takes "
        f"complete files only (a prediction for each of the {n} episodes), since one episode's "
        "numbers would show its hidden labels"
    )


def _moves_rule(profile: str) -> str:
    """The note of how a continuous phase's profile treats a teleport (a move no action makes)."""
    rule = getattr(get_profile(profile), "long_steps", None)
    if rule is None:
        return ""
    move = "a logged move longer than one action allows (a teleport)"
    if rule == "refuse":
        return f"\nnote: profile {profile} refuses a file with {move}"
    return (
        f"\nnote: profile {profile} scores {move} with a warning and ranks the file; "
        "--profile vlnce-strict refuses it"
    )


def _update_phase(db: Database, args: argparse.Namespace) -> str:
    changes = _settings(args)
    for key in ("title", "description"):
        if getattr(args, key) is not None:
            changes[key] = getattr(args, key)
    where = f"phase {args.challenge}/{args.phase}"
    if not changes and not args.rehash:
        raise InvalidInputError(
            f"nothing to change in {where}: give a setting (--title, --leaderboard, "
            "--daily-quota, --closes, ...) or --rehash"
        )
    changed = admin.update_phase(db, args.challenge, args.phase, rehash=args.rehash, **changes)
    if not changed:
        return f"{where}: nothing changed (its settings already had these values)"
    return f"updated {where}: " + "; ".join(
        f"{k} {_shown(old)} -> {_shown(new)}" for k, (old, new) in changed.items()
    )


def _shown(value: Any) -> str:
    """A phase setting as ``admin`` prints it (``none``: no limit or date)."""
    if value is None:
        return "none"
    return iso_utc(value) if hasattr(value, "strftime") else str(value)


def _leaderboard(db: Database, args: argparse.Namespace) -> str:
    with db.read() as s:
        ph = admin.find_phase(s, args.challenge, args.phase)
        rows = export_rows(leaderboard(s, ph), ph)
        metrics = phase_metrics(ph)
    fmt = getattr(args, "format", "table") or "table"
    return {"json": lambda: to_json(rows), "csv": lambda: to_csv(rows, metrics)}.get(
        fmt, lambda: to_table(rows, metrics)
    )()


def _moderate(db: Database, args: argparse.Namespace) -> str:
    try:
        state = moderate(db, args.submission, args.action, args.reason or "")
    except Refused as exc:
        raise InvalidInputError(exc.detail) from None
    return f"submission {args.submission}: {state}"


def _list(db: Database, args: argparse.Namespace) -> str:
    lines = []
    with db.read() as s:
        for c in s.scalars(select(Challenge).order_by(Challenge.id)):
            lines.append(f"challenge {c.slug}: {c.title}")
            for p in c.phases:
                n = s.scalar(select(func.count()).where(Submission.phase_id == p.id)) or 0
                vis = "public" if p.leaderboard_public else "private"
                lines.append(
                    f"  phase {p.slug}: {p.task} {p.split} profile {p.profile}, {p.n_episodes} episodes, "
                    f"{vis} leaderboard by {p.primary_metric}, {n} submission(s)"
                )
                lines.append(f"    {_phase_settings(p)}")
                lines.extend(_internal_failures(s, c.slug, p))
        for t in s.scalars(select(Team).order_by(Team.id)):
            lines.append(f"team {t.name} (token {t.token_prefix}…)")
        rows = s.execute(
            select(Submission.status, Submission.error_kind, func.count())
            .group_by(Submission.status, Submission.error_kind)
            .order_by(Submission.status, Submission.error_kind)
        ).all()
    counts = [
        f"{n} {QUEUE_STATES.get(kind or '', st) if st == FAILED else st}" for st, kind, n in rows
    ]
    lines.append("queue: " + (", ".join(counts) or "empty"))
    return "\n".join(lines)


#: What a failed submission's ``error_kind`` says in ``admin list``.
QUEUE_STATES = {"invalid": "refused", "internal": "failed internally"}


def _internal_failures(s: Any, challenge: str, phase: Any) -> list[str]:
    """The line naming the phase's internal failures and how to score them again (none: no
    line)."""
    uids = s.scalars(admin.internal_failures(phase.id).with_only_columns(Submission.uid)).all()
    if not uids:
        return []
    return [
        f"    {len(uids)} failed internally: {', '.join(uids)} (score them again: vlneval admin "
        f"requeue --challenge {challenge} --phase {phase.slug} --internal)"
    ]


def _requeue(db: Database, args: argparse.Namespace) -> str:
    if args.submission and not args.internal:
        status = admin.requeue(db, args.submission, force=args.force)
        return f"submission {args.submission}: {status}"
    if not (args.internal and args.challenge and args.phase and not args.submission):
        raise InvalidInputError(
            "requeue takes --submission ID, or --challenge C --phase P --internal (every "
            "submission of the phase the server failed to score)"
        )
    uids, skipped = admin.requeue_internal(db, args.challenge, args.phase, force=args.force)
    where = f"phase {args.challenge}/{args.phase}"
    if not uids and not skipped:
        return f"{where} has no internal failures to score again"
    said = [f"queued again {len(uids)} internal failure(s): {', '.join(uids)}"] if uids else []
    if skipped:
        said.append(
            f"left failed {len(skipped)} whose team has since used its quota (--force queues "
            f"them, counted): {', '.join(skipped)}"
        )
    return f"{where}: {'; '.join(said)}"


def run(args: argparse.Namespace, cfg: ServerConfig) -> int:
    """Runs ``args.admin_command``."""
    head = upgrade(cfg.database_url)
    if args.admin_command == "migrate":
        text = f"database at schema revision {head}"
    else:
        db = Database(cfg.database_url)
        try:
            text = COMMANDS[args.admin_command](db, args)
        finally:
            db.dispose()
    sys.stdout.write(text if text.endswith("\n") else text + "\n")  # an export ends its lines
    return 0


COMMANDS: dict[str, Callable[[Database, argparse.Namespace], str]] = {
    "create-challenge": _create_challenge,
    "create-phase": _create_phase,
    "update-phase": _update_phase,
    "create-team": lambda db, a: (
        f"created team {a.name}; its API token (shown once, keep it secret):\n"
        f"{admin.create_team(db, a.name)}"
    ),
    "rotate-token": lambda db, a: (
        f"new API token of team {a.team}:\n{admin.rotate_token(db, a.team)}"
    ),
    "leaderboard": _leaderboard,
    "moderate": _moderate,
    "list": _list,
    "requeue": _requeue,
}
