"""The runner: episodes + predictions + profile -> per-episode table and summary."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.data.episodes import EpisodeTable
from vlneval.data.predictions import Predictions, parse_predictions
from vlneval.errors import InvalidInputError, ProblemCollector, VLNEvalError
from vlneval.evaluation.arrays import build_arrays
from vlneval.evaluation.checks import check_rules
from vlneval.evaluation.request import ScoreRequest, episodes_path, open_graphs, task_base
from vlneval.evaluation.summary import finish, finite_mean, summary_record
from vlneval.graph.store import GraphStore
from vlneval.profiles import Profile, get_profile
from vlneval.tasks import Task, get_task

__all__ = ["Evaluation", "evaluate", "load_split", "score_graph_task", "LABEL_TO_COLUMN"]

# Per-episode columns written as integers (0/1 flags and counts), as spec/outputs.md asks.
INT_COLUMNS = frozenset(
    {"success", "oracle_success", "steps", "jumps", "repeated_viewpoints", "unreachable"}
)

LABEL_TO_COLUMN = {
    "TL": "path_length",
    "NE": "nav_error",
    "OE": "oracle_error",
    "OSR": "oracle_success",
    "SR": "success",
    "SPL": "spl",
    "nDTW": "ndtw",
    "sDTW": "sdtw",
    "CLS": "cls",
}


@dataclass
class Evaluation:
    """One scored predictions file.

    Attributes:
        task, split, profile: what was scored and how.
        episodes: the split's episodes (all of them).
        scored: indices into ``episodes`` of the scored episodes, ascending.
        per_episode: one array per column, aligned to ``scored``.
        summary: the summary record of ``spec/outputs.md``.
    """

    task: str
    split: str
    profile: Profile
    episodes: EpisodeTable
    scored: np.ndarray
    per_episode: dict[str, np.ndarray]
    summary: dict[str, Any]
    predictions_source: str = ""
    form: str = "triple"
    extra: dict[str, Any] = field(default_factory=dict)

    def rows(self) -> list[dict[str, Any]]:
        """The per-episode table as a list of rows (episode id first)."""
        idf = self.episodes.id_field
        cols = self.per_episode
        out = []
        for k, i in enumerate(self.scored.tolist()):
            row: dict[str, Any] = {idf: self.episodes.ids[i], "scan": self.episodes.scans[i]}
            for name, values in cols.items():
                v = values[k]
                v = v.item() if hasattr(v, "item") else v
                row[name] = int(v) if name in INT_COLUMNS and v == v else v
            out.append(row)
        return out


def load_split(
    task: Task,
    split: str,
    profile: Profile,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
) -> tuple[EpisodeTable, GraphStore]:
    """The episodes of ``split`` and the graphs of their scans."""
    base = task_base(task, root)
    try:
        store = open_graphs(graphs, base)
    except VLNEvalError as exc:  # reported after any problem with the episodes
        missing: VLNEvalError | None = exc
    else:
        missing = None
    path = episodes_path(task, split, base, episodes_file)
    episodes = task.load(path, split, profile)
    if missing is not None:
        raise missing
    return episodes, store


def evaluate(
    task: str,
    split: str | None,
    predictions: str | Path,
    *,
    profile: str | None = None,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    subset: bool = False,
    form: str = "auto",
    trajectory_key: str | None = None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    skip_summaries: bool = False,
) -> Evaluation:
    """Scores a predictions file exactly as ``profile``'s official scorer does.

    Args:
        task: a registered task (``r2r``, ``r4r``, ``rxr``, ``demo``...).
        split: the split (default: the task's default split).
        predictions: the predictions file.
        profile: the scoring profile (default: the task's).
        root: the data root (default ``$VLNEVAL_DATA``); ``episodes_file`` and ``graphs``
            override the files found there.
        subset: score only the predicted episodes (the summary says "partial").
        form, trajectory_key: how to read trajectories (see ``parse_predictions``).
        declared: protocol fields the submitter declares; ``run``: fields an online run observed.
        options: task-specific options passed to the task's own scorer (e.g. ``data_version``,
            ``path_type``).
        skip_summaries: skip records that look like a file's own summary (see
            ``parse_predictions``), with a warning.

    Raises:
        VLNEvalError: bad input, unknown names or missing data; the message says where.
    """
    t = get_task(task)
    split = split or t.default_split
    prof = get_profile(profile or t.default_profile)
    if prof.name not in t.profiles:
        raise VLNEvalError(
            f"profile {prof.name} does not score task {t.name} (its profiles: {', '.join(t.profiles)})"
        )
    if t.evaluate_fn is None and options:
        names = ", ".join("--" + k.replace("_", "-") for k in options)
        raise VLNEvalError(f"{names} does not apply to task {t.name}")
    if t.evaluate_fn is not None:
        request = ScoreRequest(
            t, split, predictions, prof, root=root, episodes_file=episodes_file, graphs=graphs,
            subset=subset, form=form, trajectory_key=trajectory_key, declared=declared, run=run,
            options=dict(options or {}), skip_summaries=skip_summaries,
        )  # fmt: skip
        return t.evaluate_fn(request)  # type: ignore[no-any-return]
    return score_graph_task(
        t, split, predictions, prof, root=root, episodes_file=episodes_file, graphs=graphs,
        subset=subset, form=form, trajectory_key=trajectory_key, declared=declared, run=run,
        skip_summaries=skip_summaries,
    )[0]  # fmt: skip


def score_graph_task(
    t: Task,
    split: str,
    predictions: str | Path,
    prof: Profile,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    subset: bool = False,
    form: str = "auto",
    trajectory_key: str | None = None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    skip_summaries: bool = False,
) -> tuple[Evaluation, Predictions, GraphStore]:
    """Scores an R2R-family task (one without its own scorer) and also returns the parsed
    trajectories and the graphs, for callers that draw or diagnose them (see :func:`evaluate`)."""
    episodes, store = load_split(
        t, split, prof, root=root, episodes_file=episodes_file, graphs=graphs
    )
    if not episodes.scorable:
        raise InvalidInputError(
            f"{episodes.source}: split {split} has no goals (a hidden test split); it "
            "cannot be scored locally: submit it to an evaluation server (vlneval submit)"
        )
    pc = ProblemCollector(str(predictions))
    preds = parse_predictions(
        predictions,
        episodes,
        store,
        form=form,
        trajectory_key=trajectory_key,
        collect=pc,
        skip_summaries=skip_summaries,
    )
    result = score_parsed(
        episodes, preds, store, prof, subset=subset, declared=declared, run=run, pc=pc
    )
    return result, preds, store


def score_parsed(
    episodes: EpisodeTable,
    preds: Predictions,
    store: GraphStore,
    prof: Profile,
    *,
    subset: bool = False,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    pc: ProblemCollector | None = None,
) -> Evaluation:
    """Scores already parsed predictions (see :func:`evaluate`).

    ``pc`` carries problems found while parsing; they are raised together with the rule checks'.
    """
    from vlneval.metrics.batch import score_batch

    if len(preds.episodes) == 0:
        pc = pc if pc is not None else ProblemCollector(preds.source)
        if not pc.problems:
            pc.add(f"no prediction matches an episode of {episodes.task} {episodes.split}")
        pc.raise_if_any()
    arr = build_arrays(episodes, preds, store)
    flags = check_rules(episodes, preds, arr, store, prof, subset=subset, pc=pc)
    per = score_batch(
        arr.dist_flat,
        arr.table_offsets,
        arr.table_sizes,
        arr.scan_index,
        arr.traj,
        arr.traj_offsets,
        arr.ref,
        arr.ref_offsets,
        arr.goals,
        arr.goal_offsets,
        threshold=prof.threshold,
        success_inclusive=prof.success_inclusive,
        sdtw_inclusive=prof.sdtw_inclusive,
        spl_reference=prof.spl_reference,
        spl_floor=prof.spl_floor,
        collapse_repeats=prof.collapse_repeats,
    )
    per = dict(per)
    per.pop("repeats", None)  # the same count as the rule checks' repeated_viewpoints
    per.update(flags)
    per["unreachable"] = (~np.isfinite(per["nav_error"])).astype(np.int64)
    summary = summarise(episodes, preds, per, prof, subset=subset, declared=declared, run=run)
    return finish(episodes, preds, prof, per, summary)


def _mean(values: np.ndarray, label: str, warnings: list[str]) -> float | None:
    if label == "TL":
        cause = "the trajectory jumps between viewpoints with no path between them"
        return finite_mean(values, label, warnings, cause)
    cause = "a visited viewpoint cannot reach the goal"
    return finite_mean(values, label, warnings, cause, ", success counts them as failures")


def summarise(
    episodes: EpisodeTable,
    preds: Predictions,
    per: Mapping[str, np.ndarray],
    prof: Profile,
    *,
    subset: bool,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    columns: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The summary record (``spec/outputs.md``) of one scored file.

    ``columns`` maps metric labels that are not in ``LABEL_TO_COLUMN`` (task-specific metrics
    such as ``GP`` or ``TC``) to their per-episode column.
    """
    warnings = list(preds.warnings)
    if episodes.left_out:
        warnings.append(
            f"profile {prof.name} scores instructions k < {prof.max_instructions} only, as the "
            f"official script does; left out: {', '.join(episodes.left_out[:10])}"
        )
    partial = bool(preds.missing) and subset
    if preds.missing and not subset and not prof.require_complete:
        warnings.append(
            f"{len(preds.missing)} of {len(episodes)} episodes have no prediction; profile "
            f"{prof.name} scores the others, as its script does (first missing: "
            f"{', '.join(preds.missing[:5])})"
        )
    from vlneval.tasks import get_task

    if get_task(episodes.task).embedded:
        warnings.append("the demo task is synthetic (generated houses and episodes), not real data")
    label_to_column = {**LABEL_TO_COLUMN, **(columns or {})}
    metrics = {
        label: _mean(np.asarray(per[label_to_column[label]], dtype=np.float64), label, warnings)
        for label in prof.metrics
    }
    return summary_record(
        task=episodes.task, split=episodes.split, prof=prof, source=preds.source,
        form=preds.form, n_scored=len(preds.episodes), n_expected=len(episodes),
        partial=partial, metrics=metrics, per=per, warnings=warnings, declared=declared, run=run,
        unavailable={k: "no scored episodes" for k, v in metrics.items() if v is None},
    )  # fmt: skip
