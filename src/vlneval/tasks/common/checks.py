"""Rule checks a profile makes before scoring, and consistency checks on every summary (with
the protocol card, the parts every result starts from: :func:`start_result`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vlneval.errors import Hinted, ProblemCollector, hint, hinted
from vlneval.graph.store import GraphStore
from vlneval.tasks.common._steps import step_counts
from vlneval.tasks.common.arrays import ScoringArrays
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.predictions import Predictions
from vlneval.tasks.common.protocol import clash_warnings, protocol_card
from vlneval.tasks.common.record_checks import shown_id
from vlneval.tasks.common.result import Check, ResultBuilder
from vlneval.tasks.profiles import Profile

__all__ = [
    "check_matches",
    "check_rules",
    "consistency_checks",
    "incomplete",
    "missing_of",
    "missing_problem",
    "no_match",
    "start_result",
    "stray_ids",
]

EPS = 1e-12


def incomplete(what: str, missing: Sequence[str], profile: Profile, stray: str = "") -> Hinted:
    """The problem of a file in which ``what`` (``"2 of 3 episodes"``) have no prediction
    while ``profile`` requires all of them; ``missing``: their ids, ``stray``: the
    :func:`stray_ids` clause. The one wording of it, true for the command line and the
    Python API (the advice is a hint a server replaces with its own); a profile whose caller,
    not its script, requires complete files (``caller_requires_complete``) is not named.

    Example:
        >>> from dataclasses import replace
        >>> from vlneval.tasks.profiles import get_profile
        >>> incomplete("2 of 3 episodes", ["1_1", "1_2"], get_profile("r2r"))
        '2 of 3 episodes have no prediction (first: 1_1, 1_2); profile r2r requires all of them: score only the predicted ones with --subset (subset=True in Python), reported as partial'
        >>> duet = replace(get_profile("r2r-duet"), caller_requires_complete=True)
        >>> incomplete("1 of 3 episodes", ["1_1"], duet)
        '1 of 3 episodes have no prediction (first: 1_1); score only the predicted ones with --subset (subset=True in Python), reported as partial'
    """
    by_profile = not profile.caller_requires_complete
    return hinted(
        f"{what} have no prediction (first: {', '.join(missing[:5])})"
        + (f"; profile {profile.name} requires all of them" if by_profile else ""),
        hint(
            "--subset",
            "score only the predicted ones with --subset (subset=True in Python), reported as "
            "partial",
            lead=": " if by_profile else "; ",
        ),
        stray,
    )


def check_matches(
    episodes: EpisodeTable,
    preds: Predictions,
    pc: ProblemCollector | None = None,
    missing: str | None = None,
) -> None:
    """Refuses a file none of whose predictions is an episode of the split (a file made for
    another split or task): the problems ``pc`` holds say why (after the completeness problem
    ``missing`` when they name episodes: every matched record was malformed), else this one
    does.

    Raises:
        InvalidInputError: no prediction matches an episode of ``episodes``.
    """
    if len(preds.episodes):
        return
    pc = pc if pc is not None else ProblemCollector(preds.source)
    if not pc.problems:
        pc.add(no_match(episodes.task, episodes.split))
    elif missing is not None and any(p.episode is not None for p in pc.problems):
        pc.add_first(missing)
    pc.raise_if_any()


def missing_problem(
    episodes: EpisodeTable, preds: Predictions, profile: Profile, subset: bool
) -> str | None:
    """The completeness problem of ``preds`` (:func:`incomplete`), or None when no episode
    lacks a prediction or ``profile`` (or ``subset``) allows it."""
    if not preds.missing:
        return None
    first = episodes.record_id(episodes.index[preds.missing[0]])
    return missing_of(preds.missing, len(episodes.ids), preds.unknown, first, profile, subset)


def missing_of(
    missing: Sequence[str],
    total: int,
    unknown: Sequence[str | int],
    first: str | int,
    profile: Profile,
    subset: bool,
) -> str | None:
    """The completeness problem of a file leaving out the episodes ``missing`` (ids) of
    ``total`` (:func:`incomplete`; ``unknown``: the ids not in the split, ``first``: the first
    missing id as the file writes it), or None when none is missing or ``profile`` (or
    ``subset``) allows it; every task's reader words it through this."""
    if not (missing and profile.require_complete and not subset):
        return None
    return incomplete(
        f"{len(missing)} of {total} episodes", missing, profile, stray_ids(unknown, first)
    )


