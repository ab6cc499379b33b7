"""What an organiser does: create challenges, phases and teams; rotate tokens; rescore.

These functions back ``vlneval admin``; they work on the database directly (no token: whoever
can open the database is the organiser). Creating a phase loads its hidden episodes file once,
checks that it holds goals and that every scan has a graph, and records its SHA-256, so that a
worker refuses to score against a file that changed afterwards.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import logging
import re
import secrets
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Select, delete, func, select, update
from sqlalchemy.orm import Session

from vlneval.errors import HiddenSplitError, InvalidInputError, UnknownNameError, VLNEvalError
from vlneval.evaluation import Scorer
from vlneval.graph.store import GraphStore
from vlneval.io import GZIP_MAGIC
from vlneval.metrics import metric_info
from vlneval.server.core.database import Database
from vlneval.server.models import (
    FAILED,
    FINISHED,
    QUEUED,
    Challenge,
    LoginSession,
    Phase,
    Result,
    Submission,
    Team,
    utcnow,
)
from vlneval.server.services.storage import sha256_hex
from vlneval.server.services.submissions import iso_utc, midnight
from vlneval.tasks import get_task
from vlneval.tasks.common.blind import PublicScorer, checks_publicly
from vlneval.tasks.common.public_file import has_public_copy
from vlneval.tasks.common.root import data_root as find_root
from vlneval.tasks.common.root import graphs_dir
from vlneval.tasks.common.scoring import load_split
from vlneval.tasks.profiles import get_profile

__all__ = [
    "new_token",
    "token_digest",
    "check_slug",
    "parse_time",
    "create_challenge",
    "create_phase",
    "update_phase",
    "create_team",
    "team_key",
    "mixed_scripts",
    "rotate_token",
    "requeue",
    "requeue_internal",
    "over_quota",
    "episodes_sha256",
    "repair_primary_metrics",
    "repair_item_counts",
    "repair_distance_sources",
    "find_phase",
    "phase_profile",
    "phase_distance",
    "phase_default_profile",
    "NotFoundError",
    "ResolvedData",
]

log = logging.getLogger("vlneval.server.services.admin")

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
TOKEN_PREFIX = "vlt_"


class NotFoundError(VLNEvalError):
    """A challenge, phase, team or submission that does not exist."""


def new_token() -> str:
    """A new API token (256 random bits).

    Example:
        >>> t = new_token()
        >>> t.startswith("vlt_"), len(t) > 40
        (True, True)
    """
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """The SHA-256 of a token, as stored (tokens are random, so no salt or slow hash is needed).

    Example:
        >>> token_digest("vlt_x")[:12]
        'e6bd78d65ccd'
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_slug(value: str, what: str) -> str:
    """``value`` if it is a valid slug (lowercase letters, digits, ``-``, ``_``; 1-64 characters).

    Example:
        >>> check_slug("r2r-test", "phase")
        'r2r-test'
    """
    if not SLUG.match(value):
        raise InvalidInputError(
            f"{what} {value!r}: use 1-64 lowercase letters, digits, '-' or '_', starting with a "
            "letter or digit"
        )
    return value


def parse_time(value: str | None) -> dt.datetime | None:
    """An ISO 8601 time as naive UTC (a time without zone is taken as UTC).

    Example:
        >>> parse_time("2026-06-01T12:00:00+02:00")
        datetime.datetime(2026, 6, 1, 10, 0)
    """
    if not value:
        return None
    try:
        t = dt.datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInputError(
            f"not an ISO 8601 time: {value!r} (e.g. 2026-06-01T00:00:00Z)"
        ) from None
    if t.tzinfo is not None:
        t = t.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return t


def create_challenge(db: Database, slug: str, title: str, description: str = "") -> None:
    """Adds a challenge."""
    check_slug(slug, "challenge")
    with db.write() as s:
        if s.scalar(select(Challenge.id).where(Challenge.slug == slug)) is not None:
            raise InvalidInputError(f"challenge {slug!r} already exists")
        s.add(Challenge(slug=slug, title=title or slug, description=description))


