"""A field that no record of a file has is one problem of the file, not one per record, in
the same form for every task: the field, what it is, the fields the records have."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import vlneval
from tests.tasks.soon.soon_fixtures import dump, soon_preds, soon_root
from tests.tasks.vlnce.helpers import write_split
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError
from vlneval.tasks.common.root import demo_root
from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions

REAL = "predictions/r2r/seq2seq_r2r_baseline_sadanand1120"
DEMO_ID = (
    "no record has the field 'instr_id' (an episode id of the split, e.g. \"100_0\"); the "
    "records have 'id'"
)


def _renamed(records: list[dict[str, Any]], old: str, new: str) -> list[dict[str, Any]]:
    return [{(new if k == old else k): v for k, v in rec.items()} for rec in records]


def _demo() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(
        (demo_root() / "demo" / "predictions_val.json").read_text()
    )
    return records


def _problems(records: Any, task: str = "demo", **kw: Any) -> list[str]:
    with pytest.raises(InvalidInputError) as exc:
        vlneval.evaluate(task, kw.pop("split", None), records, **kw)
    return [p.message for p in exc.value.problems]


@pytest.mark.parametrize("all_errors", [False, True])
def test_a_real_r2r_file_keyed_id_is_one_line(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], all_errors: bool
) -> None:
    raw = (data_root / REAL / "seq2seq_sample_imagenet_val_unseen_iter_20000.json.gz").read_bytes()
    records = json.loads(gzip.decompress(raw))
    assert len(records) == 2349
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(_renamed(records, "instr_id", "id")))
    argv = ["score", "--task", "r2r", "--split", "val_unseen", "--data-root", str(data_root)]
    argv += ["--predictions", str(path), *(["--all-errors"] if all_errors else [])]
    assert main(argv) == 2
    assert capsys.readouterr().err == (  # was one line per record: 2349 problems
        f"error: {path}: no record has the field 'instr_id' (an episode id of the split, e.g. "
        "\"4332_0\"); the records have 'id'\n"
    )


def test_records_without_the_id_nor_the_trajectory_are_two_problems_the_id_first() -> None:
    records = [{"id": r["instr_id"], "traj": r["trajectory"]} for r in _demo()]
    assert _problems(records) == [
        DEMO_ID,
        "no record has the field 'trajectory' or 'path' or 'pred_path' (the executed "
        "viewpoints); the records have 'id', 'traj' (to score the field 'traj', pass "
        "--trajectory-key traj)",
    ]


def test_the_id_candidates_are_named_else_the_first_fields() -> None:
    records = [{"episode": r["instr_id"], "id": 1, "trajectory": r["trajectory"]} for r in _demo()]
    assert _problems(records) == [DEMO_ID]
    records = [{"name": r["instr_id"], "trajectory": r["trajectory"]} for r in _demo()]
    assert _problems(records) == [DEMO_ID.replace("'id'", "'name', 'trajectory'")]


def test_some_records_without_the_id_are_each_named() -> None:
    records = _demo()
    records[:2] = _renamed(records[:2], "instr_id", "id")
    assert _problems(records, subset=True) == ["missing field 'instr_id'"] * 2


def test_soon_records_keyed_id_are_one_problem(tmp_path: Path) -> None:
    root = soon_root(tmp_path / "root")
    path = dump(tmp_path / "p.json", _renamed(soon_preds(), "instr_id", "id"))
    assert _problems(path, "soon", split="val", root=root) == [  # was one per record
        "no record has the field 'instr_id' (an instruction id of the split, e.g. \"1\"); the "
        "records have 'id'"
    ]


def test_soon_records_without_a_trajectory_are_one_problem(tmp_path: Path) -> None:
    root = soon_root(tmp_path / "root")
    path = dump(tmp_path / "p.json", _renamed(soon_preds(), "trajectory", "traj"))
    assert _problems(path, "soon", split="val", root=root) == [  # was one per record
        "no record has the field 'trajectory' (one entry per start path); the records have "
        "'instr_id', 'traj'"
    ]
    one = soon_preds()
    del one[0]["trajectory"]
    path = dump(tmp_path / "p.json", one)
    assert _problems(path, "soon", split="val", root=root) == ["missing field 'trajectory'"]


def test_vlnce_json_lines_keyed_id_are_one_problem(tmp_path: Path) -> None:
    """The r2r-ce form is keyed by episode id (no id field); rxr-jsonl records without their
    id field are one problem already."""
    episodes, gt = write_split(tmp_path)
    eps = load_vlnce(episodes, gt_path=gt, task="r2r-ce", split="val")
    lines = [{"id": f"i{k}", "path": [[0.0, 0.0, 0.0], [0.0, 0.0, -1.0]]} for k in (1, 2)]
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(map(json.dumps, lines)))
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(path, eps, form="rxr-jsonl")
    assert [p.message for p in exc.value.problems] == [
        "a list of 2 records with fields id, path, not a VLN-CE form: r2r-ce expects one JSON "
        "object {episode_id: [{'position': [x, y, z], 'heading': h, 'stop': bool}, ...]}, start "
        "state first (or rxr-jsonl: one {'instruction_id': ..., 'path': [[x, y, z], ...]} per "
        "line)"
    ]


def test_vlnce_json_lines_with_nan_name_the_field(tmp_path: Path) -> None:
    """Python's json writes NaN: an rxr-jsonl line holding one is read, and the path check
    names the point, as in the JSON form; a line that is not JSON keeps its message."""
    episodes, gt = write_split(tmp_path)
    eps = load_vlnce(episodes, gt_path=gt, task="r2r-ce", split="val")
    path = tmp_path / "p.jsonl"
    good = '{"instruction_id": "i1", "path": [[0.0, 0.0, 0.0]]}\n'
    path.write_text(good + '{"instruction_id": "i2", "path": [[0.0, NaN, 0.0]]}\n')
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(path, eps, form="rxr-jsonl")
    assert [(p.episode, p.field, p.message) for p in exc.value.problems] == [
        (
            'instruction_id "i2"',
            "path[0]",
            "position [0.0, nan, 0.0] has a NaN coordinate: [x, y, z] must be finite",
        )
    ]
    path.write_text(good + "{oops\n")
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(path, eps, form="rxr-jsonl")
    assert [(p.field, p.message) for p in exc.value.problems] == [
        ("line 2", "not valid JSON (JSON is malformed: object keys must be strings (byte 1))")
    ]
