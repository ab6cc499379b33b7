"""An unknown viewpoint in an episode file is named by the file's own field (NDH
``planner_path``, HANNA ``paths[0]`` / ``paths``), once even when it is both a path's end and a
goal."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.cvdn import fixture as ndh
from tests.tasks.hanna import fixture as hanna
from tests.tasks.r2r.test_rxr import _root as rxr_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _error(task: str, split: str, predictions: Any, root: Path, **kw: Any) -> str:
    with pytest.raises(InvalidInputError) as exc:
        evaluate(task, split, predictions, root=root, **kw)
    return str(exc.value)


def _ndh(tmp: Path, **kw: Any) -> str:
    instances = copy.deepcopy(ndh.INSTANCES)
    instances[0]["planner_path"][1] = "NOPE"  # planner S, NOPE, B
    instances[0]["player_path"][1] = "NOPE"  # player S, NOPE, B, C
    root = ndh.make_root(tmp / "root", instances)
    return _error("ndh", "val_seen", ndh.predictions(tmp), root, **kw)


def test_ndh_names_the_path_field_it_scores(tmp_path: Path) -> None:
    source = tmp_path / "root" / "cvdn" / "NDH" / "val_seen.json"
    assert _ndh(tmp_path) == (
        f"error: {source}: inst_idx 1: planner_path: viewpoint NOPE is not in scan lane"
    )


def test_ndh_trusted_path_names_both_fields_it_comes_from(tmp_path: Path) -> None:
    source = tmp_path / "root" / "cvdn" / "NDH" / "val_seen.json"
    assert _ndh(tmp_path, options={"path_type": "trusted_path"}) == (
        f"error: {source}: inst_idx 1: player_path or planner_path (trusted_path): viewpoint "
        "NOPE is not in scan lane"
    )


def _hanna(tmp: Path, k: int, j: int, vp: str) -> str:
    tasks = copy.deepcopy(hanna.TASKS)
    tasks[0]["paths"][k][j] = vp
    root = hanna.make_root(tmp / "root", tasks)
    return _error("hanna", "val_unseen", hanna.predictions(tmp), root)


def test_hanna_names_the_first_path_and_the_goals_path(tmp_path: Path) -> None:
    source = tmp_path / "root" / "hanna" / "hanna_val_unseen.json"
    assert _hanna(tmp_path, 0, 1, "NOPE") == "\n".join(
        f'error: {source}: instr_id "10_{i}": paths[0]: viewpoint NOPE is not in scan flat'
        for i in range(2)
    )
    assert _hanna(tmp_path, 1, 1, "ELSE") == "\n".join(  # the second goal: paths[1]'s end
        f'error: {source}: instr_id "10_{i}": paths: viewpoint ELSE is not in scan flat'
        for i in range(2)
    )


def test_a_goal_that_is_the_path_s_end_is_named_once(tmp_path: Path) -> None:
    source = tmp_path / "root" / "hanna" / "hanna_val_unseen.json"
    assert _hanna(tmp_path, 0, -1, "NOPE") == "\n".join(
        f'error: {source}: instr_id "10_{i}": paths[0]: viewpoint NOPE is not in scan flat'
        for i in range(2)
    )
    root = rxr_root(tmp_path / "rxr")
    guide = root / "rxr" / "rxr_val_unseen_guide.jsonl.gz"
    rows = [json.loads(line) for line in gzip.decompress(guide.read_bytes()).splitlines()]
    rows[1]["path"][-1] = "NOPE"
    guide.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    records = [
        {"instruction_id": 11, "path": ["S", "G"]},
        {"instruction_id": 12, "path": ["S", "A", "B", "G"]},
    ]
    assert _error("rxr", "val_unseen", records, root) == (
        f"error: {guide}: instruction_id 12: path: viewpoint NOPE is not in scan sq"
    )