def find_phase(s: Session, challenge: str, phase: str) -> Phase:
    """The phase ``challenge/phase``; :class:`NotFoundError` names what is missing."""
    ch = s.scalar(select(Challenge).where(Challenge.slug == challenge))
    if ch is None:
        known = s.scalars(select(Challenge.slug)).all()
        raise NotFoundError(str(UnknownNameError("challenge", challenge, known)))
    ph = s.scalar(select(Phase).where(Phase.challenge_id == ch.id, Phase.slug == phase))
    if ph is None:
        known = [p.slug for p in ch.phases]
        raise NotFoundError(str(UnknownNameError(f"phase of {challenge}", phase, known)))
    return ph


@dataclass(frozen=True)
class ResolvedData:
    """A phase's resolved data: absolute paths, checksum and size (``n_episodes``: the items
    a submission must hold)."""

    episodes_file: str | None
    graphs_dir: str | None
    data_sha256: str | None
    n_episodes: int


def resolve_data(
    task: str,
    split: str,
    profile: str,
    *,
    episodes_file: str | None,
    graphs: str | None,
    data_root: str | None,
    options: dict[str, Any] | None = None,
) -> ResolvedData:
    """Finds, loads and checks a phase's hidden episodes and graphs.

    The split is opened by the task's own scorer, exactly as ``vlneval score`` opens it (the
    same file search, task options such as ``data_version``, and checks), and the episodes file
    it read is recorded, so that the server scores against the file the command line scores.
    """
    t = get_task(task)
    root = find_root(data_root)
    ep = Path(episodes_file).resolve() if episodes_file else None
    gr = Path(graphs).resolve() if graphs else None
    if gr is None and not t.embedded and root is not None:
        gr = _default_graphs(t, root)
    episodes, store = _open_split(t, split, profile, root, ep, gr, options or {})
    if not getattr(episodes, "scorable", True):
        raise _no_goals(episodes.source)
    if store is None and (options or {}).get("distance") == PHASE_DISTANCE:
        if gr is None:  # the twin worlds are built from the scenes' graphs
            raise InvalidInputError(
                f"distance={PHASE_DISTANCE} needs the connectivity graphs: pass --graphs DIR or "
                "--data-root DIR"
            )
        store = GraphStore(gr)
    if store is not None and hasattr(store, "graph"):
        for scan in sorted(set(getattr(episodes, "scans", ()))):
            store.graph(scan)
    if ep is None and not t.embedded:
        ep = Path(episodes.source).resolve()
    sha = episodes_sha256(ep.read_bytes()) if ep is not None else None
    n = _items_asked(t, split, profile, ep, gr, root, options or {}) if ep else len(episodes)
    return ResolvedData(str(ep) if ep else None, str(gr) if gr else None, sha, n or len(episodes))


def episodes_sha256(raw: bytes) -> str:
    """The SHA-256 a phase records of its episodes file: of the content, the decompressed
    bytes of a gzip file, so that gzipping the same episodes again changes nothing.

    Example:
        >>> import gzip
        >>> a, b = gzip.compress(b"[]", mtime=1), gzip.compress(b"[]", 9, mtime=2)
        >>> a != b and episodes_sha256(a) == episodes_sha256(b) == episodes_sha256(b"[]")
        True
    """
    return sha256_hex(gzip.decompress(raw) if raw[:2] == GZIP_MAGIC else raw)


def _items_asked(
    task: Any, split: str, profile: str, ep: Path, gr: Path | None, root: Any, options: Any
) -> int | None:
    """The items a submission must hold when the task's own scorer checks it on the public
    copy of the split (None: the split's episodes). Touchdown SDR asks for every (route,
    panorama) pair there and scores the labelled ones: how many those are is a label."""
    if checks_publicly(task) or not has_public_copy(task):
        return None
    checker = PublicScorer(
        task, split, get_profile(profile), ep, root=root, graphs=gr, options=options
    )
    try:
        return len(checker)
    finally:
        checker.close()


