"""Wrong values in memory nested too deeply to write whole, in the predictions of Touchdown,
SOON, REVERIE and VLN-CE and in an environment's arguments and actions: each is named in the
words a shallow wrong value gets (its start shown), not a bare RecursionError from its repr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tasks.reverie.reverie_fixtures import rev_preds, reverie_root
from tests.tasks.soon.soon_fixtures import soon_preds, soon_root
from tests.tasks.touchdown.fixture import RUNS, make_root
from tests.tasks.vlnce.helpers import write_split
from vlneval.envs.continuous.spaces import Velocity, Waypoint
from vlneval.envs.core import positive_steps
from vlneval.errors import InvalidActionError, InvalidInputError, VLNEvalError
from vlneval.evaluation import evaluate


def _deep(depth: int = 100_000) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth):
        out = [out]
    return out


def _problems(*args: Any, **kwargs: Any) -> list[str]:
    with pytest.raises(InvalidInputError) as exc:
        evaluate(*args, **kwargs)
    return [str(p) for p in exc.value.problems]


@pytest.mark.parametrize(
    ("triple", "expected"),
    [(False, "a panorama id"), (True, "[panorama, heading, ...] with finite numbers")],
)
def test_a_deep_touchdown_step_is_named(tmp_path: Path, triple: bool, expected: str) -> None:
    records = [
        {"route_id": k, "trajectory": [[p, 0.0] if triple else p for p in v]}
        for k, v in RUNS.items()
    ]
    records[1]["trajectory"][2] = _deep()
    assert _problems("touchdown", "dev", records, root=make_root(tmp_path)) == [
        f"<records>: route_id 2: trajectory[2]: expected {expected}, got " + "[" * 60
    ]


def test_a_deep_soon_step_and_angle_are_named(tmp_path: Path) -> None:
    records = soon_preds()
    records[0]["trajectory"][0]["path"][1] = _deep()
    records[1]["trajectory"][0]["obj_heading"] = _deep()
    assert _problems("soon", "val", records, root=soon_root(tmp_path)) == [
        '<records>: instr_id "1": trajectory[0].path[1]: expected a triple step, got ' + "[" * 60,
        '<records>: instr_id "2": trajectory[0].obj_heading: obj_heading must be a finite '
        "number (or [number]), got " + "[" * 40,
    ]


def test_a_deep_reverie_object_id_is_named(tmp_path: Path) -> None:
    records = rev_preds({"1_7_0": (["S", "A", "B"], _deep()), "1_7_1": (["S", "G"], "8")})
    problems = _problems(
        "reverie", "val", records, root=reverie_root(tmp_path), options={"data_version": "v1"}
    )
    assert problems[1:] == [
        '<records>: instr_id "1_7_0": predObjId: predObjId must be an int object id (or a '
        "string), got " + "[" * 40
    ]


def test_a_deep_first_value_of_a_list_not_vlnce_is_shown(tmp_path: Path) -> None:
    episodes, _ = write_split(tmp_path)
    problems = _problems("r2r-ce", "val", [_deep(), {"a": 1}], episodes_file=episodes)
    assert problems[0].startswith(
        "<records>: a list of 2 values (the first: " + "[" * 30 + "), not a VLN-CE form: "
    )


def test_deep_environment_arguments_and_actions_are_named() -> None:
    with pytest.raises(VLNEvalError) as steps:
        positive_steps(_deep(), 35)
    assert str(steps.value).endswith("the standard limits are 35 to 1,000), got " + "[" * 40)
    with pytest.raises(InvalidActionError) as velocity:
        Velocity().parse(_deep())
    assert str(velocity.value) == (
        "expected STOP (0) or (linear m/s, angular rad/s), got " + "[" * 60
    )
    with pytest.raises(InvalidActionError) as waypoint:
        Waypoint().parse(_deep())
    assert str(waypoint.value) == (
        "expected STOP (0) or (distance m, relative heading rad[, relative height m]), got "
        + "[" * 60
    )
