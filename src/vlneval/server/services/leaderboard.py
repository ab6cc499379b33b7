"""A phase's leaderboard: one entry per team, privileged entries apart, baselines unranked.

Which submission is a team's entry:
- the one the team picked (:class:`~vlneval.server.models.TeamEntry`), or none if it picked
  none;
- without a pick, its best submission by the phase's primary metric when the phase's
  ``entry_rule`` is ``best`` (the default), nothing when it is ``chosen``.
Only finished submissions with a primary value are shown, never one the team hid or withdrew
or the organisers hid or deleted. Ties go to the earlier submission.

Entries whose protocol card declares privileged information (``privileged`` other than
``none``) are ranked in a section of their own, never among the others. A submission the
organisers pinned as a baseline is shown in the main section at its place by value, without a
rank, and takes no rank from anyone. A flagged entry is shown with the organisers' reason.

Public numbers are rounded to the precision the pages show (:func:`public_value`): two
decimals of a percentage for rates, two decimals otherwise; the database keeps full precision.
A team's own results are rounded the same way (:func:`public_summary`): at full precision, two
submissions that differ in one episode would give that episode's hidden score exactly.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from vlneval.reports.terminal import shown_unit
from vlneval.server.models import FINISHED, Phase, Result, Submission, Team, TeamEntry
from vlneval.server.services.scoring import PhaseSpec, server_paths
from vlneval.server.services.validation import ServerPaths
from vlneval.tasks.common.protocol import episodes_text

__all__ = [
    "Entry",
    "leaderboard",
    "protocol_fields",
    "rank",
    "public_value",
    "is_privileged",
    "public_entry",
    "public_intervals",
    "shown_intervals",
    "public_summary",
    "shown_episodes",
    "headline_metrics",
    "RANKED",
    "PRIVILEGED",
    "BASELINE",
]

KEY_FIELDS = ("observations", "action_space", "map", "privileged", "inference_budget", "model")
RANKED, PRIVILEGED, BASELINE = "ranked", "privileged", "baseline"
HEADLINE = ("SR", "SPL", "NE", "nDTW", "RGSPL", "TC", "SPD", "SED", "GP", "det_SPL", "sDTW")
NOT_PRIVILEGED = ("", "none", "no", "false", "not declared")


@dataclass(frozen=True)
class Entry:
    """One row of a leaderboard (``rank`` None: a baseline, or a private board)."""

    rank: int | None
    team: str
    team_id: int
    method: str
    url: str
    submitted_at: dt.datetime
    primary_value: float
    metrics: dict[str, Any]
    n_episodes: int
    protocol: dict[str, Any]
    section: str = RANKED
    description: str = ""
    flag: str = ""
    intervals: dict[str, list[float]] = field(default_factory=dict)
    uid: str = ""  # the submission's id: shown to its own team only


def public_value(label: str, value: Any) -> float | None:
    """``value`` rounded to the precision the pages show (rates: 4 decimals of the fraction,
    i.e. 2 of the percentage; others 2 decimals); None for a missing or non-finite value.

    Example:
        >>> public_value("SPL", 0.470833333), public_value("NE", 3.14159), public_value("SR", None)
        (0.4708, 3.14, None)
    """
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return None
    return round(float(value), 4 if shown_unit(label) == "%" else 2)


def shown_intervals(
    intervals: dict[str, Any] | None, asked: int, n_episodes: int, n_expected: Any
) -> dict[str, Any]:
    """The stored intervals a team may see: none when :func:`shown_episodes` hides the count
    scored (Touchdown SDR's labelled pairs), since bounds computed on those rows tell it (a
    Clopper-Pearson bound of 1 - 0.025^(1/n) gives n outright, a bootstrap's steps of 1/n
    nearly so).

    Example:
        >>> shown_intervals({"SR": [0.2, 0.7]}, 9, 3, 3), shown_intervals({"SR": [0.2, 0.7]}, 9, 9, 9)
        ({}, {'SR': [0.2, 0.7]})
    """
    hidden = shown_episodes(asked, n_episodes, n_expected) != n_episodes
    return {} if hidden else dict(intervals or {})


def public_intervals(intervals: dict[str, Any] | None) -> dict[str, list[float]]:
    """Each metric's interval bounds rounded as :func:`public_value` rounds the metric."""
    out = {}
    for label, pair in (intervals or {}).items():
        low, high = (public_value(label, v) for v in pair)
        if low is not None and high is not None:
            out[label] = [low, high]
    return out