def _no_goals(source: Any) -> InvalidInputError:
    return InvalidInputError(
        f"{source}: has no goals; a phase needs the episodes file with the hidden labels "
        "(reference paths and goals)"
    )


def _default_graphs(task: Any, root: Path) -> Path:
    """The graphs a task reads under a data root: its street graph (``<folder>/graph``) for a
    street task, else the Matterport3D connectivity folder."""
    if task.street_routes:
        return (root / task.folder / "graph").resolve()
    return graphs_dir(root).resolve()


def _open_split(
    task: Any,
    split: str,
    profile: str,
    root: Path | None,
    episodes_file: Path | None,
    graphs: Path | None,
    options: dict[str, Any],
) -> tuple[Any, Any]:
    """The split's episodes and graphs as the task's scorer opens them (a test split, which
    the scorer refuses, is reported as having no goals)."""
    try:
        with Scorer(
            task.name, split, profile=profile, root=root, episodes=episodes_file, graphs=graphs,
            name_episodes=False, **options,
        ) as scorer:  # fmt: skip
            if scorer.episodes is not None:
                return scorer.episodes, scorer.graphs
    except HiddenSplitError as exc:
        raise _no_goals(exc.episodes_file) from None
    # a scorer that does not expose its episodes: the split as the task's loader reads it
    return load_split(
        task, split, get_profile(profile), root=root, episodes_file=episodes_file, graphs=graphs
    )


def primary_metric_of(task: str, profile: str, metric: str | None) -> tuple[str, bool]:
    """The ranking metric (default: the task's, :meth:`~vlneval.tasks.base.Task.ranking_metric`)
    and whether higher is better; a metric the task does not produce is refused.

    The direction is the metric table's (:func:`vlneval.metrics.metric_info`): SPD, NE and
    SDR_dist rank the lowest value first; a metric with no better direction (TL) also ranks
    ascending.

    Example:
        >>> primary_metric_of("touchdown", "touchdown", "SPD"), primary_metric_of("ndh", "cvdn", None)
        (('SPD', False), ('GP', True))
        >>> primary_metric_of("touchdown-sdr", "touchdown", "TC")
        Traceback (most recent call last):
        ...
        vlneval.errors.UnknownNameError: unknown metric of task touchdown-sdr 'TC' (known: SDR@120, SDR@40, SDR@80, SDR_dist)
    """
    spec, prof = get_task(task), get_profile(profile)
    metrics = spec.metric_labels(prof)
    label = metric or spec.ranking_metric(prof)
    if metrics and label not in metrics:
        raise UnknownNameError(f"metric of task {task}", label, metrics)
    return label, metric_info(label).higher_is_better


def repair_primary_metrics(db: Database) -> list[str]:
    """Ranks each stored phase whose primary metric its task does not produce by the task's
    declared one, its results' ranking values read again from their stored metrics; logs and
    returns one line per repaired phase (none the second time).

    A phase created before primary metrics were per task may rank by one its task never
    reports (a touchdown-sdr phase by TC): its leaderboard stays empty. The scores themselves
    are not touched; a phase of a task or profile no longer registered is left as stored.
    """
    repaired = []
    with db.write() as s:
        for ph in s.scalars(select(Phase)).all():
            try:
                known = get_task(ph.task).metric_labels(get_profile(ph.profile))
            except VLNEvalError:
                continue
            if not known or ph.primary_metric in known:
                continue
            old = ph.primary_metric
            ph.primary_metric, ph.higher_is_better = primary_metric_of(ph.task, ph.profile, None)
            results = select(Result).join(Submission).where(Submission.phase_id == ph.id)
            for res in s.scalars(results):
                value = (res.metrics or {}).get(ph.primary_metric)
                res.primary_value = float(value) if isinstance(value, (int, float)) else None
            line = (
                f"phase {ph.challenge.slug}/{ph.slug}: task {ph.task} reports no {old}; "
                f"it is ranked by {ph.primary_metric} now"
            )
            log.warning(line)
            repaired.append(line)
    return repaired


