"""The sweep report shows values as ``vlneval score`` does (``SR (%)``: percentages, two
decimals; lengths in metres), and its CSV says the unit of the stored value."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from vlneval.diagnostics import column_intervals
from vlneval.diagnostics.intervals import clopper_pearson
from vlneval.distributed.sweep_report import SweepTable, selection, to_markdown, to_rows


def _table() -> SweepTable:
    run = {"checkpoint": "c.pth", "label": "c.pth", "step": 10, "seed": 0, "n_episodes": 36,
           "metrics": {"NE": {"value": 9.5312, "low": 8.25, "high": 10.75, "n": 35},
                       "SR": {"value": 0.1633, "low": 0.1, "high": 0.25, "n": 36}}}  # fmt: skip
    summary = {"label": "c.pth", "step": 10, "seeds": [0, 1],
               "metrics": {"NE": {"mean": 9.5312, "std": 0.4}, "SR": {"mean": 0.1633, "std": 0.0093}}}  # fmt: skip
    return SweepTable("val", [run], [summary], [], {"NE": "m", "SR": "%"})


def test_markdown_shows_rates_as_percent_with_units_in_the_header() -> None:
    assert to_markdown(_table()).splitlines() == [
        "| checkpoint | seeds | NE (m) | SR (%) |",
        "|---|---|---|---|",
        "| c.pth | 2 | 9.53 ± 0.40 | 16.33 ± 0.93 |",
        "",
        "| checkpoint | seed | NE (m) | SR (%) |",
        "|---|---|---|---|",
        "| c.pth | 0 | 9.53 [8.25, 10.75] | 16.33 [10.00, 25.00] |",
        "",
        "Intervals: 95% percentile bootstrap, by episode.",
    ]


def test_csv_rows_keep_the_stored_values_and_name_their_unit() -> None:
    rows = to_rows(_table())
    assert [(r["metric"], r["seed"], r["value"], r["unit"]) for r in rows] == [
        ("NE", 0, 9.5312, "m"),
        ("SR", 0, 0.1633, "fraction"),
        ("NE", "mean", 9.5312, "m"),
        ("SR", "mean", 0.1633, "fraction"),
    ]


def test_a_selection_is_made_among_checkpoints_by_a_metric_with_a_direction() -> None:
    """One checkpoint: nothing selected (no note, no selected_by); TL has no better direction;
    two: the best mean, recorded with its metric and split in the rows and the markdown."""
    one = _table()
    assert selection(one, "SR") is None
    assert {r["selected_by"] for r in to_rows(one)} == {None}
    two = _table()
    two.summary.append({"label": "d.pth", "step": 20, "seeds": [0, 1],
                        "metrics": {"NE": {"mean": 7.25, "std": 0.5}, "SR": {"mean": 0.125, "std": 0.0}}})  # fmt: skip
    assert selection(two, "TL") is None
    two.selection = selection(two, "NE")
    assert two.selection == {"checkpoint": "d.pth", "metric": "NE", "split": "val"}
    assert [(r["checkpoint"], r["seed"], r["split"], r["selected_by"]) for r in to_rows(two)] == [
        ("c.pth", 0, "val", None), ("c.pth", 0, "val", None), ("c.pth", "mean", "val", None),
        ("c.pth", "mean", "val", None), ("d.pth", "mean", "val", "NE"), ("d.pth", "mean", "val", "NE"),
    ]  # fmt: skip
    assert to_markdown(two).splitlines()[-2:] == [
        "",
        "Checkpoint selection: d.pth selected on val (best mean NE over seeds): val is now a "
        "model-selection split, so its numbers are no longer held out; only an untouched split "
        "tests generalisation.",
    ]


def _sweep(
    monkeypatch: pytest.MonkeyPatch,
    per_episode: dict[str, list[float]],
    checkpoints: list[str],
    paths: list[int] | None = None,
) -> SweepTable:
    """``sweep_table`` over one finished shard per checkpoint, each scored as ``per_episode``
    (label -> values) says; ``paths``: the path of each episode (resampled whole)."""
    import numpy as np

    from vlneval.distributed import sweep_report
    from vlneval.distributed.sweep import plan_units

    monkeypatch.setattr(sweep_report, "unit_status", lambda unit: "complete")
    monkeypatch.setattr(sweep_report, "merge", lambda paths, out: None)
    units = plan_units(["run", "--task", "demo", "--agent", "random"], checkpoints=checkpoints,
                       seeds=[0], shards=1, runs_dir="runs")  # fmt: skip

    def score(path: object) -> SimpleNamespace:
        cols = {sweep_report.LABELS[k].column: np.asarray(v) for k, v in per_episode.items()}
        means = {k: float(np.nanmean(v)) for k, v in per_episode.items()}
        return SimpleNamespace(split="val", metrics=means, per_episode=cols, n_episodes=4)

    groups = None if paths is None else (lambda result: np.asarray(paths))
    return sweep_report.sweep_table(
        units, score, intervals=column_intervals, n_resamples=200, groups=groups
    )


def test_each_metric_is_bootstrapped_on_its_own_episodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """An episode without NE (NaN) leaves NE's interval to the other three episodes, and
    still counts in SR's: each interval is on the episodes of its value, and is exactly the one
    ``vlneval report`` computes on the same table (:func:`column_intervals`, one seed)."""
    sr, ne = [1.0, 0.0, 1.0, 1.0], [1.5, float("nan"), 3.0, 6.0]
    (run,) = _sweep(monkeypatch, {"SR": sr, "NE": ne}, ["ckpt.7.pth"]).runs
    report = column_intervals({"SR": sr, "NE": ne}, rng=0, n_resamples=200, rates=["SR"])
    assert run["metrics"] == {
        "SR": {
            "value": 0.75,
            "low": report["SR"].low,
            "high": report["SR"].high,
            "n": 4,
            "n_units": 4,
        },
        "NE": {
            "value": 3.5,
            "low": report["NE"].low,
            "high": report["NE"].high,
            "n": 3,
            "n_units": 3,
        },
    }
    assert report["SR"].low < 0.75 < report["SR"].high == 1.0  # not SR of episodes 0, 2, 3
    assert report["NE"].low >= 1.5 and report["NE"].high <= 6.0 and report["NE"].n == 3


def test_a_rate_at_100_percent_gets_the_clopper_pearson_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SR 1 in all four episodes: not a bootstrap's zero width but [(0.025)^(1/4), 1] over the
    episodes, [(0.025)^(1/2), 1] over two paths; the markdown says so."""
    per_episode = {"SR": [1.0] * 4, "NE": [0.5, 1.0, 1.5, 2.0]}
    (run,) = _sweep(monkeypatch, per_episode, ["ckpt.7.pth"]).runs
    low, high = clopper_pearson(4, 4, confidence=0.95)
    assert run["metrics"]["SR"] == {"value": 1.0, "low": low, "high": high, "n": 4, "n_units": 4}
    assert (round(low, 4), high) == (0.3976, 1.0)
    table = _sweep(monkeypatch, per_episode, ["ckpt.7.pth"], paths=[0, 0, 1, 1])
    low, high = clopper_pearson(2, 2, confidence=0.95)
    assert table.runs[0]["metrics"]["SR"] == {
        "value": 1.0, "low": low, "high": high, "n": 4, "n_units": 2,
    }  # fmt: skip
    assert (round(low, 4), high) == (0.1581, 1.0)
    assert table.exact == {"SR"}
    assert to_markdown(table).splitlines()[-1] == (
        "Intervals: 95% percentile bootstrap, by path. SR at 0 or 100 % (the same outcome in "
        "every episode, where a bootstrap has zero width): the Clopper-Pearson (exact binomial) "
        "interval over the paths."
    )


