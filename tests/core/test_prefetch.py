"""Graphs load on a worker thread as the episode loader meets their scans."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, preds, square_root, write_json
from vlneval.data.r2r import load_r2r
from vlneval.errors import MissingDataError, VLNEvalError
from vlneval.evaluation import evaluate, load_split
from vlneval.graph.store import GraphStore
from vlneval.profiles import get_profile
from vlneval.tasks import get_task


def _episodes(scans: list[str]) -> list[dict[str, object]]:
    return [
        {"path_id": k, "scan": s, "path": ["S", "G"], "instructions": ["go"], "distance": 4.0}
        for k, s in enumerate(scans)
    ]


def test_the_loader_announces_each_new_scan_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vlneval.data.stream as stream

    monkeypatch.setattr(stream.array_blocks, "__kwdefaults__", {"size": 200})  # many blocks
    p = write_json(tmp_path / "R2R_x.json", _episodes(["b", "a", "b", "c", "a", "d", "c"] * 3))
    heard: list[list[str]] = []
    table = load_r2r(p, on_scans=heard.append)
    assert len(heard) > 1  # several blocks met new scans
    assert sorted(s for batch in heard for s in batch) == ["a", "b", "c", "d"]
    assert len(table) == 21


def test_prefetched_graphs_equal_graphs_read_on_demand(tmp_path: Path) -> None:
    folder = tmp_path / "conn"
    for scan in ("s1", "s2"):
        write_json(folder / f"{scan}_connectivity.json", connectivity(SQUARE, SQUARE_EDGES))
    ahead, lazy = GraphStore(folder, use_cache=False), GraphStore(folder, use_cache=False)
    ahead.prefetch(["s2", "s1", "nowhere", "s2"])
    for scan in ("s1", "s2"):
        assert ahead.graph(scan).ids == lazy.graph(scan).ids
        assert np.array_equal(ahead.distances(scan), lazy.distances(scan))
    with pytest.raises(VLNEvalError, match="nowhere"):
        ahead.graph("nowhere")


def test_a_broken_graph_file_is_reported_by_the_caller(tmp_path: Path) -> None:
    folder = tmp_path / "conn"
    (folder).mkdir()
    (folder / "bad_connectivity.json").write_text("[{")
    store = GraphStore(folder, use_cache=False)
    store.prefetch(["bad"])
    with pytest.raises(VLNEvalError, match="bad_connectivity.json: not valid JSON"):
        store.graph("bad")


def test_missing_episodes_are_reported_before_missing_graphs(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    task, prof = get_task("r2r"), get_profile("r2r")
    with pytest.raises(MissingDataError, match="graph folder"):
        load_split(task, "val", prof, root=root, graphs=tmp_path / "none")
    with pytest.raises(VLNEvalError, match="episodes") as exc:
        load_split(task, "nosplit", prof, root=root, graphs=tmp_path / "none")
    assert "graph folder" not in str(exc.value)


def test_scores_are_the_same_with_the_cache_cold_or_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    root = square_root(tmp_path / "root")
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"]}))
    cold = evaluate("r2r", "val", p, root=root, subset=True)
    warm = evaluate("r2r", "val", p, root=root, subset=True)
    assert cold.metrics == warm.metrics
    assert list((tmp_path / "cache" / "graphs").glob("sq-*.bin"))