def repair_item_counts(db: Database) -> list[str]:
    """Counts again the items each stored phase asks a submission for, as a new phase counts
    them (:func:`_items_asked`); logs and returns one line per phase changed (none the second
    time). A touchdown-sdr phase created before counted its labelled pairs, a count the
    submitters do not know, instead of every pair its public copy asks for. A phase whose
    task or data can no longer be opened is left as stored."""
    repaired = []
    with db.write() as s:
        for ph in s.scalars(select(Phase)).all():
            if ph.episodes_file is None:  # the split's episodes, as a new phase counts them
                continue
            ep, graphs = Path(ph.episodes_file), Path(ph.graphs_dir) if ph.graphs_dir else None
            try:
                t, options = get_task(ph.task), dict(ph.options or {})
                n = _items_asked(t, ph.split, ph.profile, ep, graphs, find_root(None), options)
            except (VLNEvalError, OSError):
                continue
            if n is None or n == ph.n_episodes:
                continue
            line = f"phase {ph.challenge.slug}/{ph.slug}: asks for {n} items, not {ph.n_episodes}"
            ph.n_episodes = n
            log.warning(line)
            repaired.append(line)
    return repaired


def repair_distance_sources(db: Database) -> list[str]:
    """Measures the distance to the goal on the twin worlds (:func:`phase_distance`) in each
    stored phase that read it from the files it ranked (``distance`` auto, carried or none,
    stored before phases measured it themselves), and queues that phase's finished
    submissions again, to be ranked so; a phase without graphs, whose twin worlds cannot be
    built, is flagged instead, left as stored. Logs and returns one line per phase (none the
    second time for a repaired one)."""
    lines = []
    with db.write() as s:
        for ph in s.scalars(select(Phase)).all():
            try:
                has = get_task(ph.task).has_option("distance")
            except VLNEvalError:
                continue
            given = (ph.options or {}).get("distance", "auto")
            if not has or given == PHASE_DISTANCE:
                continue
            where = f"phase {ph.challenge.slug}/{ph.slug}: distance={given}"
            if ph.graphs_dir is None or not Path(ph.graphs_dir).is_dir():  # results kept
                lines.append(
                    f"{where} ranks files by the distance_to_goal they write, and it has no "
                    "graphs folder for distance=twin: recreate it with --graphs DIR"
                )
                log.error(lines[-1])
                continue
            ph.options = {**(ph.options or {}), "distance": PHASE_DISTANCE}
            finished = (Submission.phase_id == ph.id, Submission.status == FINISHED)
            done = s.scalars(select(Submission).where(*finished)).all()
            for sub in done:
                _queue_again(s, sub)
            lines.append(
                f"{where} is now distance={PHASE_DISTANCE}; {len(done)} finished "
                "submission(s) queued to be scored again"
            )
            log.warning(lines[-1])
    return lines


def task_options(task: Any, options: Any) -> dict[str, Any]:
    """A phase's task options checked as ``vlneval score`` checks its flags, by
    :meth:`~vlneval.tasks.base.Task.check_options` (the same words): an unknown name suggests
    the closest declared one, a value outside an option's choices lists them.

    Example:
        >>> from vlneval.tasks import get_task
        >>> task_options(get_task("reverie"), {"data_version": "V1"})
        {'data_version': 'v1'}
        >>> task_options(get_task("ndh"), {"path_type": "planer_path"})
        Traceback (most recent call last):
        ...
        vlneval.errors.UnknownNameError: unknown ndh path type 'planer_path'; did you mean 'planner_path'? (known: planner_path, player_path, trusted_path)
    """
    out = dict(options or {})
    for name, value in out.items():
        if not isinstance(name, str) or not (
            value is None or isinstance(value, (str, int, float, bool))
        ):
            raise InvalidInputError(
                f"task option {name!r}: expected a name and a string, number or boolean"
            )
    return task.check_options(out)


