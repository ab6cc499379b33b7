"""The table of a sweep: checkpoint x seed x metric, with intervals, and TensorBoard scalars.

For each (checkpoint, seed) whose shards are all complete: the shards are merged
(:func:`vlneval.distributed.merge`) into the run's predictions file, which is scored centrally
(never an average of per-shard means); its intervals are ``vlneval report``'s: the CLI passes
:func:`vlneval.diagnostics.column_intervals` as ``intervals`` (the same resamples for every
metric with a value in each episode, each other metric on the episodes it has a value for, and
the Clopper-Pearson interval for a rate at 0 or 100 %) and
:func:`vlneval.diagnostics.path_groups` as ``groups``, so that whole paths are resampled: R2R's
three instructions of one path are not independent. (``distributed`` sits below
``diagnostics`` in the import layers, so both come in as arguments.)
Per checkpoint, the seeds' scores are summarised as mean ± sample
std (:func:`vlneval.stats.aggregate_scores`). Checkpoints are listed in natural order
(:func:`~vlneval.distributed.sweep.natural_order`: ``ckpt.20`` before ``ckpt.100``). The
statistics layer is pure numpy, so this module may use it without a cycle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.distributed.merge import merge
from vlneval.distributed.shardfile import shard_paths
from vlneval.distributed.sweep import (
    Unit,
    checkpoint_names,
    checkpoint_step,
    natural_order,
    unit_status,
)
from vlneval.errors import VLNEvalError
from vlneval.metrics.info import LABELS, column_name, format_value, shown_unit
from vlneval.stats import aggregate_scores

__all__ = [
    "SweepTable",
    "sweep_table",
    "selected_checkpoint",
    "selection",
    "selection_note",
    "to_markdown",
    "to_rows",
    "write_tensorboard",
    "unstepped",
    "VLNCE_TAGS",
]

#: The method of a Clopper-Pearson interval (:func:`vlneval.diagnostics.column_intervals`).
EXACT = "clopper-pearson"

#: vlneval labels -> the metric names VLN-CE logs as ``eval_{split}_{name}``.
VLNCE_TAGS = {
    "TL": "path_length",
    "NE": "distance_to_goal",
    "OSR": "oracle_success",
    "SR": "success",
    "SPL": "spl",
    "nDTW": "ndtw",
    "sDTW": "sdtw",
}


@dataclass
class SweepTable:
    """Scores of a sweep.

    Attributes:
        split: the split scored.
        runs: one dict per scored (checkpoint, seed), in natural checkpoint order:
            ``checkpoint``, ``label``, ``step`` (None: no number in its name), ``seed``,
            ``n_episodes``, ``metrics`` (label -> ``{value, low, high, n, n_units}``, ``n`` the
            episodes of its value and interval, ``n_units`` the independent units its interval
            rests on: the paths resampled, else the episodes).
        summary: one dict per checkpoint, in the same order: ``label``, ``step``, ``seeds``,
            ``metrics`` (label -> ``{mean, std}``).
        incomplete: (checkpoint label, seed, units not complete) of runs left out.
        units: label -> the unit its values are shown in (``%`` for rates, stored as
            fractions; ``m``...), from the metric table or the scorer's own units.
        resampling: what the intervals resample, ``paths`` or ``episodes``.
        exact: the rates at 0 or 100 % in some run, whose interval is the Clopper-Pearson one.
        selection: the checkpoint this split selected, the metric and the split
            (:func:`selection`); None when nothing was selected.
    """

    split: str
    runs: list[dict[str, Any]] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    incomplete: list[tuple[str, int, int]] = field(default_factory=list)
    units: dict[str, str] = field(default_factory=dict)
    confidence: float = 0.95
    resampling: str = "episodes"
    exact: set[str] = field(default_factory=set)
    selection: dict[str, str] | None = None


def _groups(units: Sequence[Unit]) -> dict[tuple[str | None, int], list[Unit]]:
    out: dict[tuple[str | None, int], list[Unit]] = {}
    for u in units:
        out.setdefault((u.checkpoint, u.seed), []).append(u)
    return out


def sweep_table(
    units: Sequence[Unit],
    score: Callable[[Path], Any],
    *,
    intervals: Callable[..., Mapping[str, Any]],
    groups: Callable[[Any], np.ndarray | None] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    rng: int = 0,
) -> SweepTable:
    """Merges and scores every finished run of the sweep.

    ``score(path)`` returns the run's :class:`~vlneval.evaluation.Result` (the caller
    knows the task, split and data). ``intervals(columns, rng=, n_resamples=, confidence=,
    groups=, two_stage=, rates=)`` gives each metric's interval
    (:func:`vlneval.diagnostics.column_intervals`). ``groups(result)``, when given, labels the
    path of each scored episode (None: no two share one); the intervals then resample whole
    paths (``two_stage=False``), else episodes.
    """
    table = SweepTable(split="", confidence=confidence)
    ckpts = list(dict.fromkeys(u.checkpoint for u in units))
    labels = dict(zip(ckpts, checkpoint_names(ckpts), strict=True))
    for (ckpt, seed), group in _groups(units).items():
        label = labels[ckpt]
        left = [u for u in group if unit_status(u) != "complete"]
        if left:
            table.incomplete.append((label, seed, len(left)))
            continue
        out = Path(group[0].out)
        merge([shard_paths(out, u.spec)[0] for u in group], out=out)
        ev = score(out)
        table.split = ev.split or table.split
        for k in ev.metrics:
            table.units.setdefault(k, shown_unit(k, (getattr(ev, "units", None) or {}).get(k)))
        columns = {
            k: np.asarray(ev.per_episode[_column(k)], dtype=np.float64)
            for k, v in ev.metrics.items()
            if v is not None and _column(k) in ev.per_episode
        }
        paths = None if groups is None else groups(ev)
        if paths is not None:
            table.resampling = "paths"
        cis = intervals(columns, rng=rng, n_resamples=n_resamples, confidence=confidence,
                        groups=paths, two_stage=paths is None,
                        rates=[k for k in columns if k in LABELS and LABELS[k].kind == "rate"])  # fmt: skip
        table.exact.update(k for k, ci in cis.items() if ci is not None and ci.method == EXACT)
        metrics = {
            k: {
                "value": v,
                "low": getattr(cis.get(k), "low", None),
                "high": getattr(cis.get(k), "high", None),
                "n": int(np.isfinite(columns[k]).sum()) if k in columns else ev.n_episodes,
                "n_units": getattr(cis.get(k), "n_units", None),
            }  # fmt: skip
            for k, v in ev.metrics.items()
            if v is not None
        }
        step = checkpoint_step(ckpt)
        table.runs.append({"checkpoint": ckpt, "label": label, "step": step, "seed": seed,
                           "n_episodes": ev.n_episodes, "metrics": metrics})  # fmt: skip
    for ckpt, label in labels.items():
        runs = [r for r in table.runs if r["checkpoint"] == ckpt]
        if not runs:
            continue
        names = [k for k in runs[0]["metrics"] if all(k in r["metrics"] for r in runs)]
        agg = {}
        for k in names:
            s = aggregate_scores([r["metrics"][k]["value"] for r in runs], metric=k)
            agg[k] = {"mean": s.mean, "std": s.std}
        table.summary.append({"label": label, "step": runs[0]["step"],
                              "seeds": [r["seed"] for r in runs], "metrics": agg})  # fmt: skip
    rank = {k: n for n, k in enumerate(natural_order(list(labels)))}
    place = {label: rank[n] for n, label in enumerate(labels.values())}
    table.runs.sort(key=lambda r: place[r["label"]])  # stable: seeds stay in plan order
    table.summary.sort(key=lambda s: place[s["label"]])
    return table


def selected_checkpoint(table: SweepTable, metric: str) -> dict[str, Any] | None:
    """The summary row of the checkpoint with the best mean of ``metric`` over seeds (by the
    metric's direction; the first in order on a tie); None for a metric with no better
    direction (TL) or no mean.

    Example:
        >>> rows = [{"label": f"c{k}", "metrics": {"NE": {"mean": ne}}} for k, ne in
        ...         enumerate([4.5, 2.5, 2.5])]
        >>> selected_checkpoint(SweepTable("val", summary=rows), "NE")["label"]
        'c1'
    """
    info = LABELS.get(metric)
    sign = {"higher": -1.0, "lower": 1.0}.get(info.direction if info else "higher")
    rows = [s for s in table.summary if s["metrics"].get(metric, {}).get("mean") is not None]
    if sign is None or not rows:
        return None
    return min(rows, key=lambda s: sign * s["metrics"][metric]["mean"])


def selection(table: SweepTable, metric: str) -> dict[str, str] | None:
    """``{checkpoint, metric, split}``: the checkpoint the sweep selects by ``metric``
    (:func:`selected_checkpoint`) on the split it scored, which that makes a model-selection
    split; None for one checkpoint (nothing to select from) or no selected checkpoint.

    Example:
        >>> rows = [{"label": f"c{k}", "metrics": {"SR": {"mean": sr}}} for k, sr in
        ...         enumerate([0.25, 0.5])]
        >>> selection(SweepTable("val_unseen", summary=rows), "SR")
        {'checkpoint': 'c1', 'metric': 'SR', 'split': 'val_unseen'}
    """
    chosen = selected_checkpoint(table, metric) if len(table.summary) > 1 else None
    if chosen is None:
        return None
    return {"checkpoint": chosen["label"], "metric": metric, "split": table.split}


def selection_note(chosen: dict[str, str]) -> str:
    """What selecting a checkpoint on a split means for that split's numbers (protocol.md).

    Example:
        >>> selection_note({"checkpoint": "c1", "metric": "SR", "split": "val"})
        'c1 selected on val (best mean SR over seeds): val is now a model-selection split, so its numbers are no longer held out; only an untouched split tests generalisation.'
    """
    split = chosen["split"]
    return (
        f"{chosen['checkpoint']} selected on {split} (best mean {chosen['metric']} over seeds): "
        f"{split} is now a model-selection split, so its numbers are no longer held out; only an "
        "untouched split tests generalisation."
    )


def _num(label: str, x: float | None, unit: str) -> str:
    """A value as the score tables show it (:func:`~vlneval.metrics.info.format_value`); empty
    when there is none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return format_value(label, x, unit)


def to_rows(table: SweepTable) -> list[dict[str, Any]]:
    """Long-form rows (one per checkpoint, seed and metric; seed ``mean`` for the summary),
    values as the summary JSON stores them; ``unit`` says which (``fraction`` for rates);
    ``n``: a run's episodes behind the metric's value and interval (its episodes without
    NaN), the seeds of a mean; ``n_units``: the paths (or episodes) a run's interval resampled,
    empty for a mean; ``resampling``: what a run's interval resampled; ``split``: the
    split scored; ``selected_by``: on the selected checkpoint's rows, the metric that selected
    it on that split (:attr:`SweepTable.selection`)."""
    rows = []
    for r in table.runs:
        for k, m in r["metrics"].items():
            rows.append({"checkpoint": r["label"], "step": r["step"], "seed": r["seed"],
                         "metric": k, "value": m["value"], "ci_low": m["low"],
                         "ci_high": m["high"], "std": None, "n": m["n"],
                         "n_units": m.get("n_units"),
                         "unit": _stored_unit(table, k), "resampling": table.resampling})  # fmt: skip
    for s in table.summary:
        for k, m in s["metrics"].items():
            rows.append({"checkpoint": s["label"], "step": s["step"], "seed": "mean",
                         "metric": k, "value": m["mean"], "ci_low": None, "ci_high": None,
                         "std": m["std"], "n": len(s["seeds"]), "n_units": None,
                         "unit": _stored_unit(table, k), "resampling": None})  # fmt: skip
    chosen = table.selection or {}
    for row in rows:
        row["split"] = table.split
        row["selected_by"] = (
            chosen["metric"] if row["checkpoint"] == chosen.get("checkpoint") else None
        )
    return rows


def _stored_unit(table: SweepTable, label: str) -> str:
    shown = table.units.get(label, "")
    return "fraction" if shown == "%" else shown


def to_markdown(table: SweepTable) -> str:
    """Two markdown tables: mean ± std over seeds per checkpoint, then every run with its
    bootstrap interval, then the unit the intervals resampled; values as the score tables
    show them (``SR (%)``: percentages, two decimals)."""
    if not table.summary:
        return "no finished runs\n"
    names = list(table.summary[0]["metrics"])
    units = {k: table.units.get(k, "") for k in names}
    header = " | ".join(column_name(k, units[k]) for k in names)
    lines = ["| checkpoint | seeds | " + header + " |", "|---|---|" + "---|" * len(names)]
    for s in table.summary:
        cells = []
        for k in names:
            m, u = s["metrics"][k], units[k]
            cells.append(
                _num(k, m["mean"], u) + ("" if m["std"] is None else f" ± {_num(k, m['std'], u)}")
            )
        lines.append(f"| {s['label']} | {len(s['seeds'])} | " + " | ".join(cells) + " |")
    lines += ["", "| checkpoint | seed | " + header + " |", "|---|---|" + "---|" * len(names)]
    for r in table.runs:
        cells = []
        for k in names:
            m, u = r["metrics"].get(k), units[k]
            ci = (
                ""
                if m is None or m["low"] is None
                else f" [{_num(k, m['low'], u)}, {_num(k, m['high'], u)}]"
            )
            cells.append("" if m is None else _num(k, m["value"], u) + ci)
        lines.append(f"| {r['label']} | {r['seed']} | " + " | ".join(cells) + " |")
    unit = "path" if table.resampling == "paths" else "episode"
    lines += ["", f"Intervals: {table.confidence:.0%} percentile bootstrap, by {unit}."]
    if table.exact:
        lines[-1] += (
            f" {', '.join(k for k in names if k in table.exact)} at 0 or 100 % (the same outcome "
            f"in every episode, where a bootstrap has zero width): the Clopper-Pearson (exact "
            f"binomial) interval over the {unit}s."
        )
    if table.selection:
        lines += ["", "Checkpoint selection: " + selection_note(table.selection)]
    return "\n".join(lines) + "\n"


def write_tensorboard(table: SweepTable, logdir: str | Path) -> int:
    """Writes each checkpoint's mean over seeds as ``eval_{split}_{metric}`` at its step (the
    tags VLN-CE's trainers log); the number of scalars written. A checkpoint without a step
    (no number in its name) is left out: :func:`unstepped` names them."""
    try:
        from torch.utils.tensorboard import SummaryWriter  # deferred: torch
    except ImportError:
        try:
            from tensorboardX import SummaryWriter  # type: ignore[no-redef]
        except ImportError:
            raise VLNEvalError(
                "--tensorboard needs a TensorBoard writer: pip install tensorboard (with torch) "
                "or tensorboardX; the CSV and markdown tables need neither"
            ) from None
    writer = SummaryWriter(log_dir=str(logdir))
    n = 0
    try:
        for s in table.summary:
            if s["step"] is None:
                continue
            for k, m in s["metrics"].items():
                writer.add_scalar(
                    f"eval_{table.split}_{VLNCE_TAGS.get(k, k)}", m["mean"], s["step"]
                )
                n += 1
    finally:
        writer.close()
    return n


def unstepped(table: SweepTable) -> list[str]:
    """The checkpoints without a step (no number in their name), which TensorBoard leaves out.

    Example:
        >>> unstepped(SweepTable("val", summary=[{"label": "latest.pth", "step": None},
        ...                                      {"label": "ckpt.3.pth", "step": 3}]))
        ['latest.pth']
    """
    return [s["label"] for s in table.summary if s["step"] is None]


def _column(label: str) -> str:
    """The per-episode column of a summary label (the metric table's, else the label)."""
    return LABELS[label].column if label in LABELS else label