#: A number a check's detail gives for a metric: ``SR 0.527778``.
METRIC_NUMBER = re.compile(r"(?<![\w.@])([A-Za-z][\w@]*) (-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\b")
#: A check's count of episodes past a bound (``3 episode(s) outside``): which episodes those
#: are depends on the labels (an nDTW of 0 is a path far from the reference), and the count,
#: moved by one episode changed between two files, would tell that episode's; a team is told
#: whether there are any.
EPISODES_OUTSIDE = re.compile(r"(?<![\w.])(\d+) episode\(s\) outside")


def shown_episodes(asked: int, n_episodes: int, n_expected: Any) -> int:
    """The episode count a team is shown: the items the phase asks for (``asked``) when the
    scorer scored all it expected but fewer than those (Touchdown SDR scores the labelled
    (route, panorama) pairs of the ones it asks for: how many those are is a label), else the
    count scored (the records a partial file holds: the team knows them).

    Example:
        >>> shown_episodes(9, 3, 3), shown_episodes(2349, 2349, 2349), shown_episodes(2349, 1, 2349)
        (9, 2349, 1)
    """
    return asked if n_expected == n_episodes < asked else n_episodes


def public_summary(
    summary: dict[str, Any], asked: int, phase: Phase | None = None
) -> dict[str, Any]:
    """A stored summary as its team sees it: its metrics and the numbers of its checks rounded
    as :func:`public_value` rounds them (and a count of episodes past a check's bound as
    whether there are any, :func:`_shown_detail`), its episode counts as :func:`shown_episodes` gives
    them (``asked``: the phase's items), the files of ``phase``'s data redacted (a summary
    stored before they all were, :func:`~vlneval.server.services.scoring.server_paths`).

    Example:
        >>> out = public_summary({"metrics": {"SR": 0.527778, "NE": 4.0796}, "n_episodes": 3,
        ...     "n_expected": 3, "checks": [{"name": "SR <= OSR", "detail": "SR 0.527778, OSR 0.6"}],
        ...     "protocol": {"episodes": 3, "n_expected": 3}}, 9)
        >>> out["metrics"], out["checks"][0]["detail"], out["n_episodes"], out["protocol"]
        ({'SR': 0.5278, 'NE': 4.08}, 'SR 0.5278, OSR 0.6', 9, {'episodes': 9, 'n_expected': 9})
    """
    out, scored = dict(summary), summary.get("n_episodes")
    n = shown_episodes(asked, scored, summary.get("n_expected")) if isinstance(scored, int) else 0
    if isinstance(scored, int) and n != scored:
        out["n_episodes"] = out["n_expected"] = n
        out["protocol"] = {**(summary.get("protocol") or {}), "episodes": n, "n_expected": n}
    out["metrics"] = {k: public_value(k, v) for k, v in (summary.get("metrics") or {}).items()}
    out["checks"] = [
        {**c, "detail": _shown_detail(c.get("detail", ""))} for c in summary.get("checks") or []
    ]
    if phase is None:
        return out

    return dict(server_paths(PhaseSpec.of(phase)).redact_all(out))


def _shown_detail(detail: Any) -> str:
    """A check's detail as its team sees it: metric numbers rounded (:func:`public_value`), a
    count of episodes past a bound as whether there are any (:data:`EPISODES_OUTSIDE`).

    Example:
        >>> _shown_detail("SR 0.527778, OSR 0.6"), _shown_detail("3 episode(s) outside")
        ('SR 0.5278, OSR 0.6', 'some episode(s) outside')
        >>> _shown_detail("0 episode(s) outside")
        'no episode outside'
    """
    rounded = METRIC_NUMBER.sub(_rounded, str(detail))
    return EPISODES_OUTSIDE.sub(
        lambda m: "no episode outside" if m[1] == "0" else "some episode(s) outside", rounded
    )


