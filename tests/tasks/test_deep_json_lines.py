"""A JSON line nested too deeply to decode is one clear problem naming the file and the line,
in every reader that decodes JSON lines a line at a time (Touchdown, Touchdown SDR, RxR's
episodes, VLN-CE's ``rxr-jsonl`` form), not a RecursionError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tasks.touchdown.fixture import RUNS, SDR, make_root
from tests.tasks.vlnce.helpers import write_split
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.tasks.r2r.rxr import load_rxr
from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions

DEEP = "[" * 100_000 + "]" * 100_000  # far past any recursion limit
DEEP_RECORD = '{"route_id": 2, "trajectory": ' + "[" * 1_000 + "]" * 1_000 + "}"


def _lines(path: Path, records: list[object], deep: str, at: int) -> Path:
    lines = [json.dumps(r) for r in records]
    lines.insert(at, deep)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("deep", "at"), [(DEEP_RECORD, 1), (DEEP_RECORD, 0), (DEEP, 2)])
def test_touchdown_names_the_line(tmp_path: Path, deep: str, at: int) -> None:
    root = make_root(tmp_path / "root")
    runs = [{"route_id": k, "trajectory": v} for k, v in RUNS.items()]
    path = _lines(tmp_path / "p.jsonl", runs, deep, at)
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown", "dev", path, root=root)
    assert str(exc.value) == f"error: {path}: line {at + 1}: JSON nested too deeply"


def test_touchdown_sdr_names_the_line(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    path = _lines(tmp_path / "p.jsonl", list(SDR), DEEP, 1)
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown-sdr", "dev", path, root=root)
    assert str(exc.value) == f"error: {path}: line 2: JSON nested too deeply"


@pytest.mark.parametrize("at", [0, 1])
def test_touchdown_sdr_reads_nan_in_json_lines_and_names_the_field(tmp_path: Path, at: int) -> None:
    """Python's json writes NaN: a JSON line holding one (the first line too) is read, and
    the record check names it, as in a JSON list."""
    root = make_root(tmp_path / "root")
    records = [dict(r) for r in SDR]
    records[at]["x"] = float("nan")
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("touchdown-sdr", "dev", path, root=root)
    r = SDR[at]
    assert str(exc.value) == (
        f'error: {path}: SDR "{r["route_id"]}_{r["pano"]}": x: x is nan (must be finite)'
    )


def test_vlnce_rxr_jsonl_names_the_line(tmp_path: Path) -> None:
    episodes, gt = write_split(tmp_path)
    eps = load_vlnce(episodes, gt_path=gt, task="r2r-ce", split="val")
    good = {"instruction_id": "i1", "path": [[0.0, 0.0, -float(k)] for k in range(5)]}
    path = _lines(tmp_path / "p.jsonl", [good], DEEP, 1)
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(path, eps)
    assert str(exc.value.problems[0]) == f"{path}: line 2: JSON nested too deeply"


def test_rxr_episodes_name_the_line(tmp_path: Path) -> None:
    row = {"instruction_id": 11, "path_id": 1, "scan": "sq", "path": ["S", "G"], "heading": 0.5,
           "instruction": "walk", "language": "en-US"}  # fmt: skip
    path = _lines(tmp_path / "rxr_val_unseen_guide.jsonl", [row], DEEP, 1)
    with pytest.raises(InvalidInputError) as exc:
        load_rxr(path, task="rxr", split="val_unseen")
    assert str(exc.value) == f"error: {path}: line 2: JSON nested too deeply"
