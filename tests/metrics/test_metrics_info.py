"""The one table of metric metadata: every entry complete, directions as the spec says, every
per-task column map and every module constant agreeing with it."""

from __future__ import annotations

import math

import pytest

import vlneval.metrics as M
from vlneval.errors import UnknownNameError
from vlneval.metrics import (
    LABELS,
    METRICS,
    MetricInfo,
    continuous,
    edit,
    fidelity,
    goal,
    grounding,
    metric_info,
    path,
    progress,
    street,
)

#: Which way is better, label by label, from spec/metrics.md (the "better" columns) and the
#: benchmarks' papers. Written out here, not derived, so that a wrong table entry fails.
LOWER = {"NE", "OE", "DTW", "SPD", "SDR_dist"}
NEUTRAL = {"TL", "help_requests"}
#: Labels whose values are fractions shown as percentages.
FRACTIONS = {
    "SR", "OSR", "SPL", "nDTW", "sDTW", "CLS", "OPSR", "RGS", "RGSPL", "det_SR", "det_SPL", "TC",
    "SED", "SDR@40", "SDR@80", "SDR@120", "J",
}  # fmt: skip
#: The labels of spec/outputs.md's summary and of every benchmark's profile.
SPEC_LABELS = {
    "TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW", "CLS", "GP", "OPSR", "RGS", "RGSPL", "TC",
    "SPD", "SED", "SDR@40", "SDR@80", "SDR@120", "SDR_dist", "det_SR", "det_SPL", "help_requests",
    "J",  # joint success (spec/metrics.md), REVERIE and SOON
}  # fmt: skip


@pytest.mark.parametrize("label", sorted(LABELS))
def test_every_entry_is_complete_and_declares_its_direction(label: str) -> None:
    info = LABELS[label]
    assert isinstance(info, MetricInfo) and info.label == label
    assert info.direction in ("higher", "lower", "neutral")
    expected = "lower" if label in LOWER else "neutral" if label in NEUTRAL else "higher"
    assert info.direction == expected, label
    assert info.higher_is_better == (expected == "higher")
    assert info.kind in ("rate", "ratio", "distance", "hops", "pixels", "count")
    assert info.is_rate == (label in FRACTIONS) and (info.unit == "fraction") == info.is_rate
    assert info.shown_unit == ("%" if info.is_rate else info.unit)
    assert info.column and info.column.isidentifier() and info.name.isidentifier()
    assert info.description and "\n" not in info.description and len(info.description) <= 90
    assert metric_info(label) is info


def test_spd_is_lower_and_sed_higher_is_better() -> None:
    """The bug of issue 11: Touchdown's SPD and SDR distance were ranked as higher-is-better."""
    assert metric_info("SPD").direction == "lower" and metric_info("SPD").improves(-1.0)
    assert metric_info("SDR_dist").direction == "lower" and not metric_info("SDR_dist").improves(5)
    assert metric_info("SED").direction == "higher" and metric_info("SED").improves(0.1)
    assert metric_info("TC").direction == "higher"


def test_improves_follows_the_direction() -> None:
    for info in LABELS.values():
        up, down = info.improves(1.0), info.improves(-1.0)
        if info.direction == "neutral":
            assert up is None and down is None
        else:
            assert up is (info.direction == "higher") and down is (info.direction == "lower")
        assert info.improves(0.0) is None and info.improves(math.nan) is None


def test_spec_labels_are_registered_and_labels_are_unique() -> None:
    assert set(LABELS) == SPEC_LABELS | {"OE", "DTW"}  # OE and DTW: per-episode only
    columns = [info.column for info in LABELS.values()]
    assert len(set(columns)) == len(columns)


def test_unknown_label_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError, match="unknown metric label 'sdtw'; did you mean 'sDTW'"):
        metric_info("sdtw")
    with pytest.raises(KeyError):  # UnknownNameError is a KeyError too
        metric_info("SDR@60")


def test_bad_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="direction 'up' is not one of higher, lower, neutral"):
        MetricInfo("X", "x", "x", "up", "rate", "d")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind 'percent'"):
        MetricInfo("X", "x", "x", "higher", "percent", "d")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needed"):
        MetricInfo("X", "x", "", "higher", "rate", "d")