def _rounded(m: re.Match[str]) -> str:
    value = public_value(m[1], float(m[2]))
    return m[0] if value is None else f"{m[1]} {value}"


def is_privileged(value: Any) -> bool:
    """True when a protocol card's ``privileged`` field declares privileged information.

    Example:
        >>> is_privileged("none"), is_privileged("not declared (offline predictions file)")
        (False, False)
        >>> is_privileged("ground-truth goal position")
        True
    """
    if value is None or value is False:
        return False
    text = str(value).strip().lower()
    return text not in NOT_PRIVILEGED and not text.startswith("not declared")


def headline_metrics(primary: str, metrics: Iterable[str], n: int = 3) -> list[str]:
    """The columns a board shows: the primary metric and ``n`` more (the others are behind the
    details view).

    Example:
        >>> headline_metrics("SPL", ["TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW", "CLS"])
        ['SPL', 'SR', 'NE', 'nDTW']
    """
    names = [m for m in metrics if m != primary]
    preferred = [m for m in HEADLINE if m in names]
    rest = [m for m in names if m not in preferred]
    return [primary, *(preferred + rest)[:n]]


def protocol_fields(summary: dict[str, Any]) -> dict[str, Any]:
    """The protocol card's key fields of a stored summary; the profile with the data version
    the phase scores (a benchmark with one release has none).

    Example:
        >>> card = {"scoring": {"profile": "r2r", "profile_version": "1"}, "episodes": 2349,
        ...         "privileged": "none"}
        >>> protocol_fields({"protocol": card})["profile"], protocol_fields({"protocol": card})["privileged"]
        ('r2r v1', 'none')
        >>> protocol_fields({"protocol": card, "data_version": "v2"})["profile"]
        'r2r v1 (data v2)'
    """
    card = summary.get("protocol") or {}
    scoring = card.get("scoring") or {}
    profile = f"{scoring.get('profile', '?')} v{scoring.get('profile_version', '?')}"
    data = summary.get("data_version") or card.get("data_version")
    out: dict[str, Any] = {
        "profile": f"{profile} (data {data})" if data else profile,
        "episodes": episodes_text(card),
    }
    for key in KEY_FIELDS:
        value = card.get(key)
        out[key] = (
            "not declared" if isinstance(value, str) and value.startswith("not declared") else value
        )
    return out


def rank(rows: list[tuple[int, float, dt.datetime, Any]], higher_is_better: bool) -> list[Any]:
    """The best row per team (key 0), ordered best first; ties go to the earlier time.

    Example:
        >>> import datetime as dt
        >>> t = dt.datetime(2026, 1, 1)
        >>> rows = [(1, 0.5, t, "a"), (1, 0.7, t, "b"), (2, 0.7, t - dt.timedelta(1), "c")]
        >>> rank(rows, True)
        ['c', 'b']
    """
    sign = -1.0 if higher_is_better else 1.0
    best: dict[int, tuple[float, dt.datetime, Any]] = {}
    for team, value, when, item in rows:
        key = (sign * value, when)
        if team not in best or key < best[team][:2]:
            best[team] = (key[0], key[1], item)
    return [item for _, _, item in sorted(best.values(), key=lambda r: (r[0], r[1]))]


Row = tuple[Submission, Result, Team]


def _shown(s: Session, phase: Phase) -> list[Row]:
    q = (
        select(Submission, Result, Team)
        .join(Result, Result.submission_id == Submission.id)
        .join(Team, Team.id == Submission.team_id)
        .where(Submission.phase_id == phase.id, Submission.status == FINISHED)
        .where(Result.primary_value.is_not(None), Submission.withdrawn_at.is_(None))
        .where(Submission.moderation == "", Submission.team_hidden.is_(False))
    )
    return [(sub, res, team) for sub, res, team in s.execute(q).all()]


