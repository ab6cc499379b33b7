"""The server's rewrites of the scorer's command-line hints, on the messages the library really
produces: every rewrite matches one, so none is left that rewrites nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import preds, square_root, write_json
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.server.services.validation import SERVER_HINTS, render_problems

ALL = ("1_0", "1_1", "1_2")
#: (task, split, profile, predictions) -> the line the submitter sees
CASES: list[tuple[str, str, str, Any, str]] = [
    (
        "r2r",
        "val",
        "r2r",
        preds({"1_0": ["S"]}),
        "preds.json: 2 of 3 episodes have no prediction (first: 1_1, 1_2); the official scorer "
        "requires all of them (this phase scores complete files only)",
    ),
    (
        "r2r",
        "val",
        "r2r",
        preds({"1_0": ["S", "B"], "1_1": ["S"], "1_2": ["S"]}),
        'preds.json: instr_id "1_0": trajectory[1]: viewpoint B is not a neighbour of S in scan '
        "sq (the official scorer rejects jumps)",
    ),
    (
        "r4r",
        "val_seen",
        "r4r-google",
        preds({"1_0": ["S", "S", "A"], "1_1": ["S"], "1_2": ["S"]}),
        'preds.json: instr_id "1_0": trajectory: repeats a viewpoint (1 time(s)); profile '
        "r4r-google reproduces a CLS that looks every step up as a graph edge and cannot score it",
    ),
    (
        "r2r",
        "val",
        "r2r",
        [*preds({k: ["S"] for k in ALL}), {"SR": 0.5, "n": 3}],
        "preds.json: record 3: missing field 'instr_id'; the record looks like a summary (fields "
        "SR, n); remove that record from the file",
    ),
]


def _problems(tmp: Path, task: str, split: str, profile: str, body: Any) -> InvalidInputError:
    root = square_root(tmp / "root")
    episodes = json.loads((root / "r2r" / "R2R_val.json").read_text())
    write_json(root / "r4r" / "R4R_val_seen.json", episodes)
    path = write_json(tmp / "p.json", body)
    with pytest.raises(InvalidInputError) as exc:
        evaluate(task, split, path, root=root, profile=profile)
    return exc.value


@pytest.mark.parametrize(
    ("task", "split", "profile", "body", "shown"), CASES, ids=[str(k) for k in range(len(CASES))]
)
def test_a_hint_is_rewritten_on_the_library_s_own_message(
    task: str, split: str, profile: str, body: Any, shown: str, tmp_path: Path
) -> None:
    exc = _problems(tmp_path, task, split, profile, body)
    lines = render_problems(
        exc.problems,
        source=str(tmp_path / "p.json"),
        display_name="preds.json",
        id_field="instr_id",
        starts={},
    )
    assert lines == [shown]


def test_every_rewrite_matches_a_library_message(tmp_path: Path) -> None:
    said = [
        str(p)
        for k, (task, split, profile, body, _) in enumerate(CASES)
        for p in _problems(tmp_path / str(k), task, split, profile, body).problems
    ]
    assert [sum(bool(pattern.search(m)) for m in said) for pattern, _ in SERVER_HINTS] == [
        1,
        1,
        1,
        1,
    ]
    assert said[-1].endswith("; pass --skip-summary-records to skip it")  # the R2R suggestion
