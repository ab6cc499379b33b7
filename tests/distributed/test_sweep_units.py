"""The sweep report shows values as ``vlneval score`` does (``SR (%)``: percentages, two
decimals; lengths in metres), and its CSV says the unit of the stored value."""

from __future__ import annotations

from vlneval.distributed.sweep_report import SweepTable, to_markdown, to_rows


def _table() -> SweepTable:
    run = {"checkpoint": "c.pth", "label": "c.pth", "step": 10, "seed": 0, "n_episodes": 36,
           "metrics": {"NE": {"value": 9.5312, "low": 8.25, "high": 10.75},
                       "SR": {"value": 0.1633, "low": 0.1, "high": 0.25}}}  # fmt: skip
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
    ]


def test_csv_rows_keep_the_stored_values_and_name_their_unit() -> None:
    rows = to_rows(_table())
    assert [(r["metric"], r["seed"], r["value"], r["unit"]) for r in rows] == [
        ("NE", 0, 9.5312, "m"),
        ("SR", 0, 0.1633, "fraction"),
        ("NE", "mean", 9.5312, "m"),
        ("SR", "mean", 0.1633, "fraction"),
    ]
