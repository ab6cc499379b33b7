"""Accepting a submission: checks, quotas, durable storage, then the queue.

The order never loses an acknowledged submission and never stores one that is refused:
1. the phase must be open and the team within its quotas (a quick read);
2. the upload passes :func:`vlneval.server.services.uploads.check_upload` and the declared protocol fields
   are checked;
3. the file is written durably;
4. in one write transaction (the team's row locked on PostgreSQL; SQLite writers are serialised)
   the quotas are checked again and the row is inserted; if that fails, the file is removed.

A retry carrying the same ``Idempotency-Key`` to the same phase returns the submission made the
first time (a key is scoped to its phase). Quotas count every submission of the team in the
phase except failed ones: a file refused for its format, or one the server could not score,
costs nothing against the quota; refused files have their own daily limit
(``max_refused_per_day``), so that refusals cannot be used as free probes. The day is the UTC
calendar day.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import math
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from vlneval.errors import InvalidInputError, UnknownNameError, VLNEvalError
from vlneval.io import GZIP_MAGIC, decode_json
from vlneval.server.core.config import ServerConfig
from vlneval.server.core.database import Database
from vlneval.server.models import FAILED, QUEUED, RUNNING, Phase, Submission, Team, utcnow
from vlneval.server.services.budget import StepBudget, TooManyRecords
from vlneval.server.services.storage import StorageError, UploadStore
from vlneval.server.services.uploads import UploadLimits, check_stored, check_upload
from vlneval.tasks.common.protocol import DECLARABLE

__all__ = [
    "Refused",
    "Usage",
    "usage",
    "check_window",
    "midnight",
    "iso_utc",
    "check_quota",
    "parse_declared",
    "clean_filename",
    "accept",
    "CLIENT_KEY",
]

CLIENT_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
MAX_DECLARED_BYTES = 16 * 1024
MAX_TEXT = 500


class Refused(VLNEvalError):
    """A request the server refuses, with its HTTP status and the problems to show."""

    def __init__(self, status: int, detail: str, problems: list[str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.problems = status, detail, problems or []


@dataclass(frozen=True)
class Usage:
    """A team's submissions in one phase: counted today, counted in total, pending, and
    refused today (files with problems: their own daily limit, not the quota), and those of
    today still pending."""

    today: int
    total: int
    pending: int
    refused_today: int = 0
    pending_today: int = 0


def usage(s: Session, phase_id: int, team_id: int, now: dt.datetime) -> Usage:
    """Counts the team's quota use in the phase."""
    base = (Submission.phase_id == phase_id, Submission.team_id == team_id)

    def count(*where: Any) -> int:
        return int(s.scalar(select(func.count()).where(*base, *where)) or 0)

    counted, today = Submission.status != FAILED, Submission.created_at >= midnight(now)
    pending = Submission.status.in_((QUEUED, RUNNING))
    return Usage(
        count(counted, today),
        count(counted),
        count(pending),
        count(Submission.status == FAILED, Submission.error_kind == "invalid", today),
        count(pending, today),
    )


def midnight(now: dt.datetime, days: int = 0) -> dt.datetime:
    """The start of ``now``'s UTC day, ``days`` later: quotas count calendar days."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0) + dt.timedelta(days=days)


def iso_utc(t: dt.datetime) -> str:
    """A UTC time as every server message writes it: ``2027-06-01T00:00:00Z``."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def check_window(phase: Phase, now: dt.datetime) -> None:
    """Refuses (403) when the phase is not open for submissions."""
    if phase.opens_at is not None and now < phase.opens_at:
        raise Refused(403, f"phase {phase.slug} opens for submissions at {iso_utc(phase.opens_at)}")
    if phase.closes_at is not None and now >= phase.closes_at:
        raise Refused(
            403, f"phase {phase.slug} closed for submissions at {iso_utc(phase.closes_at)}"
        )


def check_quota(phase: Phase, used: Usage, cfg: ServerConfig, now: dt.datetime) -> None:
    """Refuses (429) a submission past a quota (a quota of 0: the phase takes none)."""
    for quota, kind in ((phase.total_quota, "total"), (phase.daily_quota, "daily")):
        if quota == 0:
            raise Refused(429, f"phase {phase.slug} takes no submissions (its {kind} quota is 0)")
    reset = iso_utc(midnight(now, 1))
    if phase.total_quota is not None and used.total >= phase.total_quota:
        where = f"of phase {phase.slug}"
        raise Refused(429, _taken(phase.total_quota, where, used.pending, every=True))
    if phase.daily_quota is not None and used.today >= phase.daily_quota:
        taken = _taken(
            phase.daily_quota, f"of today (UTC) in phase {phase.slug}", used.pending_today
        )
        raise Refused(429, f"{taken}; the quota resets at {reset}")
    if used.refused_today >= cfg.max_refused_per_day:
        raise Refused(
            429,
            f"{used.refused_today} of your team's files were refused today (UTC) in phase "
            f"{phase.slug}, this server's daily limit of refused files; check a file first with "
            f"`vlneval validate --task {phase.task} --split {phase.split} --data-root DIR "
            f"--predictions FILE`, which runs the phase's checks. The limit resets at {reset}",
        )
    if used.pending >= cfg.max_pending_per_team:
        raise Refused(
            429,
            f"your team has {used.pending} submissions waiting to be scored in phase {phase.slug}; "
            "wait for them to finish before submitting more",
        )


