"""Bad arguments raise InvalidInputError with a message naming the function, argument and fix."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from vlneval import metrics as M
from vlneval.errors import InvalidInputError, VLNEvalError

D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], dtype=np.float64)
TRAJ, REF, GOALS = [0, 3], [0, 1, 2, 3], [3]

# Every public single-episode function over paths, as f(trajectory, reference, goals, distances).
PATH_FUNCTIONS: dict[str, Callable[[Any, Any, Any, Any], float]] = {
    "navigation_error": lambda p, r, g, d: M.navigation_error(p, g, distances=d),
    "oracle_error": lambda p, r, g, d: M.oracle_error(p, g, distances=d),
    "path_length": lambda p, r, g, d: M.path_length(p, distances=d),
    "dtw": lambda p, r, g, d: M.dtw(r, p, distances=d),
    "ndtw": lambda p, r, g, d: M.ndtw(r, p, distances=d),
    "sdtw": lambda p, r, g, d: M.sdtw(r, p, distances=d, success=True),
    "cls": lambda p, r, g, d: M.cls(p, r, distances=d),
}
USES_REFERENCE = {"dtw", "ndtw", "sdtw", "cls"}
USES_GOALS = {"navigation_error", "oracle_error"}


def _raises(message: str, call: Callable[[], object], name: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        call()
    text = str(info.value)
    assert isinstance(info.value, VLNEvalError)
    assert text.startswith(f"error: {name}: "), text
    assert message in text, text


@pytest.mark.parametrize("name", PATH_FUNCTIONS)
def test_sane_call_works(name: str) -> None:
    assert PATH_FUNCTIONS[name](TRAJ, REF, GOALS, D) >= 0


@pytest.mark.parametrize("name", PATH_FUNCTIONS)
@pytest.mark.parametrize(
    ("table", "message"),
    [
        (np.zeros((3, 4)), "distances must be a square 2-D table (n x n); got shape (3, 4)"),
        (np.zeros(16), "distances must be a square 2-D table (n x n); got shape (16,)"),
        (np.zeros((0, 0)), "distances must hold at least one node"),
        (np.array([["a"]]), "distances must hold real numbers; got dtype <U1"),
    ],
)
def test_bad_table(name: str, table: np.ndarray, message: str) -> None:
    _raises(message, lambda: PATH_FUNCTIONS[name](TRAJ, REF, GOALS, table), name)


@pytest.mark.parametrize("name", PATH_FUNCTIONS)
def test_bad_trajectory(name: str) -> None:
    f = PATH_FUNCTIONS[name]
    _raises(
        "trajectory[1] = 9 is out of range for a distance table of 4 nodes (expected 0..3)",
        lambda: f([0, 9], REF, GOALS, D),
        name,
    )
    _raises("trajectory[0] = -1 is out of range", lambda: f([-1], REF, GOALS, D), name)
    _raises(
        "trajectory must hold integer node indices; got dtype float64 (first value 0.0)",
        lambda: f([0.0, 3.0], REF, GOALS, D),
        name,
    )
    _raises(
        "trajectory must be a 1-D array of node indices; got a 2-D array of shape (1, 2)",
        lambda: f([[0, 3]], REF, GOALS, D),
        name,
    )
    _raises(
        "trajectory must be an array; could not convert it",
        lambda: f([[0], [0, 1]], REF, GOALS, D),
        name,
    )
    _raises("trajectory must hold integer", lambda: f(np.array([True, False]), REF, GOALS, D), name)


@pytest.mark.parametrize("name", sorted(USES_REFERENCE))
def test_bad_reference(name: str) -> None:
    f = PATH_FUNCTIONS[name]
    _raises(
        "reference must contain at least one node; got an empty array",
        lambda: f(TRAJ, [], GOALS, D),
        name,
    )
    _raises("reference[2] = 4 is out of range", lambda: f(TRAJ, [0, 1, 4], GOALS, D), name)
    _raises("reference must hold integer node indices", lambda: f(TRAJ, [0.5], GOALS, D), name)


@pytest.mark.parametrize("name", sorted(USES_GOALS))
def test_bad_goals_and_empty_trajectory(name: str) -> None:
    f = PATH_FUNCTIONS[name]
    _raises(
        "goals must contain at least one node; got an empty array",
        lambda: f(TRAJ, REF, [], D),
        name,
    )
    _raises("goals[0] = 4 is out of range", lambda: f(TRAJ, REF, [4], D), name)
    _raises("trajectory must contain at least one node", lambda: f([], REF, GOALS, D), name)


@pytest.mark.parametrize("name", ["ndtw", "sdtw", "cls"])
@pytest.mark.parametrize("threshold", [0, -1.0, float("nan"), float("inf"), True, "3"])
def test_bad_threshold(name: str, threshold: Any) -> None:
    call = {
        "ndtw": lambda: M.ndtw(REF, TRAJ, distances=D, threshold=threshold),
        "sdtw": lambda: M.sdtw(REF, TRAJ, distances=D, threshold=threshold, success=1),
        "cls": lambda: M.cls(TRAJ, REF, distances=D, threshold=threshold),
    }[name]
    _raises("threshold must be a ", call, name)


@pytest.mark.parametrize("name", ["success", "oracle_success"])
def test_bad_success_arguments(name: str) -> None:
    f = getattr(M, name)
    _raises("error must be >= 0; got -1.0", lambda: f(-1.0), name)
    _raises("error must be a real number; got nan", lambda: f(float("nan")), name)
    _raises("error must be a real number; got '2'", lambda: f("2"), name)
    _raises("threshold must be a finite number >= 0; got -3", lambda: f(1.0, threshold=-3), name)


def test_bad_spl_and_sdtw_arguments() -> None:
    _raises("success must be 0 or 1 (or a bool); got 0.5", lambda: M.spl(0.5, 1.0, 1.0), "spl")
    _raises("shortest_length must be >= 0; got -1", lambda: M.spl(1, -1, 1.0), "spl")
    _raises(
        "path_length must be a real number; got nan", lambda: M.spl(1, 1.0, float("nan")), "spl"
    )
    _raises(
        "floor must be a finite number >= 0; got inf",
        lambda: M.spl(1, 1, 1, floor=float("inf")),
        "spl",
    )
    call = lambda: M.sdtw(REF, TRAJ, distances=D, success="yes")  # noqa: E731
    _raises("success must be a real number; got 'yes'", call, "sdtw")
    _raises(
        "path[1] = -2 is out of range (expected a node index >= 0)",
        lambda: M.collapse_repeats([1, -2]),
        "collapse_repeats",
    )


# ---- score_batch ----


def _batch_args(**changes: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "dist_flat": D.ravel(),
        "table_offsets": np.array([0]),
        "table_sizes": np.array([4]),
        "scan_index": np.array([0, 0]),
        "traj": np.array([0, 3, 0, 1]),
        "traj_offsets": np.array([0, 2, 4]),
        "ref": np.array([0, 1, 2, 3, 0, 3]),
        "ref_offsets": np.array([0, 4, 6]),
        "goals": np.array([3, 3]),
        "goal_offsets": np.array([0, 1, 2]),
    }
    args.update(changes)
    return args


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({}, None),
        (
            {"traj": np.array([0, 3, 4, 1])},
            "traj[2] (episode 1, position 0) = 4 is out of range for its scan's table of 4 nodes "
            "(expected 0..3)",
        ),
        ({"traj": np.array([0.0, 3, 0, 1])}, "traj must hold integers; got dtype float64"),
        (
            {"goals": np.array([3]), "goal_offsets": np.array([0, 1, 1])},
            "goals: episode 1 is empty (1 empty episode(s) in all); every episode needs at least "
            "one node",
        ),
        (
            {"ref_offsets": np.array([0, 4, 4]), "ref": np.array([0, 1, 2, 3])},
            "ref: episode 1 is empty",
        ),
        ({"traj_offsets": np.array([0, 4])}, "traj_offsets must have N + 1 = 3 entries"),
        (
            {"traj_offsets": np.array([0, 1, 5])},
            "traj_offsets must start at 0 and end at the flat array's length 4; got 0 .. 5",
        ),
        (
            {"traj_offsets": np.array([0, 3, 2, 4]), "scan_index": np.array([0, 0, 0])},
            "traj_offsets must not decrease; it does at episode 1",
        ),
        (
            {"scan_index": np.array([0, 1])},
            "scan_index[1] = 1 is out of range for 1 scan table(s) (expected 0..0)",
        ),
        (
            {"table_sizes": np.array([5])},
            "scan 0's table (5 x 5 at offset 0) runs past the end of dist_flat (16 values)",
        ),
        (
            {"table_sizes": np.array([4, 4])},
            "table_offsets and table_sizes must have one entry per scan",
        ),
        ({"dist_flat": D}, "dist_flat must be a 1-D array; got shape (4, 4)"),
    ],
)
def test_score_batch_checks_its_arrays(changes: dict[str, Any], message: str | None) -> None:
    if message is None:
        assert M.score_batch(**_batch_args())["cls"][0] > 0
    else:
        _raises(message, lambda: M.score_batch(**_batch_args(**changes)), "score_batch")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"spl_reference": "shortst"},
            "spl_reference must be 'shortest' or 'reference'; got 'shortst'",
        ),
        ({"threshold": 0.0}, "threshold must be a finite number > 0; got 0.0"),
        ({"spl_floor": -0.01}, "spl_floor must be a finite number >= 0; got -0.01"),
        ({"cls_threshold": float("nan")}, "cls_threshold must be a real number; got nan"),
    ],
)
@pytest.mark.parametrize("validate", [True, False])
def test_score_batch_checks_its_options(
    options: dict[str, Any], message: str, validate: bool
) -> None:
    call = lambda: M.score_batch(**_batch_args(), validate=validate, **options)  # noqa: E731
    _raises(message, call, "score_batch")


def test_messages_are_single_lines() -> None:
    with pytest.raises(InvalidInputError) as info:
        M.ndtw(REF, [0, 9], distances=D)
    assert re.fullmatch(r"error: ndtw: [^\n]+", str(info.value))