def phase_default_profile(task: Any, name: str | None) -> str:
    """The profile a phase of ``task`` scores with: ``name``, else the task's default, except
    that a continuous task whose default scores a teleport (a logged move longer than one
    action allows) with a warning takes its profile that refuses the file (vlnce-strict): a
    jump is shorter than any walkable route, so a two-point file would beat the reference path
    on SPL.

    Example:
        >>> from vlneval.tasks import get_task
        >>> [phase_default_profile(get_task(t), None) for t in ("r2r-ce", "r2r-twin", "r2r")]
        ['vlnce-strict', 'vlnce-strict', 'r2r']
        >>> phase_default_profile(get_task("r2r-ce"), "vlnce-exact")
        'vlnce-exact'
    """
    if name is None and getattr(task.scoring_profile(), "long_steps", "refuse") != "refuse":
        strict = [p for p in task.profiles if getattr(get_profile(p), "long_steps", "") == "refuse"]
        name = strict[0] if strict else None
    return str(task.scoring_profile(name).name)


#: The one distance source a continuous phase scores with: the organiser's twin worlds.
PHASE_DISTANCE = "twin"


def phase_distance(task: Any, options: dict[str, Any]) -> dict[str, Any]:
    """A phase's task options with its distance to the goal measured on the organiser's side
    (``distance=twin``, the default of a task that has the option), never read from the file
    being ranked: ``carried``, or ``auto`` (carried when the file carries distances), would
    rank a stop-at-the-start file that writes ``distance_to_goal: 0`` first, and ``none``
    leaves the ranking metric (SPL) n/a for every file.

    Example:
        >>> from vlneval.tasks import get_task
        >>> phase_distance(get_task("r2r-ce"), {}), phase_distance(get_task("r2r"), {})
        ({'distance': 'twin'}, {})
        >>> phase_distance(get_task("r2r-ce"), {"distance": "auto"})
        Traceback (most recent call last):
        ...
        vlneval.errors.InvalidInputError: error: task option distance=auto: a phase measures the distance to the goal itself, on the twin worlds (distance=twin, the default; they need --graphs DIR or --data-root DIR), never from the file it ranks: with carried (auto carries it when the file does) a file would rank by the distance_to_goal it writes
    """
    if not task.has_option("distance"):
        return options
    given = options.get("distance", PHASE_DISTANCE)
    if given != PHASE_DISTANCE:
        raise InvalidInputError(
            f"task option distance={given}: a phase measures the distance to the goal itself, on "
            f"the twin worlds (distance={PHASE_DISTANCE}, the default; they need --graphs DIR or "
            "--data-root DIR), never from the file it ranks: with carried (auto carries it when "
            "the file does) a file would rank by the distance_to_goal it writes"
        )
    return {**options, "distance": PHASE_DISTANCE}


def phase_profile(name: str) -> Any:
    """The scoring profile ``name`` as a phase applies it: every episode needs a prediction.

    A profile that scores partial files as its script does (r4r, r2r-duet) would score a
    one-record file and show that episode's hidden distances: a phase takes complete files
    only, and says so itself (its completeness problem names no profile).

    Example:
        >>> duet = phase_profile("r2r-duet")
        >>> duet.require_complete, duet.caller_requires_complete, duet.name
        (True, True, 'r2r-duet')
        >>> phase_profile("r2r").caller_requires_complete
        False
    """
    prof = get_profile(name)
    return replace(prof, require_complete=True, caller_requires_complete=not prof.require_complete)


def _entry_rule(rule: str | None) -> str:
    """A phase's entry rule: ``best`` (a team that picked nothing shows its best) or ``chosen``
    (only picked entries are shown)."""
    if rule is None:
        return "best"
    if rule not in ENTRY_RULES:
        raise UnknownNameError("entry rule", rule, ENTRY_RULES)
    return rule