def _taken(n: int, where: str, pending: int, *, every: bool = False) -> str:
    """The words of a quota of ``n`` used up, ``pending`` of its submissions still waiting to
    be scored (a refused file gives its place back: the quota may be free when they finish).

    Example:
        >>> _taken(5, "of today (UTC) in phase p", 0)
        'your team has used its 5 submissions of today (UTC) in phase p'
        >>> _taken(5, "of phase p", 2, every=True)
        "your team's 5 submissions of phase p are taken, 2 of them by files still waiting to be scored: a file that is refused gives its place back, so try again when they finish"
    """
    if not pending:
        return f"your team has used {'all' if every else 'its'} {n} submissions {where}"
    return (
        f"your team's {n} submissions {where} are taken, {pending} of them by files still "
        "waiting to be scored: a file that is refused gives its place back, so try again when "
        "they finish"
    )


FIELD_VALUE = (
    "a string, number, true/false, or a list or object of at most 20 of those, nested at most "
    "3 deep"
)


def _check_value(key: str, value: Any, depth: int = 0) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInputError(f"protocol field {key}: numbers must be finite")
        return
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise InvalidInputError(f"protocol field {key}: at most {MAX_TEXT} characters")
        return
    if depth < 3 and isinstance(value, list) and len(value) <= 20:
        for v in value:
            _check_value(key, v, depth + 1)
        return
    if depth < 3 and isinstance(value, dict) and len(value) <= 20:
        for k, v in value.items():
            _check_value(f"{key}.{k}", v, depth + 1)
        return
    raise InvalidInputError(f"protocol field {key}: expected {FIELD_VALUE}")


def parse_declared(text: str | None) -> dict[str, Any]:
    """The self-declared protocol fields: a JSON object whose keys are protocol-card fields,
    or the protocol card ``vlneval run`` wrote (it names its ``vlneval_version`` and
    ``software``), whose declarable fields are taken and the rest (task, split, agent...),
    which the server's own card states, left out.

    Example:
        >>> parse_declared('{"observations": "RGB panorama", "seeds": [0, 1]}')
        {'observations': 'RGB panorama', 'seeds': [0, 1]}
        >>> parse_declared('{"vlneval_version": "0.1", "task": "r2r", "software": {}, "seeds": [0]}')
        {'seeds': [0]}
    """
    if text is None or not text.strip():
        return {}
    raw = text.encode("utf-8")
    if len(raw) > MAX_DECLARED_BYTES:
        raise InvalidInputError(
            f"the protocol fields are {len(raw):,} bytes; at most {MAX_DECLARED_BYTES:,}"
        )
    advice = f"each protocol field is {FIELD_VALUE}"
    lim = UploadLimits(max_depth=8, max_string=MAX_TEXT, max_values=1000, depth_advice=advice)
    value = _decode(check_upload(raw, "protocol", lim))
    if not isinstance(value, dict):
        raise InvalidInputError("protocol: expected a JSON object of protocol-card fields")
    if "vlneval_version" in value and "software" in value:  # a run's card
        value = {k: v for k, v in value.items() if k in DECLARABLE}
    for key, v in value.items():
        if key not in DECLARABLE:
            raise UnknownNameError("protocol field", key, DECLARABLE)
        _check_value(key, v)
    return value


def _decode(text: bytes) -> Any:
    return decode_json(text, "protocol")


