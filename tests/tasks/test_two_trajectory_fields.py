"""A record holding two of the fields a trajectory is read from by default (``trajectory``,
``path``, ``pred_path``) is refused, naming both and the option that picks one: a record merged
with its episode holds the reference ``path``, and scoring the first field scored it (SR 100 %)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import square_root
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.io import array_chunks
from vlneval.tasks.common import prediction_structs as structs

REFERENCE, AGENT = ["S", "A", "B", "G"], ["S", "A"]
WHY = ("holds both 'path' and 'pred_path': which one is the prediction is not clear (name it "
       "with --trajectory-key, trajectory_key= in Python)")  # fmt: skip


def _merged(n: int = 2) -> list[dict[str, Any]]:
    return [{"instr_id": f"1_{k}", "path": REFERENCE, "pred_path": AGENT} for k in range(n)]


@pytest.mark.parametrize("as_file", [True, False])
def test_two_trajectory_fields_are_refused_naming_both(tmp_path: Path, as_file: bool) -> None:
    root = square_root(tmp_path / "root")
    given: Any = _merged()
    if as_file:
        given = tmp_path / "merged.json"
        given.write_text(json.dumps(_merged()))
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", given, root=root, subset=True)
    source = given if as_file else "<records>"
    assert [str(p) for p in exc.value.problems] == [
        f'{source}: each of the 2 records (first: instr_id "1_0") {WHY}'
    ]


def test_the_same_viewpoints_in_two_fields_are_read(tmp_path: Path) -> None:
    """NaviLLM writes each trajectory twice: triples in ``trajectory``, ids in ``pred_path``."""
    root = square_root(tmp_path / "root")
    records = [
        {"instr_id": f"1_{k}", "trajectory": [[v, 0, 0] for v in REFERENCE],
         "pred_path": REFERENCE} for k in range(3)
    ]  # fmt: skip
    result = evaluate("r2r", "val", records, root=root)
    assert result.metrics["SR"] == 1.0
    records[1]["pred_path"] = AGENT
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", records, root=root)
    assert [str(p) for p in exc.value.problems] == [
        '<records>: instr_id "1_1": ' + WHY.replace("'path'", "'trajectory'")
    ]


def test_the_trajectory_key_picks_one(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    result = evaluate("r2r", "val", _merged(3), root=root, trajectory_key="pred_path")
    assert result.metrics["SR"] == 0.0


def test_records_using_one_field_each_are_read(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    records = [{"instr_id": "1_0", "path": AGENT}, {"instr_id": "1_1", "pred_path": REFERENCE}]
    records += [{"instr_id": "1_2", "trajectory": REFERENCE}]
    assert evaluate("r2r", "val", records, root=root).metrics["SR"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("typed", [True, False])
def test_the_summary_names_every_field_read(tmp_path: Path, typed: bool) -> None:
    """Records using one field each: the summary lists the fields read, sorted, in both passes
    (a record holding the same viewpoints twice, once in steps the types do not take, sends the
    file to the explaining pass)."""
    root = square_root(tmp_path / "root")
    records: list[dict[str, Any]] = [
        {"instr_id": "1_0", "path": AGENT},
        {"instr_id": "1_1", "pred_path": REFERENCE},
        {"instr_id": "1_2", "trajectory": REFERENCE},
    ]
    if not typed:
        records[2]["pred_path"] = [[v, "?"] for v in REFERENCE]  # compared by viewpoint only
    result = evaluate("r2r", "val", records, root=root)
    assert result.to_dict()["trajectory_key"] == ["path", "pred_path", "trajectory"]


def test_validate_refuses_a_merged_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = square_root(tmp_path / "root")
    path = tmp_path / "merged.json"
    path.write_text(
        json.dumps(_merged(1) + [{"instr_id": f"1_{k}", "path": REFERENCE} for k in (1, 2)])
    )
    args = ["validate", "--task", "r2r", "--split", "val", "--data-root", str(root)]
    assert main([*args, "--predictions", str(path)]) == 2
    assert capsys.readouterr().err.splitlines() == [f'error: {path}: instr_id "1_0": {WHY}']


def test_the_summary_records_the_field_read(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    given = evaluate("r2r", "val", _merged(3), root=root, trajectory_key="pred_path")
    found = [{"instr_id": f"1_{k}", "path": REFERENCE} for k in range(3)]
    assert given.to_dict()["trajectory_key"] == "pred_path"
    assert evaluate("r2r", "val", found, root=root).to_dict()["trajectory_key"] == "path"


def _navillm(n: int = 3) -> list[dict[str, Any]]:
    """NaviLLM's shape: each trajectory as triples in ``trajectory`` and as ids in ``pred_path``."""
    return [
        {"instr_id": f"1_{k}", "trajectory": [[v, 0, 0] for v in REFERENCE], "pred_path": REFERENCE}
        for k in range(n)
    ]


@pytest.mark.parametrize("as_file", [True, False])
def test_the_typed_pass_reads_the_same_steps_written_twice(tmp_path: Path, as_file: bool) -> None:
    """The two fields are compared by the typed decoding (the explaining pass is not needed):
    each record keeps the field read first, and only that one is listed as read."""
    given = _navillm()
    if as_file:
        text = json.dumps(given).encode()
        form, chunks = structs.decode(text, "p.json", id_field="instr_id", key=None, form="auto")
        records = next(chunks)
    else:
        form, records = structs.convert(given, id_field="instr_id", key=None, form="auto")
    ids, lengths, viewpoints, fields = structs.columns(records, form, 3)
    assert (form, ids, lengths, list(viewpoints)[:4], fields) == (
        "triple", ["1_0", "1_1", "1_2"], [4, 4, 4], REFERENCE, ["trajectory"]
    )  # fmt: skip
    path = tmp_path / "navillm.json"
    path.write_text(json.dumps(given))
    result = evaluate("r2r", "val", path, root=square_root(tmp_path / "root"))
    assert (result.metrics["SR"], result.to_dict()["trajectory_key"]) == (1.0, "trajectory")


@pytest.mark.parametrize("later", [False, True])
def test_a_file_whose_two_fields_differ_is_refused_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, later: bool
) -> None:
    """In the first chunk of records or in a later one (a large file is decoded in chunks)."""
    if later:
        monkeypatch.setattr(
            structs, "array_chunks", functools.partial(array_chunks, chunk=2, large=0)
        )
    records = _navillm()
    records[2]["pred_path"] = AGENT
    path = tmp_path / "navillm.json"
    path.write_text(json.dumps(records))
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"))
    assert [str(p) for p in exc.value.problems] == [
        f'{path}: instr_id "1_2": ' + WHY.replace("'path'", "'trajectory'")
    ]