def create_phase(db: Database, challenge: str, slug: str, **fields: Any) -> ResolvedData:
    """Adds a phase to ``challenge`` (see ``vlneval admin create-phase --help``)."""
    check_slug(slug, "phase")
    check_window_order(fields.get("opens_at"), fields.get("closes_at"))
    task = get_task(fields["task"])
    split = fields.get("split") or task.default_split
    profile = phase_default_profile(task, fields.get("profile"))
    options = phase_distance(task, task_options(task, fields.get("options")))
    data = resolve_data(
        task.name,
        split,
        profile,
        episodes_file=fields.get("episodes_file"),
        graphs=fields.get("graphs"),
        data_root=fields.get("data_root"),
        options=options,
    )
    metric, higher = primary_metric_of(task.name, profile, fields.get("primary_metric"))
    with db.write() as s:
        ch = s.scalar(select(Challenge).where(Challenge.slug == challenge))
        if ch is None:
            raise NotFoundError(
                f"no challenge {challenge!r} (vlneval admin create-challenge first)"
            )
        if any(p.slug == slug for p in ch.phases):
            raise InvalidInputError(f"phase {challenge}/{slug} already exists")
        s.add(
            Phase(
                challenge_id=ch.id,
                slug=slug,
                title=fields.get("title") or slug,
                description=fields.get("description") or "",
                task=task.name,
                split=split,
                profile=profile,
                episodes_file=data.episodes_file,
                graphs_dir=data.graphs_dir,
                data_sha256=data.data_sha256,
                n_episodes=data.n_episodes,
                leaderboard_public=fields.get("leaderboard_public", True),
                primary_metric=metric,
                higher_is_better=higher,
                daily_quota=fields.get("daily_quota"),
                total_quota=fields.get("total_quota"),
                opens_at=fields.get("opens_at"),
                closes_at=fields.get("closes_at"),
                options=options,
                entry_rule=_entry_rule(fields.get("entry_rule")),
            )
        )
    return data


UPDATABLE = (
    "title", "description", "leaderboard_public", "daily_quota", "total_quota", "opens_at",
    "closes_at", "entry_rule",
)  # fmt: skip
ENTRY_RULES = ("best", "chosen")


def update_phase(
    db: Database, challenge: str, phase: str, *, rehash: bool = False, **changes: Any
) -> dict[str, tuple[Any, Any]]:
    """Changes a phase's settings; ``rehash`` records the episodes file's current checksum.
    Returns each setting that changed, with its old and new value (``data_sha256`` too)."""
    unknown = set(changes) - set(UPDATABLE)
    if unknown:
        raise InvalidInputError(f"cannot change {', '.join(sorted(unknown))} of a phase")
    if "entry_rule" in changes:
        _entry_rule(changes["entry_rule"])
    with db.write() as s:
        ph = find_phase(s, challenge, phase)
        window = {k: getattr(ph, k) for k in ("opens_at", "closes_at")}
        check_window_order(**{**window, **{k: changes[k] for k in window if k in changes}})
        changed = {k: (getattr(ph, k), v) for k, v in changes.items() if getattr(ph, k) != v}
        for k, v in changes.items():
            setattr(ph, k, v)
        if rehash:
            data = resolve_data(
                ph.task,
                ph.split,
                ph.profile,
                episodes_file=ph.episodes_file,
                graphs=ph.graphs_dir,
                data_root=None,
                options=dict(ph.options or {}),
            )
            if data.data_sha256 != ph.data_sha256:
                changed["data_sha256"] = (ph.data_sha256, data.data_sha256)
            ph.data_sha256, ph.n_episodes = data.data_sha256, data.n_episodes
    return changed


def check_window_order(opens_at: dt.datetime | None, closes_at: dt.datetime | None) -> None:
    """Refuses a phase that would close before it opens (it would never take a submission).

    Example:
        >>> check_window_order(dt.datetime(2027, 1, 1), dt.datetime(2026, 1, 1))
        Traceback (most recent call last):
        ...
        vlneval.errors.InvalidInputError: error: the phase closes (2026-01-01T00:00:00Z) before it opens (2027-01-01T00:00:00Z): it would never take a submission
    """
    if opens_at is not None and closes_at is not None and closes_at <= opens_at:
        raise InvalidInputError(
            f"the phase closes ({iso_utc(closes_at)}) before it opens "
            f"({iso_utc(opens_at)}): it would never take a submission"
        )


