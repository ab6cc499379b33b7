"""The simulator's scan reader reads an integer ``image_id`` as its text, as scoring reads it,
instead of failing inside msgspec; two records sharing an id are read, and the first is found
(``NavGraph::index``)."""

from __future__ import annotations

import json

from vlneval.graph.simscan import sim_scan_from_bytes


def _eye(x: float, y: float) -> list[float]:
    return [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, 1.5, 0, 0, 0, 1]


def test_an_integer_image_id_is_read_as_its_text() -> None:
    recs = [
        {"image_id": 1, "pose": _eye(0, 0), "included": True, "unobstructed": [False, True]},
        {"image_id": 2, "pose": _eye(0, 2), "included": True, "unobstructed": [True, False]},
    ]
    scan = sim_scan_from_bytes(json.dumps(recs).encode(), "toy", "toy.json")
    assert scan.ids == ["1", "2"] and scan.index == {"1": 0, "2": 1}
    ixs, _, _, dist = scan.candidates(0, 0.0, 0.0, 0.9)
    assert ixs == (1,) and dist == (2.0,)


def test_two_records_sharing_an_image_id_are_read_and_the_first_is_found() -> None:
    no, yes = False, True
    recs = [
        {"image_id": "a", "pose": _eye(0, 0), "included": yes, "unobstructed": [no, yes, no]},
        {"image_id": 7, "pose": _eye(0, 2), "included": yes, "unobstructed": [yes, no, no]},
        {"image_id": "7", "pose": _eye(9, 9), "included": no, "unobstructed": [no, no, no]},
    ]  # 7 and "7" are one viewpoint: ids are read as their text; NavGraph::index finds record 1
    scan = sim_scan_from_bytes(json.dumps(recs).encode(), "toy", "toy.json")
    assert scan.ids == ["a", "7", "7"] and scan.index == {"a": 0, "7": 1}
    assert scan.graph is None  # the scorer's reader refuses the file (so no tables)
    assert scan.candidates(0, 0.0, 0.0, 0.9)[0] == (1,)
