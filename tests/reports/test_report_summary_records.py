"""parse_predictions(skip_summaries=...): a file's own summary record, skipped only on request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reports.house import house_root, predictions
from vlneval.errors import InvalidInputError
from vlneval.tasks import get_task
from vlneval.tasks.common.predictions import parse_predictions
from vlneval.tasks.common.scoring import load_split
from vlneval.tasks.profiles import get_profile

SUMMARY = {"length": 13.2, "nav_error": 3.5, "success_rate": 0.67, "total_num_instr": 6}


@pytest.fixture()
def split(tmp_path: Path):  # type: ignore[no-untyped-def]
    root = house_root(tmp_path / "root")
    return load_split(get_task("r2r"), "val", get_profile("r2r"), root=root)


def _write(tmp_path: Path, records: list) -> Path:  # type: ignore[type-arg]
    p = tmp_path / "preds.json"
    p.write_text(json.dumps(records))
    return p


def test_summary_record_is_an_error_that_names_the_option(tmp_path: Path, split) -> None:  # type: ignore[no-untyped-def]
    episodes, store = split
    p = _write(tmp_path, [SUMMARY, *predictions()])
    with pytest.raises(InvalidInputError) as info:
        parse_predictions(p, episodes, store)
    assert str(info.value) == (
        f"error: {p}: record 0: missing field 'instr_id'; the record looks like a summary "
        "(fields length, nav_error, success_rate, total_num_instr); pass "
        "--skip-summary-records to skip it"
    )


def test_skipped_with_a_warning_when_asked(tmp_path: Path, split) -> None:  # type: ignore[no-untyped-def]
    episodes, store = split
    p = _write(tmp_path, [SUMMARY, *predictions()])
    preds = parse_predictions(p, episodes, store, skip_summaries=True)
    assert len(preds.episodes) == 6
    assert preds.warnings == [
        "1 record(s) without 'instr_id' that look like a summary were skipped "
        "(--skip-summary-records; record 0)"
    ]


def test_only_summary_like_records_are_skipped(tmp_path: Path, split) -> None:  # type: ignore[no-untyped-def]
    episodes, store = split
    # no id but a trajectory: a broken prediction, never a summary
    broken = {"trajectory": [["F0", 0.0, 0.0]]}
    nested = {"metrics": {"sr": 0.5}}  # not only scalar values
    p = _write(tmp_path, [broken, nested, *predictions()])
    with pytest.raises(InvalidInputError) as info:
        parse_predictions(p, episodes, store, skip_summaries=True)
    lines = str(info.value).splitlines()
    assert lines == [
        f"error: {p}: record 0: missing field 'instr_id'",
        f"error: {p}: record 1: missing field 'instr_id'",
    ]
    body = [{"instr_id": r["instr_id"], "pred_path": r["trajectory"]} for r in predictions()]
    with_key = _write(tmp_path, [{"pred_path": ["F0"]}, *body])
    with pytest.raises(InvalidInputError, match="record 0: missing field 'instr_id'$"):
        parse_predictions(
            with_key, episodes, store, skip_summaries=True, trajectory_key="pred_path"
        )
