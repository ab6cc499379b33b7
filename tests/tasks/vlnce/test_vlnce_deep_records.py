"""VLN-CE records in memory nested too deeply to write whole are named by episode and field in
the words a shallow wrong value gets (its start shown), not a bare RecursionError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tasks.vlnce.helpers import steps
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate

LINE = [[0.0, 0.0, -float(k)] for k in range(5)]
STEP = "{'position': [x, y, z], 'heading': h, 'stop': bool}"


def _deep(depth: int = 100_000) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth):
        out = [out]
    return out


def _problems(split: tuple[Path, Path], body: Any) -> list[str]:
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r-ce", "val", body, episodes_file=split[0])
    return [str(p) for p in exc.value.problems]


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("stop", "[2].stop: stop must be true or false"),
        ("heading", "[2].heading: heading must be a finite number"),
    ],
)
def test_deep_r2r_ce_values_are_named_by_episode_and_field(
    split: tuple[Path, Path], field: str, message: str
) -> None:
    body = {"1": steps(LINE), "2": steps(LINE[:3])}
    body["1"][1] = _deep()
    body["2"][2][field] = _deep()
    assert _problems(split, body) == [
        f'<records>: episode_id "1": [1]: expected {STEP}, got ' + "[" * 30,
        f'<records>: episode_id "2": {message}, got ' + "[" * 30,
    ]


def test_a_deep_r2r_ce_position_is_named(split: tuple[Path, Path]) -> None:
    body = {"1": steps(LINE), "2": steps(LINE[:3])}
    body["2"][1]["position"] = _deep()
    assert _problems(split, body) == [
        f'<records>: episode_id "2": [1].position: expected {STEP}: position must be '
        "[x, y, z], got " + "[" * 30
    ]


def test_a_deep_rxr_point_is_named_by_instruction_and_index(split: tuple[Path, Path]) -> None:
    body = [
        {"instruction_id": "i1", "path": LINE},
        {"instruction_id": "i2", "path": [LINE[0], _deep()]},
    ]
    assert _problems(split, body) == [
        '<records>: instruction_id "i2": path[1]: position must be [x, y, z], got ' + "[" * 30
    ]