def test_checkpoints_are_listed_by_the_number_in_their_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``ckpt_20`` before ``ckpt_100`` (not as text); a name without a number keeps its place
    and has no step (not its place in the list)."""
    ckpts = ["c/ckpt_100.pth", "c/best.pth", "c/ckpt_20.pth", "c/ckpt_3.pth"]
    table = _sweep(monkeypatch, {"SR": [1.0, 0.0, 1.0, 1.0]}, ckpts)
    order = ["ckpt_3.pth", "best.pth", "ckpt_20.pth", "ckpt_100.pth"]
    assert [r["label"] for r in table.runs] == order
    assert [(s["label"], s["step"]) for s in table.summary] == [
        ("ckpt_3.pth", 3), ("best.pth", None), ("ckpt_20.pth", 20), ("ckpt_100.pth", 100),
    ]  # fmt: skip
    assert [r["checkpoint"] for r in to_rows(table)] == order * 2  # the runs, then the means


def test_whole_paths_are_resampled_and_each_metric_counts_its_episodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two paths of two episodes each: a resample draws two whole paths, so SR's mean is 0.5
    (path 0 twice), 0.75 or 1.0 (path 1 twice); NE without episode 1 has path sums 1.5 (one
    episode) and 9.0 (two): 1.5, 10.5 / 3 = 3.5 or 4.5. The CSV's n counts each metric's own
    episodes, n_units the two paths its interval rests on, and the outputs name the unit."""
    sr, ne = [1.0, 0.0, 1.0, 1.0], [1.5, float("nan"), 3.0, 6.0]
    table = _sweep(monkeypatch, {"SR": sr, "NE": ne}, ["ckpt.7.pth"], paths=[0, 0, 1, 1])
    assert table.runs[0]["metrics"] == {
        "SR": {"value": 0.75, "low": 0.5, "high": 1.0, "n": 4, "n_units": 2},
        "NE": {"value": 3.5, "low": 1.5, "high": 4.5, "n": 3, "n_units": 2},
    }
    rows = [(r["metric"], r["seed"], r["n"], r["n_units"], r["resampling"])
            for r in to_rows(table)]  # fmt: skip
    assert rows == [
        ("SR", 0, 4, 2, "paths"),
        ("NE", 0, 3, 2, "paths"),
        ("SR", "mean", 1, None, None),
        ("NE", "mean", 1, None, None),
    ]
    assert to_markdown(table).splitlines()[-2:] == [
        "",
        "Intervals: 95% percentile bootstrap, by path.",
    ]


