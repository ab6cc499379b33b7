"""Predictions in the other shape than the task reads (an object keyed by episode id where a
list of records is read, or the reverse for VLN-CE's r2r-ce form) are refused saying the shape
read and how to convert them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import square_root
from tests.tasks.vlnce.helpers import steps, write_split
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions

STEP = "{'position': [x, y, z], 'heading': h, 'stop': bool}"
TRAJECTORIES = (
    ' keyed by id: one list of records is read, [{"instr_id": "1_0", "trajectory": [...]}, ...] '
    '(in Python: [{"instr_id": k, "trajectory": v} for k, v in predictions.items()])'
)
RECORDS = (
    ' keyed by id: one list of records is read, [{"instr_id": "1_0", ...}, ...] (in Python: '
    '[{"instr_id": k, **v} for k, v in predictions.items()])'
)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"1_0": [["S", 0, 0]], "1_1": [["S", 0, 0]]}', TRAJECTORIES),
        ('{"1_0": {"trajectory": [["S", NaN, 0]]}}', RECORDS),  # read leniently, the same
        ('{"instr_id": "1_0", "trajectory": [["S", 0, 0]]}', ""),  # one record: no such advice
        ('{"1_0": 1}', ""),
    ],
)
def test_an_object_where_a_list_is_read(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"), subset=True)
    assert str(exc.value) == (
        f"error: {path}: expected a JSON list of predictions, got a JSON object{why}"
    )


def test_a_mapping_in_memory_where_a_list_is_read(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", {"1_0": [["S", 0, 0]]}, root=root, subset=True)
    assert str(exc.value) == (
        f"error: <records>: expected a path, bytes or a list of records, got dict{TRAJECTORIES}"
    )


@pytest.mark.parametrize("form", ["auto", "r2r-ce"])
@pytest.mark.parametrize("in_memory", [False, True])
def test_a_list_of_records_where_r2r_ce_is_keyed(
    tmp_path: Path, form: str, in_memory: bool
) -> None:
    ep_path, gt_path = write_split(tmp_path)
    episodes = load_vlnce(ep_path, gt_path=gt_path, task="r2r-ce", split="val")
    records = [{"episode_id": k, "trajectory": steps([[0.0, 0.0, 0.0]])} for k in (1, 2)]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(records))
    given: Any = records if in_memory else path
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(given, episodes, form=form)
    head = (
        "a list of 2 records with fields episode_id, trajectory, not a VLN-CE form: r2r-ce "
        f"expects one JSON object {{episode_id: [{STEP}, ...]}}, start state first (or "
        "rxr-jsonl: one {'instruction_id': ..., 'path': [[x, y, z], ...]} per line)"
        if form == "auto"
        else f"the r2r-ce form is one JSON object {{episode_id: [{STEP}, ...]}}, got a list of "
        "2 records"
    )
    fix = '; to key them by id in Python: {str(r["episode_id"]): r["trajectory"] for r in records}'
    assert str(exc.value) == f"error: {'<records>' if in_memory else path}: {head}{fix}"


@pytest.mark.parametrize(
    ("name", "id_field", "integer"),
    [
        ("ndh", "inst_idx", True),
        ("hanna", "instr_id", False),
        ("touchdown", "route_id", True),
        ("touchdown-sdr", "route_id", True),
    ],
)
@pytest.mark.parametrize("in_memory", [False, True])
def test_every_reader_of_records_gives_the_keyed_hint(
    tmp_path: Path, name: str, id_field: str, integer: bool, in_memory: bool
) -> None:
    from tests.tasks.test_registry_tasks import CASES

    split, kw, predictions = CASES[name](tmp_path)
    records = json.loads(predictions.read_text())
    keyed = {str(r[id_field]): {k: v for k, v in r.items() if k != id_field} for r in records}
    path = tmp_path / "keyed.json"
    path.write_text(json.dumps(keyed))
    first = next(iter(keyed)) if integer else json.dumps(next(iter(keyed)))
    why = (
        f' keyed by id: one list of records is read, [{{"{id_field}": {first}, ...}}, ...] (in '
        f'Python: [{{"{id_field}": {"int(k)" if integer else "k"}, **v}} for k, v in '
        "predictions.items()])"
    )
    with pytest.raises(InvalidInputError) as exc:
        evaluate(name, split, keyed if in_memory else path, subset=True, **kw)
    shape = (
        "<records>: expected a path, bytes or a list of records, got dict"
        if in_memory
        else f"{path}: expected a JSON list of predictions, got a JSON object"
    )
    assert str(exc.value) == f"error: {shape}{why}"