def no_match(task: str, split: str) -> str:
    """The problem of a file none of whose predictions is an episode of ``task``'s ``split``.

    Example:
        >>> no_match("r2r", "val_unseen")
        'no prediction matches an episode of r2r val_unseen'
    """
    return f"no prediction matches an episode of {task} {split}"


def stray_ids(unknown: Sequence[str | int], expected: str | int = "", *, advice: str = "") -> str:
    """What a completeness problem adds when records had ids not in the split (the ids as
    the file writes them: a number bare, a string quoted, so a stray space shows), else "".
    ``expected``: an id of the split that has no prediction, as an example; ``advice``: the
    words in brackets instead (a benchmark whose ids are all JSON integers).

    Example:
        >>> stray_ids([4332], "4332_0")
        '; 1 record has an id not in the split: 4332 (an id of another type, or with spaces? ids match exactly, e.g. "4332_0")'
        >>> stray_ids(["4332_0 ", "x"], "4332_0")[:56], stray_ids([], "4332_0")
        ('; 2 records have ids not in the split: "4332_0 ", "x" (a', '')
        >>> stray_ids([99], 6142)[-10:]
        'e.g. 6142)'
        >>> stray_ids([7, 8], advice="another split's")
        "; 2 records have ids not in the split: 7, 8 (another split's)"
    """
    if not unknown:
        return ""
    n = len(unknown)
    shown = ", ".join(
        json.dumps(u, ensure_ascii=False) if isinstance(u, str) else shown_id(u)
        for u in unknown[:5]
    )  # a string quoted, so that a stray space shows
    advice = advice or (
        "an id of another type, or with spaces? ids match exactly, "
        f"e.g. {json.dumps(expected, ensure_ascii=False)}"
    )
    return (
        f"; {n} record{' has an id' if n == 1 else 's have ids'} not in the split: {shown}"
        f"{', ...' if n > 5 else ''} ({advice})"
    )


def check_rules(
    episodes: EpisodeTable,
    preds: Predictions,
    arr: ScoringArrays,
    graphs: GraphStore,
    profile: Profile,
    *,
    subset: bool = False,
    pc: ProblemCollector | None = None,
    jump_reason: str | None = None,
) -> dict[str, np.ndarray]:
    """Completeness, start, adjacency and repeat rules of ``profile`` (completeness first,
    before the problems ``pc`` holds from reading the records: a file with many malformed
    steps or jumps still shows it within the first 20 problems).

    Returns per-episode counts (``jumps``, ``repeated_viewpoints``) for the per-episode table,
    both counted in one pass for every task. ``jump_reason`` replaces the words in brackets
    after a jump (default: the official scorer rejects jumps, and the profile that scores them).

    Raises:
        InvalidInputError: the file breaks a rule the profile enforces, or ``pc`` already holds
            problems; every one is listed.
    """
    pc = pc if pc is not None else ProblemCollector(preds.source)
    order = preds.episodes
    problem = missing_problem(episodes, preds, profile, subset)
    if problem is not None:
        pc.add_first(problem)  # before the reading problems
    starts = arr.traj[arr.traj_offsets[:-1]]
    ref_starts = arr.ref[arr.ref_offsets[:-1]]
    for k in np.flatnonzero(starts != ref_starts):
        i = int(order[k])
        start = graphs.graph(episodes.scans[i]).ids[int(starts[k])]
        pc.add(
            f"the trajectory starts at {start}, not at the episode's start "
            f"{episodes.paths[i][0]} (it must include the start viewpoint)",
            episode=episodes.label(i),
            field=f"{preds.key}[0]",
        )
    jumps, first_jump, repeats = step_counts(
        arr.traj, arr.traj_offsets, arr.scan_index, arr.adjacency_flat(graphs),
        arr.table_offsets, arr.table_sizes,
    )  # fmt: skip
    if profile.check_adjacency or profile.strict_cls_edges:
        _report_jumps(pc, episodes, preds, arr, graphs, first_jump, jump_reason or _why(profile))
    if profile.strict_cls_edges:
        for k in np.flatnonzero(repeats)[:200]:
            i = int(order[k])
            pc.add(
                hinted(
                    f"repeats a viewpoint ({int(repeats[k])} time(s)); profile {profile.name} "
                    "reproduces a CLS that looks every step up as a graph edge and cannot score it",
                    hint("--profile", "use --profile r4r, which scores repeats", aside=True),
                ),
                episode=episodes.label(i),
                field=preds.key,
            )
    pc.raise_if_any()
    return {"jumps": jumps, "repeated_viewpoints": repeats}


