"""An ``r2r-ce`` file is read by msgspec's typed decoding and checked over whole arrays; only a
file the types or the checks refuse is read a step at a time, by the explaining pass, which
names every problem (the messages are those of tests/tasks/vlnce's other files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.tasks.vlnce.helpers import steps, write_split
from vlneval.errors import InvalidInputError
from vlneval.tasks.vlnce import predictions
from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions

STRAIGHT = [[0.0, 0.0, -float(k)] for k in range(5)]


def _episodes(tmp_path: Path) -> Any:
    ep_path, gt_path = write_split(tmp_path)
    return load_vlnce(ep_path, gt_path=gt_path, task="r2r-ce", split="val")


def _explained(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The episode ids the explaining pass reads from now on."""
    seen: list[str] = []
    read = predictions._PredReader.r2r_ce

    def counted(self: Any, eid: str, trajectory: Any) -> None:
        seen.append(eid)
        read(self, eid, trajectory)

    monkeypatch.setattr(predictions._PredReader, "r2r_ce", counted)
    return seen


@pytest.mark.parametrize("carried", [False, True])
def test_a_valid_file_takes_the_typed_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, carried: bool
) -> None:
    episodes = _episodes(tmp_path)
    dists: Any = [4.0, 3.0, "inf", "Infinity", 0] if carried else None
    records = {"9": steps(STRAIGHT), "2": steps(STRAIGHT[:2], dists and dists[:2])}
    records["1"] = steps([[0.0, 0.0, 0.05], *STRAIGHT[1:]], dists, stop=False)
    if not carried:
        del records["9"][0]["heading"]
    raw = json.dumps(records).encode()
    seen = _explained(monkeypatch)
    got = parse_ce_predictions(raw, episodes)
    assert seen == []
    assert got.episodes.tolist() == [0, 1] and got.offsets.tolist() == [0, 5, 7]
    assert got.positions.tolist() == [[0.0, 0.0, 0.05], *STRAIGHT[1:], *STRAIGHT[:2]]
    assert got.stopped.tolist() == [False, True]
    want = None if not carried else [4.0, 3.0, np.inf, np.inf, 0.0, 4.0, 3.0]
    assert want == (None if got.distances is None else got.distances.tolist())
    assert (got.unknown, got.missing, got.form) == (["9"], [], "r2r-ce")
    assert got.warnings == ["1 prediction(s) for ids not in the split were ignored (first: 9)"]
    again = parse_ce_predictions(json.loads(raw), episodes)  # in memory: the explaining pass
    assert seen == ["9", "2", "1"]
    for name in ("episodes", "positions", "offsets", "stopped", "distances"):
        np.testing.assert_array_equal(getattr(again, name), getattr(got, name))
    assert (again.warnings, again.missing, again.unknown) == (got.warnings, [], ["9"])


@pytest.mark.parametrize(
    ("first", "stop_early", "carried", "why"),
    [
        ([1e7, 0.0, 0.0], False, None, "position [10000000.0, 0.0, 0.0] has a coordinate beyond"),
        ([0.2, 0.0, 0.0], False, None, "the trajectory starts 0.200 m from the episode's start"),
        ([0.0, 0.0, 0.0], True, None, "STOP at step 1 is not the last step (4): an episode"),
        ([0.0, 0.0, 0.0], False, -1.0, "distance_to_goal must be a number >= 0 or Infinity"),
    ],
)
def test_a_check_that_fails_on_the_arrays_is_named_by_the_explaining_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    first: list[float],
    stop_early: bool,
    carried: float | None,
    why: str,
) -> None:
    episodes = _episodes(tmp_path)
    bad = steps([first, *STRAIGHT[1:]], None if carried is None else [carried] * 5)
    bad[1]["stop"] = stop_early
    raw = json.dumps({"2": steps(STRAIGHT), "1": bad}).encode()
    seen = _explained(monkeypatch)
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(raw, episodes)
    assert seen == ["2", "1"]
    [problem] = exc.value.problems
    assert problem.episode == 'episode_id "1"' and problem.message.startswith(why)


def test_a_start_on_the_tolerance_is_decided_by_the_explaining_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arrays' norm may differ from one trajectory's in the last bit: a start within a hair
    of ``START_TOLERANCE`` is read by the explaining pass, which accepts it as it always did."""
    episodes = _episodes(tmp_path)
    edge = steps([[0.1, 0.0, 0.0], *STRAIGHT[1:]])
    raw = json.dumps({"1": edge, "2": steps(STRAIGHT)}).encode()
    seen = _explained(monkeypatch)
    got = parse_ce_predictions(raw, episodes)
    assert seen == ["1", "2"] and got.episodes.tolist() == [0, 1]
    assert got.positions[0].tolist() == [0.1, 0.0, 0.0]