ALIKE = (
    "names that differ only in case, spacing, invisible characters or Unicode compatibility "
    "forms are one name"
)


def team_key(name: str) -> str:
    """What makes a team name unique: its Unicode compatibility form (NFKC) without case, its
    spaces collapsed and invisible (format and control) characters dropped, since a public leaderboard shows a name that reads the same as another's
    (``Alpha``, fullwidth ``ａｌｐｈａ``) as the same team.

    Example:
        >>> {team_key(n) for n in ("alpha", " Alpha", "ＡＬＰＨＡ", "alpha")}
        {'alpha'}
        >>> team_key("Team  Ｂ"), team_key("al\u200bpha\u00ad")
        ('team b', 'alpha')
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    shown = "".join(c for c in folded if unicodedata.category(c) not in ("Cf", "Cc"))
    return " ".join(shown.split())  # a zero-width space or soft hyphen is not seen on a board


#: The scripts one name may mix (Unicode TR39's "highly restrictive" level, the rule browsers
#: show a domain name by): Latin with the Han, kana, Bopomofo or Hangul of Japanese, Chinese and
#: Korean names. Any other name is written in one script.
SCRIPT_MIXES = (
    {"Latn", "Hani", "Hira", "Kana"},
    {"Latn", "Hani", "Bopo"},
    {"Latn", "Hani", "Hang"},
)


def mixed_scripts(name: str) -> list[str]:
    """The scripts of a name that mixes them as no language writes (``аlpha`` with a Cyrillic
    ``а`` reads as ``alpha``), in order of first use; [] for a name of one script or of a
    mix in ``SCRIPT_MIXES``. A character's scripts are its Unicode Script_Extensions (the
    Unicode data fontTools carries); digits, spaces and punctuation (Common) and combining
    marks (Inherited) go with any script.

    Example:
        >>> mixed_scripts("\u0430lpha"), mixed_scripts("Team Δ")
        (['Cyrillic', 'Latin'], ['Latin', 'Greek'])
        >>> mixed_scripts("альфа-1"), mixed_scripts("東京チーム 2"), mixed_scripts("Team 한국")
        ([], [], [])
    """
    from fontTools import unicodedata as ucd  # deferred: fontTools (60 ms, team names only)

    anywhere = {"Zyyy", "Zinh"}  # Common, Inherited
    sets = [e - anywhere for e in map(ucd.script_extension, name)]
    sets = [s for s in sets if s]
    if not sets or set.intersection(*sets) or any(all(s & m for s in sets) for m in SCRIPT_MIXES):
        return []
    return [ucd.script_name(s) for s in dict.fromkeys(map(ucd.script, name)) if s not in anywhere]


def create_team(db: Database, name: str) -> str:
    """Adds a team; returns its API token (shown once: only its digest is stored)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise InvalidInputError("a team name has 1-100 characters")
    if mixed := mixed_scripts(name):
        raise InvalidInputError(
            f"team name {name!r} mixes {' and '.join(mixed)} letters, so it could pass for "
            "another team's (a Cyrillic а reads as a Latin a): write it in one script (Latin "
            "may join the Han, kana, Bopomofo or Hangul of a Japanese, Chinese or Korean name)"
        )
    token = new_token()
    with db.write() as s:
        same = [t for t in s.scalars(select(Team.name)) if team_key(t) == team_key(name)]
        if same:
            alike = "" if same[0] == name else f" ({name!r} reads as the same name: {ALIKE})"
            raise InvalidInputError(f"team {same[0]!r} already exists{alike}")
        s.add(Team(name=name, token_sha256=token_digest(token), token_prefix=token[:8]))
    return token