def _report_jumps(
    pc: ProblemCollector,
    episodes: EpisodeTable,
    preds: Predictions,
    arr: ScoringArrays,
    graphs: GraphStore,
    first_jump: np.ndarray,
    reason: str,
) -> None:
    """One problem per episode with a jump, naming its first one (``reason`` in brackets)."""
    for k in np.flatnonzero(first_jump >= 0).tolist():
        p = int(first_jump[k])
        i = int(preds.episodes[k])
        step = p + 1 - int(arr.traj_offsets[k])
        g = graphs.graph(episodes.scans[i])
        pc.add(
            hinted(
                f"viewpoint {g.ids[arr.traj[p + 1]]} is not a neighbour of {g.ids[arr.traj[p]]} "
                f"in scan {g.scan} (",
                reason,
                ")",
            ),
            episode=episodes.label(i),
            field=f"{preds.key}[{step}]",
        )


def _why(profile: Profile) -> str:
    other = "r4r" if profile.strict_cls_edges else "r2r-duet"
    return hinted(
        "the official scorer rejects jumps",
        hint("--profile", f"use --profile {other} to score them with their shortest distance"),
    )


def _check(name: str, holds: bool, detail: str, profile: Profile) -> Check:
    quirk = (not holds) and name in profile.may_break
    note = f"known quirk of the scorer profile {profile.name} reproduces" if quirk else None
    return Check(name, bool(holds), detail, note)


def _ndtw_within(nd: np.ndarray, per_episode: Mapping[str, np.ndarray]) -> np.ndarray:
    """Where 0 < nDTW <= 1 holds; an nDTW of exactly 0 holds too where it is no bug: a finite
    DTW whose exp(-DTW / (m d_th)) underflowed (a very long trajectory), or an episode whose
    goal is unreachable (infinite DTW, counted and reported as unreachable).

    Example:
        >>> per = {"dtw": np.array([40004.0, np.inf, np.inf]), "unreachable": np.array([0, 1, 0])}
        >>> _ndtw_within(np.zeros(3), per).tolist()
        [True, True, False]
    """
    zero_ok = np.zeros(len(nd), dtype=np.bool_)
    if "dtw" in per_episode:
        zero_ok |= np.isfinite(per_episode["dtw"])
    if "unreachable" in per_episode:
        zero_ok |= np.asarray(per_episode["unreachable"]) != 0
    return ((nd > 0) | ((nd == 0) & zero_ok)) & (nd <= 1 + EPS)


