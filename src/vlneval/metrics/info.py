"""The one table of metric metadata, keyed by the label a summary uses.

Every label that any task's summary can contain (``spec/metrics.md``, ``spec/outputs.md``) has
exactly one :class:`~vlneval.metrics.MetricInfo` here: its per-episode column, unit, which way
is better, and a one-line description. Terminal tables, comparisons, HTML reports and
leaderboards read it through :func:`metric_info`; nothing else in the tree decides whether a
metric is a rate or whether lower is better. Metric modules name their entries
(``goal.NAVIGATION_ERROR is LABELS["NE"]``).

A task whose summary gains a label adds one row below (a test scores every task and checks that
each label it reports is here).

Example:
    >>> from vlneval.metrics import metric_info
    >>> spd = metric_info("SPD")
    >>> spd.column, spd.unit, spd.direction_text
    ('spd', 'hops', 'lower is better')
    >>> metric_info("nDWT")
    Traceback (most recent call last):
    ...
    vlneval.errors.UnknownNameError: unknown metric label 'nDWT'; did you mean 'nDTW'? ...
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from vlneval.errors import UnknownNameError
from vlneval.metrics._info import MetricInfo

__all__ = [
    "LABELS",
    "metric_info",
    "variant",
    "shown_unit",
    "column_name",
    "format_value",
]

_TABLE = (
    # goal (R2R family, VLN-CE, CVDN, HANNA, SOON)
    MetricInfo("NE", "navigation_error", "nav_error", "lower", "distance",
               "distance from the final position to the nearest goal"),
    MetricInfo("OE", "oracle_error", "oracle_error", "lower", "distance",
               "distance from the closest visited position to a goal"),
    MetricInfo("SR", "success", "success", "higher", "rate",
               "1 when the stop meets the task's success rule (NE within the threshold)"),
    MetricInfo("OSR", "oracle_success", "oracle_success", "higher", "rate",
               "1 when some visited position meets the success rule (oracle success)"),
    # path
    MetricInfo("TL", "path_length", "path_length", "neutral", "distance",
               "length of the executed path (trajectory length)"),
    MetricInfo("SPL", "spl", "spl", "higher", "ratio",
               "success weighted by reference length over path length"),
    # fidelity
    MetricInfo("DTW", "dtw", "dtw", "lower", "distance",
               "dynamic time warping distance between reference and trajectory"),
    MetricInfo("nDTW", "ndtw", "ndtw", "higher", "ratio",
               "normalised dynamic time warping, exp(-DTW / (m·δ))"),
    MetricInfo("sDTW", "sdtw", "sdtw", "higher", "ratio",
               "nDTW of successful episodes, 0 otherwise"),
    MetricInfo("CLS", "cls", "cls", "higher", "ratio",
               "coverage of the reference weighted by length score"),
    # progress (CVDN/NDH, SOON) and help (HANNA)
    MetricInfo("GP", "goal_progress", "goal_progress", "higher", "distance",
               "reduction of the distance to the goal region, start to end", signed=True),
    MetricInfo("OPSR", "oracle_plan_success", "oracle_plan_success", "higher", "rate",
               "1 when some visited position is within 3 m of the planner's goal (NDH)"),
    MetricInfo("help_requests", "help_requests", "help_requests", "neutral", "count",
               "number of help requests per episode (HANNA; a cost traded against success)"),
    # grounding (REVERIE, SOON)
    MetricInfo("RGS", "remote_grounding_success", "grounding_success", "higher", "rate",
               "the predicted object id equals the target object id (not gated by navigation)"),
    MetricInfo("RGSPL", "grounding_spl", "grounding_spl", "higher", "ratio",
               "remote grounding success weighted by reference length over path length"),
    MetricInfo("det_SR", "localisation_success", "det_success", "higher", "rate",
               "the predicted direction lies inside the target box at the final viewpoint (SOON)"),
    MetricInfo("det_SPL", "localisation_spl", "det_spl", "higher", "ratio",
               "localisation success weighted by reference length over path length (SOON)"),
    MetricInfo("J", "joint_success", "joint_success", "higher", "rate",
               "joint success S_nav · S_loc: navigation and object both succeed (RGS, det)"),
    # street (Touchdown)
    MetricInfo("TC", "task_completion", "task_completion", "higher", "rate",
               "1 when the final panorama is the goal or next to it"),
    MetricInfo("SPD", "shortest_path_distance", "spd", "lower", "hops",
               "hops from the final panorama to the goal"),
    MetricInfo("SED", "sed", "sed", "higher", "ratio",
               "success weighted by the edit distance between executed and reference panoramas"),
    MetricInfo("SDR@40", "sdr_accuracy", "sdr_acc40", "higher", "rate",
               "1 when the predicted location is within 40 px of the true one"),
    MetricInfo("SDR@80", "sdr_accuracy", "sdr_acc80", "higher", "rate",
               "1 when the predicted location is within 80 px of the true one"),
    MetricInfo("SDR@120", "sdr_accuracy", "sdr_acc120", "higher", "rate",
               "1 when the predicted location is within 120 px of the true one"),
    MetricInfo("SDR_dist", "sdr_distance", "sdr_distance", "lower", "pixels",
               "pixels between the predicted and the true target location"),
)  # fmt: skip

#: Summary label -> metadata, every label any task reports (read-only).
LABELS: Mapping[str, MetricInfo] = MappingProxyType({info.label: info for info in _TABLE})
if len(LABELS) != len(_TABLE):  # a label registered twice is a bug in the table above
    raise RuntimeError("vlneval.metrics.info: a metric label is registered twice")


def metric_info(label: str) -> MetricInfo:
    """The metadata of summary label ``label``.

    Labels are case-sensitive (``SR`` and ``sDTW`` as the papers write them); a label that
    differs only in case is suggested.

    Raises:
        UnknownNameError: ``label`` is not registered; the message suggests the closest label.

    Example:
        >>> metric_info("SR").higher_is_better, metric_info("NE").shown_unit
        (True, 'm')
    """
    try:
        return LABELS[label]
    except KeyError:
        pass
    err = UnknownNameError("metric label", label, LABELS)
    same_letters = [k for k in LABELS if k.casefold() == label.casefold()]
    if same_letters and "did you mean" not in str(err):
        hint = f"{label!r}; did you mean {same_letters[0]!r}?"
        err.args = (str(err).replace(repr(label), hint, 1),)
    raise err


def variant(label: str, name: str, description: str) -> MetricInfo:
    """The entry of ``label`` as another function computes it (same label, unit, direction).

    ``point_path_length`` is VLN-CE's TL; ``visibility_success`` is REVERIE's SR.

    Example:
        >>> variant("TL", "point_path_length", "straight-line steps").column
        'path_length'
    """
    base = metric_info(label)
    return dataclasses.replace(base, name=name, description=description)


def shown_unit(label: str, unit: str | None = None) -> str:
    """The unit a value of ``label`` is shown in: ``unit`` when given (a summary's own
    ``units``), else the metric table's (``%``, ``m``, ``hops``, ``px``, ``count``); empty for
    a label the table does not know.

    Example:
        >>> shown_unit("SR"), shown_unit("SPD"), shown_unit("NE", "hops"), shown_unit("X")
        ('%', 'hops', 'hops', '')
    """
    if unit:
        return unit
    info = LABELS.get(label)
    return info.shown_unit if info is not None else ""


def column_name(label: str, unit: str | None = None) -> str:
    """``SR (%)``, ``SPD (hops)``: the label and its shown unit.

    Example:
        >>> column_name("SR"), column_name("X")
        ('SR (%)', 'X')
    """
    shown = shown_unit(label, unit)
    return f"{label} ({shown})" if shown else label


def format_value(
    label: str, value: float | None, unit: str | None = None, *, signed: bool = False
) -> str:
    """Rates as percentages with two decimals, other values as they are (``unit`` "%" forces a
    rate); a signed rate is a difference in percentage points.

    Example:
        >>> format_value("SR", 0.5), format_value("NE", 3.14159), format_value("SPL", None)
        ('50.00', '3.14', 'n/a')
        >>> format_value("SPD", 1.5), format_value("SR", -0.012, signed=True)
        ('1.50', '-1.20')
        >>> format_value("TL", 1.7e308), format_value("TL", float("inf"))
        ('1.7e+308', 'inf')
    """
    if value is None:
        return "n/a"
    scaled, sign = (100.0 if shown_unit(label, unit) == "%" else 1.0) * value, "+" if signed else ""
    # past 1e15 two decimals are noise in a row of digits: three significant ones instead
    return f"{scaled:{sign}.2f}" if abs(scaled) < 1e15 else f"{scaled:{sign}.3g}"