def test_module_constants_are_the_table_entries() -> None:
    named = {
        goal.NAVIGATION_ERROR: "NE", goal.ORACLE_ERROR: "OE", goal.SUCCESS: "SR",
        goal.ORACLE_SUCCESS: "OSR", path.PATH_LENGTH: "TL", path.SPL: "SPL", fidelity.DTW: "DTW",
        fidelity.NDTW: "nDTW", fidelity.SDTW: "sDTW", fidelity.CLS: "CLS",
        progress.GOAL_PROGRESS: "GP", edit.SED: "SED", street.TASK_COMPLETION: "TC",
        street.SHORTEST_PATH_DISTANCE: "SPD", street.SDR_DISTANCE: "SDR_dist", grounding.RGS: "RGS",
        grounding.RGSPL: "RGSPL", grounding.DET_SR: "det_SR", grounding.DET_SPL: "det_SPL",
    }  # fmt: skip
    for info, label in named.items():
        assert info is LABELS[label], label
    assert {i.label for i in street.INFO} == {
        "TC",
        "SPD",
        "SDR_dist",
        "SDR@40",
        "SDR@80",
        "SDR@120",
    }
    assert all(i is LABELS[i.label] for i in street.INFO)


def test_variants_keep_label_column_unit_and_direction() -> None:
    """Functions that compute a summary label another way (VLN-CE's TL, REVERIE's SR)."""
    variants = [*continuous.INFO, grounding.VISIBLE]
    assert {i.name for i in variants} == {
        "point_path_length", "point_dtw", "point_ndtw", "visibility_success"
    }  # fmt: skip
    for info in variants:
        base = LABELS[info.label]
        assert (info.column, info.direction, info.kind) == (base.column, base.direction, base.kind)
        assert info.description != base.description
        assert callable(
            getattr(continuous if info.name.startswith("point") else grounding, info.name)
        )


def test_function_registry_is_the_label_table() -> None:
    for name, info in METRICS.items():
        assert LABELS[info.label] is info and info.name == name


def test_batch_columns_are_the_table_columns() -> None:
    for column, name in M.COLUMN_METRIC.items():
        assert METRICS[name].column == column


def test_per_task_column_maps_agree_with_the_table() -> None:
    """Scorers in tasks/<t>/score.py still hold their own label -> column maps; they must agree."""
    from vlneval.tasks.common.scoring import LABEL_TO_COLUMN
    from vlneval.tasks.cvdn import score as cvdn
    from vlneval.tasks.hanna import score as hanna
    from vlneval.tasks.reverie import score as reverie
    from vlneval.tasks.soon import score as soon
    from vlneval.tasks.touchdown import score as touchdown
    from vlneval.tasks.vlnce import score as vlnce

    maps = {
        "runner.LABEL_TO_COLUMN": LABEL_TO_COLUMN,
        "cvdn.COLUMNS": cvdn.COLUMNS,
        "reverie.REVERIE_COLUMNS": reverie.REVERIE_COLUMNS,
        "soon.SOON_COLUMNS": soon.SOON_COLUMNS,
        "touchdown.NAV_COLUMNS": touchdown.NAV_COLUMNS,
        "touchdown.SDR_COLUMNS": touchdown.SDR_COLUMNS,
        "vlnce.COLUMNS": vlnce.COLUMNS,
        "hanna.REQUESTS": {hanna.REQUESTS: hanna.REQUESTS},
    }
    for where, mapping in maps.items():
        for label, column in mapping.items():
            assert metric_info(label).column == column, (where, label)


def test_every_profile_reports_registered_labels() -> None:
    from vlneval.tasks import TASKS
    from vlneval.tasks.profiles import get_profile

    seen = set()
    for task in TASKS.values():
        for name in task.profiles:
            for label in get_profile(name).metrics:
                metric_info(label)  # raises, naming the label, when it is not registered
                seen.add(label)
    assert seen == SPEC_LABELS


def test_a_value_past_1e15_is_three_significant_digits_not_a_row_of_them() -> None:
    from vlneval.metrics.info import format_value

    assert format_value("TL", 1.7e308) == "1.7e+308"
    assert format_value("TL", 1e308 / 3 * 2) == "6.67e+307"
    assert format_value("SR", 1e14, signed=True) == "+1e+16"
    assert format_value("NE", 999_999_999_999_999.0) == "999999999999999.00"