def _team_entries(s: Session, phase: Phase, rows: list[Row]) -> list[Row]:
    """Each team's entry: its pick, or (rule ``best``, no pick) its best."""
    picks = {
        t.team_id: t.submission_id
        for t in s.scalars(select(TeamEntry).where(TeamEntry.phase_id == phase.id))
    }
    by_team: dict[int, list[Any]] = {}
    for r in rows:  # one pass; each team's rows keep their order
        by_team.setdefault(r[2].id, []).append(r)
    out = []
    for team_id in sorted(by_team):
        mine = by_team[team_id]
        if team_id in picks:
            out += [r for r in mine if r[0].id == picks[team_id]]
        elif phase.entry_rule != "chosen":
            out += rank([_key(r) for r in mine], phase.higher_is_better)
    return out


def _key(r: Row) -> tuple[int, float, dt.datetime, Row]:
    return (r[2].id, float(r[1].primary_value or 0.0), r[0].created_at, r)


def _entry(r: Row, section: str, position: int | None, paths: ServerPaths) -> Entry:
    sub, res, team = r  # ``paths``: the phase's files, built once for its board
    summary = dict(paths.redact_all(public_summary(res.summary, sub.phase.n_episodes)))
    return Entry(
        rank=position,
        team=team.name,
        team_id=team.id,
        method=sub.method,
        url=sub.url,
        submitted_at=sub.created_at,
        primary_value=float(res.primary_value or 0.0),
        metrics=dict(res.metrics),
        n_episodes=shown_episodes(
            sub.phase.n_episodes, res.n_episodes, res.summary.get("n_expected")
        ),
        protocol=protocol_fields(summary),
        section=section,
        description=sub.description,
        flag=sub.flag_reason,
        intervals=shown_intervals(
            res.intervals, sub.phase.n_episodes, res.n_episodes, res.summary.get("n_expected")
        ),
        uid=sub.uid,
    )


def _ordered(rows: list[Row], higher_is_better: bool) -> list[Row]:
    return rank([(i, *_key(r)[1:]) for i, r in enumerate(rows)], higher_is_better)


def leaderboard(s: Session, phase: Phase, *, team_id: int | None = None) -> list[Entry]:
    """The entries of ``phase``: the main section (ranked entries and baselines), then the
    privileged section; only ``team_id``'s entries when given. Full precision: round with
    :func:`public_value` before showing."""
    paths = server_paths(PhaseSpec.of(phase))  # every row is of this phase
    rows = _shown(s, phase)
    baselines = [r for r in rows if r[0].baseline]
    entries = _team_entries(s, phase, [r for r in rows if not r[0].baseline])
    privileged = [r for r in entries if is_privileged(protocol_fields(r[1].summary)["privileged"])]
    apart = {id(r) for r in privileged}
    honest = [r for r in entries if id(r) not in apart]
    ranked_ids = {id(r) for r in honest}
    main, out, position = _ordered(honest + baselines, phase.higher_is_better), [], 0
    for r in main:
        if id(r) in ranked_ids:
            position += 1
            out.append(_entry(r, RANKED, position, paths))
        else:
            out.append(_entry(r, BASELINE, None, paths))
    for i, r in enumerate(_ordered(privileged, phase.higher_is_better), start=1):
        out.append(_entry(r, PRIVILEGED, i, paths))
    return [e for e in out if team_id is None or e.team_id == team_id]


def public_entry(e: Entry, primary: str) -> dict[str, Any]:
    """The public fields of an entry, numbers rounded (the row of the API and the export)."""
    return {
        "section": e.section,
        "rank": e.rank,
        "team": e.team,
        "method": e.method,
        "url": e.url,
        "description": e.description,
        "submitted_at": e.submitted_at,
        "primary_value": public_value(primary, e.primary_value),
        "metrics": {k: public_value(k, v) for k, v in e.metrics.items()},
        "intervals": public_intervals(e.intervals),
        "n_episodes": e.n_episodes,
        "flag": e.flag,
        "privileged": e.section == PRIVILEGED,
        "protocol": e.protocol,
    }
