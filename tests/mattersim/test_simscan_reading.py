"""The simulator's scan reader reads what the C++ reads (``NavGraph::Location`` with jsoncpp,
spec/mattersim.md 0.1 and 3.1): only ``image_id``, ``included``, ``pose[3, 7, 11]`` and
``unobstructed``; row ``i`` alone gives record ``i``'s neighbours (symmetry is never checked);
the first record with an id is the one found; booleans convert as ``asBool`` (0/1, null). What
it cannot read at all is one InvalidInputError naming the file, the record and the field. The
scorer's graph reader (``graph.matterport``) is unchanged and still refuses these files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import MatterSim
from vlneval.errors import InvalidInputError
from vlneval.graph.matterport import connectivity_from_bytes
from vlneval.graph.simscan import COS_HALF_HFOV, sim_scan_from_bytes

T, F = True, False


def _pose(x: float, y: float) -> list[float]:
    return [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, 1.5, 0, 0, 0, 1]


def _rec(vp: Any, x: float, y: float, unob: list[Any], included: Any = True) -> dict[str, Any]:
    return {"image_id": vp, "pose": _pose(x, y), "included": included, "unobstructed": unob}


def _read(recs: Any) -> Any:
    return sim_scan_from_bytes(json.dumps(recs).encode(), "toy", "toy.json")


def _sim(folder: Path, recs: Any, *, discretized: bool = True) -> MatterSim.Simulator:
    (folder / "toy_connectivity.json").write_text(json.dumps(recs))
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(folder))
    sim.setRenderingEnabled(False)
    sim.setDiscretizedViewingAngles(discretized)
    sim.setCameraResolution(640, 480)
    sim.setCameraVFOV(math.radians(60))
    sim.initialize()
    return sim


def _ids(sim: MatterSim.Simulator) -> list[tuple[str, int]]:
    return [(v.viewpointId, v.ix) for v in sim.getState()[0].navigableLocations]


def test_an_asymmetric_unobstructed_is_read_row_by_row(tmp_path: Path) -> None:
    recs = [_rec("a", 0, 0, [F, T]), _rec("b", 0, 2, [F, F])]  # a -> b only
    with pytest.raises(InvalidInputError, match="not symmetric"):
        connectivity_from_bytes(json.dumps(recs).encode(), "toy", "toy.json")  # scoring refuses
    scan = _read(recs)
    assert scan.graph is None
    assert scan.candidates(0, 0.0, 0.0, COS_HALF_HFOV)[0] == (1,)
    assert scan.candidates(1, math.pi, 0.0, COS_HALF_HFOV)[0] == ()
    sim = _sim(tmp_path, recs)
    sim.newEpisode(["toy"], ["a"], [0.0], [0.0])  # b is 2 m north, straight ahead
    assert _ids(sim) == [("a", 0), ("b", 1)]
    sim.makeAction([1], [0], [0])
    assert _ids(sim) == [("b", 1)]
    sim.makeAction([0], [1], [0])  # turning does not bring a back: b's row has no a
    for _ in range(11):
        sim.makeAction([0], [1], [0])
        assert _ids(sim) == [("b", 1)]


def test_a_repeated_image_id_finds_the_first_record(tmp_path: Path) -> None:
    recs = [
        _rec("a", 0, 0, [F, T, T, F]),
        _rec("b", 0, 2, [T, F, F, F]),
        _rec("b", 0, 4, [T, F, F, F]),  # same id, 4 m north: still a's neighbour, by index
        _rec("x", 9, 9, [F, F, F, F], included=False),
    ]
    scan = _read(recs)
    assert scan.ids == ["a", "b", "b", "x"] and scan.index == {"a": 0, "b": 1, "x": 3}
    sim = _sim(tmp_path, recs, discretized=False)
    sim.newEpisode(["toy"], ["a"], [0.0], [0.0])
    assert _ids(sim) == [("a", 0), ("b", 1), ("b", 2)]
    sim.newEpisode(["toy"], ["b"], [0.0], [0.0])
    st = sim.getState()[0]
    assert (st.location.ix, st.location.y) == (1, 2.0)


def test_the_first_record_of_an_id_decides_whether_it_is_excluded(tmp_path: Path) -> None:
    recs = [_rec("a", 0, 0, [F, T], included=False), _rec("a", 0, 2, [T, F])]
    sim = _sim(tmp_path, recs)
    with pytest.raises(ValueError) as exc:
        sim.newEpisode(["toy"], ["a"], [0.0], [0.0])
    assert str(exc.value) == "MatterSim: ViewpointId: a, is excluded from the connectivity graph."


def test_height_null_and_zero_one_booleans_are_read_as_jsoncpp_reads_them(tmp_path: Path) -> None:
    recs = [
        {**_rec("a", 0, 0, [0, 1, 1], included=1), "height": None, "visible": "ignored"},
        {**_rec("b", 0, 2, [1, 0, 0]), "height": None},
        {"image_id": "c", "pose": _pose(0, -2), "unobstructed": [1, 0, None]},  # no included
    ]
    scan = _read(recs)
    assert scan.graph is None
    assert scan.included.tolist() == [True, True, False]
    assert scan.unobstructed.tolist() == [[F, T, T], [T, F, F], [T, F, F]]
    sim = _sim(tmp_path, recs)
    sim.newEpisode(["toy"], ["a"], [0.0], [0.0])
    assert _ids(sim) == [("a", 0), ("b", 1)]  # c is behind, and not included anyway
    sim.newEpisode(["toy"], ["a"], [math.pi], [0.0])
    assert _ids(sim) == [("a", 0)]
    with pytest.raises(ValueError, match="c, is excluded"):
        sim.newEpisode(["toy"], ["c"], [0.0], [0.0])


def test_a_valid_file_still_uses_the_scorers_graph() -> None:
    recs = [_rec("a", 0, 0, [F, T]), _rec("b", 0, 2, [T, F])]
    scan = _read(recs)
    assert scan.graph is not None and scan.graph.ids == ["a", "b"]
    assert scan.table_candidates(0, 12)[0] == scan.candidates(0, 0.0, 0.0, COS_HALF_HFOV)[0]


def _refusal(raw: bytes) -> str:
    with pytest.raises(InvalidInputError) as exc:
        sim_scan_from_bytes(raw, "toy", "toy.json")
    return str(exc.value)


def test_a_file_it_cannot_read_is_refused_naming_the_file_record_and_field() -> None:
    assert _refusal(b"[{") == (
        "error: toy.json: not valid JSON: Expecting property name enclosed in double quotes at "
        "line 1, column 3"
    )
    assert _refusal(b'[{"image_id": "a", "pose": [NaN], "unobstructed": [0]}]') == (
        "error: toy.json: not valid JSON (JSON is malformed: invalid character (byte 28); NaN "
        "and Infinity are not JSON numbers)"
    )
    assert _refusal(b'{"a": 1}') == "error: toy.json: expected a JSON list of viewpoint records"
    recs: list[Any] = [
        {"pose": _pose(0, 0), "unobstructed": [F, F, F, F]},
        {"image_id": "b", "included": T, "unobstructed": [F, F, F]},
        {"image_id": "c", "pose": _pose(0, 0)[:15], "included": T},
        {"image_id": 4, "pose": _pose(0, 0), "included": "yes", "unobstructed": [F, "false", F, F]},
    ]
    assert _refusal(json.dumps(recs).encode()).splitlines() == [
        "error: toy.json: record 0: missing field 'image_id'",
        "error: toy.json: image_id \"b\": record 1: missing field 'pose'",
        'error: toy.json: image_id "b": record 1.unobstructed: unobstructed must be a list of 4 '
        "booleans (one per record), got 3 entries",
        "error: toy.json: image_id \"c\": record 2: missing field 'unobstructed'",
        'error: toy.json: image_id "c": record 2.pose: pose must be a list of 16 numbers, got '
        "[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1.5, 0, 0, 0]",
        'error: toy.json: image_id "4": record 3.included: included must be a boolean (true, '
        "false, a number or null), got 'yes'",
        'error: toy.json: image_id "4": record 3.unobstructed[1]: must be a boolean (true, false, '
        "a number or null), got 'false'",
    ]
    far = [_rec("a", 0, 1e39, [F])]
    assert _refusal(json.dumps(far).encode()) == (
        'error: toy.json: image_id "a": record 0.pose[7]: is beyond what a float32 holds (the '
        "simulator reads poses as float32)"
    )


def test_a_malformed_file_reaches_the_client_as_a_value_error(tmp_path: Path) -> None:
    sim = _sim(tmp_path, [{"image_id": "a", "pose": _pose(0, 0)}])
    with pytest.raises(ValueError) as exc:
        sim.newEpisode(["toy"], ["a"], [0.0], [0.0])
    path = tmp_path / "toy_connectivity.json"
    assert (
        str(exc.value)
        == f"MatterSim: error: {path}: image_id \"a\": record 0: missing field 'unobstructed'"
    )