def clean_filename(name: str | None) -> str:
    """The upload's base name, without path or control characters (default ``predictions.json``).

    Example:
        >>> clean_filename("../../etc/pass\\x00wd.json")
        'passwd.json'
    """
    base = re.split(r"[/\\]", name or "")[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    return base[:200] or "predictions.json"


def _texts(method: str, description: str, url: str) -> tuple[str, str, str]:
    method, description, url = method.strip(), description.strip(), url.strip()
    if len(method) > 100:
        raise InvalidInputError("method: at most 100 characters")
    if len(description) > 2000:
        raise InvalidInputError("description: at most 2000 characters")
    if url and (len(url) > MAX_TEXT or not re.match(r"^https?://[^\s<>\"']+$", url)):
        raise InvalidInputError("url: an http:// or https:// address of at most 500 characters")
    return method, description, url


@dataclass(frozen=True)
class Upload:
    """What a submitter sent."""

    filename: str
    raw: bytes | BinaryIO
    declared: str | None = None
    method: str = ""
    description: str = ""
    url: str = ""
    client_key: str | None = None


def _existing(
    s: Session, phase_id: int, team_id: int, key: str | None, sha: str
) -> Submission | None:
    if key is None:
        return None
    sub = s.scalar(
        select(Submission).where(
            Submission.team_id == team_id,
            Submission.phase_id == phase_id,
            Submission.client_key == key,
        )
    )
    if sub is not None and sub.sha256 != sha:
        raise Refused(409, "this Idempotency-Key was used for a different file; use a new key")
    return sub


def _admit(
    s: Session,
    cfg: ServerConfig,
    phase_id: int,
    team_id: int,
    up: Upload,
    sha: str,
    now: dt.datetime,
) -> Submission | Phase:
    """The submission this upload repeats (the same Idempotency-Key), else its phase, checked
    open and within the team's quotas."""
    old = _existing(s, phase_id, team_id, up.client_key, sha)
    if old is not None:
        return old
    phase = s.get(Phase, phase_id)
    if phase is None:
        raise Refused(404, "no such phase")
    check_window(phase, now)
    check_quota(phase, usage(s, phase_id, team_id, now), cfg, now)
    return phase


def _store(store: UploadStore, cfg: ServerConfig, uid: str, up: Upload) -> tuple[str, str, int]:
    """Writes the upload durably a step at a time; returns (storage key, SHA-256, size)."""
    src = io.BytesIO(up.raw) if isinstance(up.raw, (bytes, bytearray)) else up.raw
    head = src.read(2)
    src.seek(0)
    key = store.key_for(uid, gzipped=head == GZIP_MAGIC)
    try:
        sha, size = store.put_stream(key, src, limit=cfg.max_upload_bytes)
    except StorageError:
        raise Refused(
            413, f"the upload is larger than this server accepts ({cfg.max_upload_bytes:,} bytes)"
        ) from None
    return key, sha, size


def _check_file(
    store: UploadStore, cfg: ServerConfig, key: str, name: str, up: Upload, n_episodes: int
) -> tuple[dict[str, Any], str, str, str]:
    budget = StepBudget.of_phase(n_episodes, cfg) if n_episodes else None
    refused = f"{name} was not accepted"
    try:
        _measure(store.path(key), name, UploadLimits.from_config(cfg), budget)
        refused = "the protocol fields were not accepted"
        declared = parse_declared(up.declared)
        refused = f"{name} was not accepted"
        method, description, url = _texts(up.method, up.description, up.url)
    except InvalidInputError as exc:
        raise Refused(422, refused, [str(p) for p in exc.problems]) from None
    except VLNEvalError as exc:
        raise Refused(422, refused, [str(exc)]) from None
    return declared, method, description, url


def _measure(path: Path, name: str, limits: UploadLimits, budget: StepBudget | None) -> None:
    """The stored upload's checks (:func:`check_stored`), except that a file with more records
    than the phase accepts is queued: the worker, which holds the task's other splits' public
    ids, refuses it, saying first which split the file was made for."""
    with contextlib.suppress(TooManyRecords):
        check_stored(path, name, limits, budget)


def accept(
    db: Database, store: UploadStore, cfg: ServerConfig, phase_id: int, team_id: int, up: Upload
) -> tuple[str, bool]:
    """Accepts an upload; returns (submission uid, created). Raises :class:`Refused`.

    The upload is streamed to storage, then checked there (gzip expanded a step at a time, the
    text read through a memory map): the API never holds a whole expanded upload.
    """
    if up.client_key is not None and not CLIENT_KEY.match(up.client_key):
        raise Refused(400, "Idempotency-Key: 1-64 letters, digits or _ . : -")
    name = clean_filename(up.filename)
    uid = secrets.token_hex(16)
    key, sha, size = _store(store, cfg, uid, up)
    try:
        with db.read() as s:
            found = _admit(s, cfg, phase_id, team_id, up, sha, utcnow())
            if isinstance(found, Submission):
                store.delete(key)
                return found.uid, False
            n_episodes = int(found.n_episodes or 0)
        declared, method, description, url = _check_file(store, cfg, key, name, up, n_episodes)
        with db.write() as s:
            if not db.is_sqlite:  # SQLite serialises its writers
                s.execute(select(Team.id).where(Team.id == team_id).with_for_update())
            now = utcnow()
            found = _admit(s, cfg, phase_id, team_id, up, sha, now)
            if isinstance(found, Submission):
                store.delete(key)
                return found.uid, False
            s.add(
                Submission(
                    uid=uid,
                    phase_id=phase_id,
                    team_id=team_id,
                    client_key=up.client_key,
                    filename=name,
                    size_bytes=size,
                    sha256=sha,
                    storage_key=key,
                    status=QUEUED,
                    messages=[],
                    declared=declared,
                    method=method,
                    description=description,
                    url=url,
                    created_at=now,
                    attempts=0,
                )
            )
    except BaseException:
        store.delete(key)
        raise
    return uid, True