def consistency_checks(
    summary: Mapping[str, float | None], per_episode: Mapping[str, np.ndarray], profile: Profile
) -> list[Check]:
    """The consistency checks of ``spec/metrics.md`` on one summary, on the metrics
    ``profile`` reports (a goal task computes an nDTW column but reports no nDTW: not checked).

    Example:
        >>> from vlneval.tasks.profiles import get_profile
        >>> m = {"OSR": 0.5, "SR": 0.5, "SPL": 0.4, "sDTW": 0.3, "nDTW": 0.6}
        >>> [c.name for c in consistency_checks(m, {}, get_profile("r2r")) if not c.holds]
        []
    """
    checks: list[Check] = []

    def have(*labels: str) -> bool:
        return all(summary.get(x) is not None for x in labels)

    def le(lo: str, hi: str) -> None:
        if have(lo, hi):
            a, b = float(summary[lo]), float(summary[hi])  # type: ignore[arg-type]
            checks.append(
                _check(f"{lo} <= {hi}", a <= b + EPS, f"{lo} {a:.6f}, {hi} {b:.6f}", profile)
            )

    le("SR", "OSR")
    le("SPL", "SR")
    if have("SPL"):
        v = float(summary["SPL"])  # type: ignore[arg-type]
        checks.append(_check("SPL >= 0", v >= 0, f"SPL {v:.6f}", profile))
    le("sDTW", "SR")
    le("sDTW", "nDTW")
    le("RGSPL", "RGS")
    nd = per_episode.get("ndtw")
    if nd is not None and len(nd) and "nDTW" in profile.metrics:
        bad = int(np.sum(~_ndtw_within(nd, per_episode)))
        checks.append(_check("0 < nDTW <= 1", bad == 0, f"{bad} episode(s) outside", profile))
    cls = per_episode.get("cls")
    if cls is not None and len(cls) and "CLS" in profile.metrics:
        bad = int(np.sum(~((cls >= -EPS) & (cls <= 1 + EPS))))
        checks.append(_check("0 <= CLS <= 1", bad == 0, f"{bad} episode(s) outside", profile))
    return checks


def start_result(
    *,
    task: str,
    split: str,
    prof: Profile,
    source: str,
    form: str,
    n_scored: int,
    n_expected: int,
    partial: bool,
    metrics: dict[str, float | None],
    unavailable: Mapping[str, str],
    per: Mapping[str, np.ndarray],
    warnings: list[str],
    data_version: str | None = None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    card_extra: Mapping[str, Any] | None = None,
    details: Mapping[str, Any] | None = None,
) -> ResultBuilder:
    """The parts every result shares: protocol card, consistency checks, metrics.

    ``warnings`` gains one line per failed consistency check (a documented quirk excepted);
    ``card_extra`` joins the protocol card, ``details`` the record (after ``unavailable``).

    Example:
        >>> from vlneval.tasks.profiles import get_profile
        >>> b = start_result(task="demo", split="val", prof=get_profile("demo"), source="p.json",
        ...     form="plain", n_scored=1, n_expected=2, partial=True, metrics={"SR": 1.0},
        ...     unavailable={}, per={}, warnings=[])
        >>> b.partial, b.protocol["split"], b.protocol["episodes"], b.protocol["n_expected"]
        (True, 'val', 1, 2)
    """
    card = protocol_card(
        task=task, split=split, profile=prof, n_episodes=n_scored, n_expected=n_expected,
        partial=partial, data_version=data_version, declared=declared, run=run,
    )  # fmt: skip
    card.update(card_extra or {})
    warnings.extend(clash_warnings(card))
    checks = consistency_checks(metrics, per, prof)
    for c in checks:
        if not c.holds and c.quirk is None:
            warnings.append(f"consistency check failed: {c.name} ({c.detail})")
    return ResultBuilder(
        task=task, split=split, profile=prof, source=source, form=form, n_expected=n_expected,
        partial=partial, metrics=metrics, unavailable=dict(unavailable), checks=checks,
        warnings=warnings, protocol=card, data_version=data_version, details=dict(details or {}),
    )  # fmt: skip