def rotate_token(db: Database, name: str) -> str:
    """Gives a team a new token (the old one stops working); returns it."""
    token = new_token()
    with db.write() as s:
        team = s.scalar(select(Team).where(Team.name == name))
        if team is None:
            raise NotFoundError(f"no team {name!r}")
        team.token_sha256, team.token_prefix = token_digest(token), token[:8]
        s.execute(  # the old token's browser logins end with it
            update(LoginSession)
            .where(LoginSession.team_id == team.id, LoginSession.revoked_at.is_(None))
            .values(revoked_at=utcnow())
        )
    return token


def requeue(db: Database, uid: str, *, force: bool = False) -> str:
    """Queues a failed or finished submission again (its old result is deleted); a failed one
    whose team has since used its quota is refused unless ``force`` (:func:`over_quota`)."""
    with db.write() as s:
        sub = s.scalar(select(Submission).where(Submission.uid == uid))
        if sub is None:
            raise NotFoundError(f"no submission {uid!r}")
        if sub.status not in (FAILED, FINISHED):
            raise InvalidInputError(
                f"submission {uid} is {sub.status}; only a finished or failed one is requeued"
            )
        used = None if force else over_quota(s, sub)
        if used is not None:
            raise InvalidInputError(
                f"submission {uid} was not counted against its team's quota, which has since "
                f"been used ({used}); queuing it again would count it: add --force to do so"
            )
        _queue_again(s, sub)
        return str(sub.status)


def internal_failures(phase_id: int) -> Select[Any]:
    """The query of a phase's internal failures, oldest first (``admin list`` names them,
    ``admin requeue --internal`` queues them again)."""
    return (
        select(Submission)
        .where(Submission.phase_id == phase_id, Submission.status == FAILED)
        .where(Submission.error_kind == "internal")
        .order_by(Submission.id)
    )


def requeue_internal(
    db: Database, challenge: str, phase: str, *, force: bool = False
) -> tuple[list[str], list[str]]:
    """Queues again every submission of a phase that the server failed to score (an internal
    failure, which the submitter was told the organisers can score again and would not count);
    returns their ids and those of the ones left failed, whose team has since used its quota
    (:func:`over_quota`), unless ``force``."""
    with db.write() as s:
        ph = find_phase(s, challenge, phase)
        failed = s.scalars(internal_failures(ph.id)).all()
        queued, skipped = [], []
        for sub in failed:  # in order: each one queued counts for the next
            if not force and over_quota(s, sub) is not None:
                skipped.append(sub.uid)
                continue
            _queue_again(s, sub)
            s.flush()
            queued.append(sub.uid)
        return queued, skipped


def over_quota(s: Session, sub: Submission) -> str | None:
    """The quota of ``sub``'s phase its team has used since ``sub`` failed (a failure is not
    counted, a queued submission is): its total, or its daily one on the day ``sub`` was
    made; None when queuing ``sub`` again is within both."""
    ph = sub.phase
    day = midnight(sub.created_at)
    counted = (Submission.phase_id == ph.id, Submission.team_id == sub.team_id)

    def count(*where: Any) -> int:
        query = select(func.count()).where(*counted, Submission.status != FAILED, *where)
        return int(s.scalar(query) or 0)

    if ph.total_quota is not None and count() >= ph.total_quota:
        return f"{ph.total_quota} in all"
    on_day = (Submission.created_at >= day, Submission.created_at < midnight(day, 1))
    if ph.daily_quota is not None and count(*on_day) >= ph.daily_quota:
        return f"{ph.daily_quota} on {day:%Y-%m-%d}"
    return None


def _queue_again(s: Session, sub: Submission) -> None:
    s.execute(delete(Result).where(Result.submission_id == sub.id))
    sub.status, sub.error_kind, sub.messages = QUEUED, None, []
    sub.attempts, sub.claim_token, sub.claimed_by = 0, None, None
    sub.started_at = sub.finished_at = sub.lease_expires_at = None
