"""Every message names an episode by its id as the benchmark's files write it: a JSON integer
bare (NDH ``inst_idx 1``, RxR ``instruction_id 11``), text quoted (R2R ``instr_id "100_0"``),
whichever part of the reader or the rule checks finds the problem."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.tasks.cvdn.fixture import TRAJECTORIES, make_root
from tests.tasks.r2r.test_rxr import _root as rxr_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.tasks.common.root import demo_root


def _errors(task: str, split: str, records: list[dict[str, Any]], root: Path | None) -> str:
    with pytest.raises(InvalidInputError) as exc:
        evaluate(task, split, records, root=root)
    return str(exc.value)


def _ndh() -> list[dict[str, Any]]:
    return [
        {"inst_idx": k, "trajectory": [[v, 0.0, 0.0] for v in vps]}
        for k, vps in TRAJECTORIES.items()
    ]


def _rxr() -> list[dict[str, Any]]:
    return [
        {"instruction_id": 11, "path": ["S", "G"]},
        {"instruction_id": 12, "path": ["S", "A", "B", "G"]},
    ]


def test_ndh_ids_are_shown_bare_by_the_reader_and_the_rule_checks(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    dup = "error: <records>: inst_idx 1: duplicate id: the file has two predictions for it"
    assert _errors("ndh", "val_seen", [*_ndh(), _ndh()[0]], root) == dup  # the typed pass
    records = [*_ndh(), _ndh()[0]]
    records[0]["trajectory"][0][1] = "up"  # the explaining pass
    assert _errors("ndh", "val_seen", records, root) == (
        "error: <records>: inst_idx 1: trajectory[0]: heading must be a number, got 'up'\n" + dup
    )
    records = _ndh()
    records[0]["trajectory"][1][0] = "nowhere"
    assert _errors("ndh", "val_seen", records, root) == (
        "error: <records>: inst_idx 1: trajectory[1]: viewpoint nowhere is not in scan lane"
    )
    records = _ndh()
    records[0]["trajectory"] = [["A", 0, 0], ["B", 0, 0]]
    assert _errors("ndh", "val_seen", records, root) == (
        "error: <records>: inst_idx 1: trajectory[0]: the trajectory starts at A, not at the "
        "episode's start S (it must include the start viewpoint)"
    )
    records[0]["trajectory"] = [["S", 0, 0], ["B", 0, 0]]
    assert _errors("ndh", "val_seen", records, root) == (
        "error: <records>: inst_idx 1: trajectory[1]: viewpoint B is not a neighbour of S in "
        "scan lane (the official CVDN scorer rejects a move along no graph edge)"
    )


def test_rxr_ids_are_shown_bare_in_predictions_and_episode_problems(tmp_path: Path) -> None:
    """RxR's guide files write ``instruction_id`` as a JSON integer."""
    root = rxr_root(tmp_path / "root")
    assert _errors("rxr", "val_unseen", [*_rxr(), _rxr()[0]], root) == (
        "error: <records>: instruction_id 11: duplicate id: the file has two predictions for it"
    )
    records = _rxr()
    records[0]["path"] = ["S", "nowhere"]
    assert _errors("rxr", "val_unseen", records, root) == (
        "error: <records>: instruction_id 11: path[1]: viewpoint nowhere is not in scan sq"
    )
    guide = root / "rxr" / "rxr_val_unseen_guide.jsonl.gz"
    rows = [json.loads(line) for line in gzip.decompress(guide.read_bytes()).splitlines()]
    rows[1]["path"][2] = "NOPE"
    guide.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    assert _errors("rxr", "val_unseen", _rxr(), root) == (
        f"error: {guide}: instruction_id 12: path: viewpoint NOPE is not in scan sq"
    )
    rows[1]["path"][2], rows[1]["scan"] = "B", "NOSCAN"
    guide.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    assert _errors("rxr", "val_unseen", _rxr(), root) == (
        f"error: {guide}: instruction_id 12: scan: no connectivity file for scan 'NOSCAN' in "
        f"{root / 'matterport3d' / 'connectivity'}"
    )


def test_numpy_integer_ids_are_the_ints_they_hold(tmp_path: Path) -> None:
    """An agent's ``np.int64`` ids match the episodes; one not in the split is named bare."""
    root = rxr_root(tmp_path / "root")
    records = [{**r, "instruction_id": np.int64(r["instruction_id"])} for r in _rxr()]
    got = evaluate("rxr", "val_unseen", records, root=root)
    assert got.metrics == evaluate("rxr", "val_unseen", _rxr(), root=root).metrics
    stray = evaluate("rxr", "val_unseen", [*records, {"instruction_id": np.int64(99), "path": ["S"]}],
                     root=root)  # fmt: skip
    assert "1 prediction(s) with ids not in the split were ignored (first: 99)" in stray.warnings


def test_an_integer_id_of_the_wrong_type_is_asked_for_as_a_json_integer(tmp_path: Path) -> None:
    records = [{**_rxr()[0], "instruction_id": 11.0}, _rxr()[1]]
    assert _errors("rxr", "val_unseen", records, rxr_root(tmp_path / "root")).endswith(
        "\nerror: <records>: record 0: instruction_id must be a JSON integer (or its string), "
        "got float 11.0"
    )
    r2r = [{"instr_id": ["100_0"], "trajectory": [["S", 0, 0]]}]
    assert _errors("demo", "val", r2r, None) == (
        "error: <records>: record 0: instr_id must be a string, got list ['100_0']"
    )


def test_r2r_ids_stay_quoted() -> None:
    records = json.loads((demo_root() / "demo" / "predictions_val.json").read_text())
    assert _errors("demo", "val", [*records, records[0]], None) == (
        'error: <records>: instr_id "100_0": duplicate id: the file has two predictions for it'
    )