def test_one_episode_per_path_gives_the_episode_intervals_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    per_episode = {"SR": [1.0, 0.0, 1.0, 1.0], "NE": [1.5, float("nan"), 3.0, 6.0]}
    by_path = _sweep(monkeypatch, per_episode, ["ckpt.7.pth"], paths=[3, 1, 0, 2])
    by_episode = _sweep(monkeypatch, per_episode, ["ckpt.7.pth"])
    assert by_path.runs[0]["metrics"] == by_episode.runs[0]["metrics"]
    assert by_path.resampling == "paths" and by_episode.resampling == "episodes"
    assert by_episode.runs[0]["metrics"]["SR"]["low"] < 0.5  # the episode unit is narrower


@pytest.mark.parametrize("folder", ["c", "r2r", "seq2seq_r2r"])
def test_only_the_file_name_numbers_a_checkpoint(folder: str) -> None:
    """The digits of a folder (``r2r/``) do not number ``latest.pth``: it keeps its place."""
    from vlneval.distributed.sweep import natural_order

    names = [f"{folder}/ckpt_100.pth", f"{folder}/latest.pth", f"{folder}/ckpt_20.pth"]
    assert natural_order(names) == [2, 1, 0]  # ckpt_20, latest, ckpt_100


def test_checkpoints_of_several_folders_stay_by_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folder by folder, in the order the folders first come; natural order within each."""
    ckpts = ["run_b/ckpt_20.pth", "run_a2/best.pth", "run_b/latest.pth", "run_a2/ckpt_3.pth",
             "run_b/ckpt_3.pth"]  # fmt: skip
    table = _sweep(monkeypatch, {"SR": [1.0, 0.0, 1.0, 1.0]}, ckpts)
    assert [r["checkpoint"] for r in table.runs] == [
        "run_b/ckpt_3.pth", "run_b/latest.pth", "run_b/ckpt_20.pth", "run_a2/best.pth",
        "run_a2/ckpt_3.pth",
    ]  # fmt: skip


def test_same_named_checkpoints_are_named_by_their_folders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``rb/ckpt.5.pth`` and ``ra/ckpt.5.pth`` are not ``ckpt.5.pth`` and ``ckpt.5.pth-2``: each
    is named by the folder that tells it apart, as ``compare`` names same-named files, in the
    tables and the selection note; the plan's run folders stay as they were."""
    from vlneval.distributed.sweep_report import selection_note

    table = _sweep(monkeypatch, {"SR": [1.0, 0.0, 1.0, 1.0]}, ["rb/ckpt.5.pth", "ra/ckpt.5.pth"])
    assert [(r["checkpoint"], r["label"]) for r in table.runs] == [
        ("rb/ckpt.5.pth", "rb/ckpt.5.pth"), ("ra/ckpt.5.pth", "ra/ckpt.5.pth"),
    ]  # fmt: skip
    table.selection = selection(table, "SR")  # a tie: the first in order
    assert selection_note(table.selection).startswith("rb/ckpt.5.pth selected on val (best")
    assert [r["checkpoint"] for r in to_rows(table) if r["seed"] == "mean"] == [
        "rb/ckpt.5.pth", "ra/ckpt.5.pth",
    ]  # fmt: skip
    assert "| ra/ckpt.5.pth | 1 | 75.00 |" in to_markdown(table).splitlines()
