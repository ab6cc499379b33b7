"""The predictions fast path read ahead of the episodes (prescan + resolve) agrees with the
validating parser, including viewpoint ids that several scans share."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures import connectivity, preds, write_json
from vlneval.data.predictions import parse_predictions
from vlneval.data.prescan import prescan_predictions, resolve
from vlneval.data.r2r import load_r2r
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.graph.store import GraphStore

LINE = {"a": (0.0, 0.0, 0.0), "b": (2.0, 0.0, 0.0), "c": (4.0, 0.0, 0.0)}
LINE_EDGES = [("a", "b"), ("b", "c")]


def _root(tmp: Path) -> Path:
    """Two scans with the same viewpoint names in different orders, plus one of their own."""
    conn = tmp / "matterport3d" / "connectivity"
    write_json(conn / "one_connectivity.json", connectivity(LINE, LINE_EDGES))
    flipped = {k: LINE[k] for k in ("c", "b", "a")} | {"d": (6.0, 0.0, 0.0)}
    write_json(conn / "two_connectivity.json", connectivity(flipped, [*LINE_EDGES, ("c", "d")]))
    episodes = [
        {"path_id": 1, "scan": "one", "path": ["a", "b", "c"], "instructions": ["x"]},
        {"path_id": 2, "scan": "two", "path": ["c", "d"], "instructions": ["y"]},
        {"path_id": 3, "scan": "two", "path": ["a", "b"], "instructions": ["z"]},
    ]
    for e in episodes:
        e |= {"heading": 0.0, "distance": 1.0}
    write_json(tmp / "r2r" / "R2R_val.json", episodes)
    return tmp


def test_shared_viewpoint_names_map_to_each_episodes_scan(tmp_path: Path) -> None:
    root = _root(tmp_path)
    episodes = load_r2r(root / "r2r" / "R2R_val.json", split="val")
    store = GraphStore(root / "matterport3d" / "connectivity", use_cache=False)
    p = write_json(
        tmp_path / "p.json",
        preds({"3_0": ["a", "b"], "1_0": ["a", "b", "c"], "2_0": ["c", "d"], "9_0": ["q"]}),
    )
    pre = prescan_predictions(p, "instr_id")
    assert pre is not None and pre.ids == ["3_0", "1_0", "2_0", "9_0"]
    resolved = resolve(pre, episodes, store)
    assert resolved is not None
    form, eps, lens, nodes, unknown = resolved
    assert (form, eps.tolist(), lens.tolist(), unknown) == ("triple", [2, 0, 1], [2, 3, 2], ["9_0"])
    # scan "two" holds c, b, a, d in that order; scan "one" holds a, b, c
    assert nodes.tolist() == [2, 1, 0, 1, 2, 0, 3]
    fast = parse_predictions(p, episodes, store, prescan=pre)
    slow = parse_predictions(p, episodes, store, keep_fields=("instr_id",))  # validating parser
    assert np.array_equal(fast.nodes, slow.nodes) and np.array_equal(fast.offsets, slow.offsets)
    assert fast.warnings == slow.warnings


def test_a_viewpoint_of_another_scan_goes_to_the_validating_parser(tmp_path: Path) -> None:
    root = _root(tmp_path)
    p = write_json(tmp_path / "p.json", preds({"1_0": ["a", "d"], "2_0": ["c"], "3_0": ["a"]}))
    episodes = load_r2r(root / "r2r" / "R2R_val.json", split="val")
    store = GraphStore(root / "matterport3d" / "connectivity", use_cache=False)
    pre = prescan_predictions(p, "instr_id")
    assert pre is not None and resolve(pre, episodes, store) is None
    with pytest.raises(
        InvalidInputError, match=r'"1_0": trajectory\[1\]: viewpoint d is not in scan one'
    ):
        evaluate("r2r", "val", p, root=root, subset=True)


def test_a_prescan_read_another_way_is_not_used(tmp_path: Path) -> None:
    root = _root(tmp_path)
    p = write_json(tmp_path / "p.json", [{"instr_id": "1_0", "path": ["a", "b", "c"]}])
    pre = prescan_predictions(p, "instr_id", form="plain")
    assert pre is not None and pre.answers(p, "instr_id", "plain", None)
    assert not pre.answers(p, "instr_id", "auto", None)
    assert not pre.answers(p, "instruction_id", "plain", None)
    episodes = load_r2r(root / "r2r" / "R2R_val.json", split="val")
    store = GraphStore(root / "matterport3d" / "connectivity", use_cache=False)
    got = parse_predictions(p, episodes, store, form="auto", prescan=pre)
    assert got.form == "plain" and got.nodes.tolist() == [0, 1, 2]


def test_files_the_scanner_cannot_read_are_declined(tmp_path: Path) -> None:
    assert prescan_predictions(tmp_path / "missing.json", "instr_id") is None
    bad = tmp_path / "bad.json"
    for text in ('{"a": 1}', "[1, 2", '[{"instr_id": "1_0", "trajectory": []}] x', "[]"):
        bad.write_text(text)
        assert prescan_predictions(bad, "instr_id") is None, text
    ok = write_json(tmp_path / "ok.json", preds({"1_0": ["a"]}))
    assert prescan_predictions(ok, "instr_id", trajectory_key="instr_id") is None
    assert prescan_predictions(ok, "instr_id", form="weird") is None


def test_a_stopped_reading_ends_early(tmp_path: Path) -> None:
    import threading

    p = write_json(tmp_path / "p.json", preds({f"{i}_0": ["a"] for i in range(5)}))
    stop = threading.Event()
    stop.set()
    assert prescan_predictions(p, "instr_id", stop=stop) is None
    assert prescan_predictions(p, "instr_id", stop=threading.Event()) is not None


def test_bad_episodes_stop_the_reading_ahead(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "r2r" / "R2R_val.json").write_text('[{"path_id": 1}]')
    p = write_json(tmp_path / "p.json", preds({"1_0": ["a"]}))
    with pytest.raises(InvalidInputError, match="R2R_val.json"):
        evaluate("r2r", "val", p, root=root)
