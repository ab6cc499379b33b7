"""Matterport3D connectivity reading, distance tables, the disk cache, geometry."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, preds, square_root, write_json
from vlneval.errors import InvalidInputError, UnknownNameError
from vlneval.graph import GraphStore, parse_connectivity
from vlneval.graph.distances import cache_dir, distance_table
from vlneval.graph.geometry import snap_heading, view_index, wrap_pi


def test_square_graph_nodes_edges_and_isolated() -> None:
    g = parse_connectivity(connectivity(SQUARE, SQUARE_EDGES, isolated=("X",)), scan="sq")
    assert g.ids == ["S", "A", "B", "G"]
    assert sorted(g.weights.tolist()) == [4.0, 4.0, 4.0, 4.0]
    assert g.isolated == frozenset({"X"})
    assert "no navigable edge" in g.describe_missing("X")
    d = distance_table(g)
    assert d[g.index["S"], g.index["B"]] == 8.0  # around the square, not the 5.66 m diagonal
    assert d[g.index["A"], g.index["G"]] == 8.0


def test_excluded_viewpoint_is_not_a_node() -> None:
    recs = connectivity(SQUARE, SQUARE_EDGES)
    recs[1]["included"] = False  # A
    g = parse_connectivity(recs, scan="sq")
    assert "A" not in g.index and "A" in g.excluded
    assert distance_table(g)[g.index["S"], g.index["B"]] == 8.0  # S-G-B; S-A-B is gone
    assert len(g.edges) == 2


def test_asymmetric_file_is_rejected_with_names() -> None:
    recs = connectivity(SQUARE, SQUARE_EDGES)
    recs[0]["unobstructed"][2] = True  # S -> B only
    with pytest.raises(InvalidInputError, match="not symmetric: S -> B"):
        parse_connectivity(recs, scan="sq", source="sq_connectivity.json")


def test_malformed_records_are_all_listed() -> None:
    recs = connectivity(SQUARE, SQUARE_EDGES)
    del recs[0]["pose"]
    recs[2]["unobstructed"] = [True]
    with pytest.raises(InvalidInputError) as exc:
        parse_connectivity(recs, scan="sq", source="f.json")
    text = str(exc.value)
    assert "record 0: missing field 'pose'" in text and "record 2.unobstructed" in text


def test_store_cache_is_reused_and_invalidated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "conn"
    path = write_json(folder / "sq_connectivity.json", connectivity(SQUARE, SQUARE_EDGES))
    GraphStore(folder).distances("sq")
    cached = list((cache_dir() / "graphs").glob("sq-*.bin"))
    assert len(cached) == 1
    assert GraphStore(folder).distances("sq")[0, 2] == 8.0  # served from the cache
    moved = dict(SQUARE, G=(4.0, -2.0, 0.0))
    path.write_text(
        path.read_text().replace(
            '"pose": [1, 0, 0, 4.0, 0, 1, 0, 0.0', '"pose": [1, 0, 0, 4.0, 0, 1, 0, -2.0'
        )
    )
    d = GraphStore(folder).distances("sq")
    g = parse_connectivity(connectivity(moved, SQUARE_EDGES), scan="sq")
    assert np.allclose(d, distance_table(g))
    assert len(list((cache_dir() / "graphs").glob("sq-*.bin"))) == 2


def test_damaged_cache_file_is_recomputed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "conn"
    write_json(folder / "sq_connectivity.json", connectivity(SQUARE, SQUARE_EDGES))
    expected = GraphStore(folder).distances("sq").copy()
    (cached,) = (cache_dir() / "graphs").glob("sq-*.bin")
    good = cached.read_bytes()
    flipped = bytearray(good)
    flipped[-3] ^= 0xFF  # a bit flip in the table: the checksum no longer matches
    retyped = good.replace(b'"<f8"', b'"<f9"', 1)  # a header that numpy cannot read
    for damaged in (good[:40], b"not a cache", good[:-8], bytes(flipped), retyped):
        cached.write_bytes(damaged)
        store = GraphStore(folder)
        assert np.array_equal(store.distances("sq"), expected)
        assert store.graph("sq").ids == ["S", "A", "B", "G"]


def test_unknown_scan_suggests_closest(tmp_path: Path) -> None:
    write_json(tmp_path / "sqr_connectivity.json", connectivity(SQUARE, SQUARE_EDGES))
    with pytest.raises(UnknownNameError, match="did you mean 'sqr'"):
        GraphStore(tmp_path).graph("sq")


def test_geometry_conventions() -> None:
    assert snap_heading(math.radians(15.0)) == 1  # C lround: half away from zero
    assert snap_heading(math.radians(45.0)) == 2
    assert view_index(0.0, math.radians(-15.0)) == 12  # ±15° snaps to level
    assert view_index(0.0, math.radians(-15.1)) == 0
    assert wrap_pi(-math.pi) == math.pi


def test_real_graphs_counts(data_root: Path) -> None:
    store = GraphStore(data_root / "matterport3d" / "connectivity")
    assert len(store.scans) == 90
    nodes = sum(store.graph(s).n for s in store.scans)
    isolated = sum(len(store.graph(s).isolated) for s in store.scans)
    edges = sum(len(store.graph(s).edges) for s in store.scans)
    assert (nodes + isolated, isolated, edges) == (10567, 8, 21468)


def test_real_distances_match_networkx(data_root: Path) -> None:
    nx = pytest.importorskip("networkx")
    store = GraphStore(data_root / "matterport3d" / "connectivity")
    g = store.graph("2azQ1b91cZZ")
    G = nx.Graph()
    for (i, j), w in zip(g.edges.tolist(), g.weights.tolist(), strict=True):
        G.add_edge(g.ids[i], g.ids[j], weight=w)
    ref = dict(nx.all_pairs_dijkstra_path_length(G))
    d = store.distances("2azQ1b91cZZ")
    worst = max(
        abs(d[g.index[a], g.index[b]] - v) for a, row in ref.items() for b, v in row.items()
    )
    assert worst < 1e-9


def test_typed_and_generic_readings_agree(tmp_path: Path) -> None:
    from vlneval.graph.matterport import _typed, load_connectivity

    recs = connectivity(SQUARE, SQUARE_EDGES, isolated=("X",))
    recs[1]["included"] = False
    p = write_json(tmp_path / "sq_connectivity.json", recs)
    fast = _typed(p.read_bytes(), "sq", str(p))
    slow = parse_connectivity(recs, scan="sq", source=str(p))
    assert fast is not None and fast.ids == slow.ids == ["S", "B", "G"]
    assert (fast.isolated, fast.excluded) == (slow.isolated, slow.excluded)
    for name in ("positions", "edges", "weights", "heights"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    # Values the typed form does not take go to the generic reading, with its semantics.
    recs[0]["image_id"] = 7
    p.write_text(json.dumps(recs))
    assert _typed(p.read_bytes(), "sq", str(p)) is None
    assert load_connectivity(p).ids == ["7", "B", "G"]


def test_a_cache_file_that_cannot_be_written_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vlneval.graph import distances

    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    write_json(tmp_path / "conn" / "sq_connectivity.json", connectivity(SQUARE, SQUARE_EDGES))

    def full_disk(*args: object) -> list[bytes]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(distances, "_pack", full_disk)
    assert GraphStore(tmp_path / "conn").distances("sq")[0, 2] == 8.0
    assert list((cache_dir() / "graphs").iterdir()) == []


def _deep(path: Path, tail: bytes = b"") -> Path:
    """A connectivity file nested 100,000 levels deep (past msgspec's recursion), or records
    whose extra field ``tail`` is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if tail:
        recs = json.dumps(connectivity(SQUARE, SQUARE_EDGES)).encode()
        path.write_bytes(recs[:-2] + b', "extra": ' + tail + b"}]")
    else:
        path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    return path


@pytest.mark.parametrize("tail", [b"", b"[" * 100_000 + b"]" * 100_000])
def test_a_deeply_nested_connectivity_file_is_one_clear_error(
    tmp_path: Path, tail: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    import MatterSim
    from vlneval.cli.main import main

    root = square_root(tmp_path / "root")
    path = _deep(root / "matterport3d" / "connectivity" / "sq_connectivity.json", tail)
    with pytest.raises(InvalidInputError) as exc:
        GraphStore(path.parent, use_cache=False).graph("sq")
    assert str(exc.value) == f"error: {path}: JSON nested too deeply"
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S", "A"]}))
    argv = ["score", "--task", "r2r", "--split", "val", "--data-root", str(root), "--subset"]
    assert main([*argv, "--predictions", str(p), "--quiet"]) == 2
    assert capsys.readouterr().err == f"error: {path}: JSON nested too deeply\n"
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(path.parent))
    sim.initialize()
    with pytest.raises(ValueError) as err:
        sim.newEpisode(["sq"], ["S"], [0], [0])
    assert str(err.value) == f"MatterSim: error: {path}: JSON nested too deeply"


def test_a_connectivity_file_msgspec_rejects_is_explained_like_every_input(tmp_path: Path) -> None:
    recs = json.dumps(connectivity(SQUARE, SQUARE_EDGES))
    (tmp_path / "nan_connectivity.json").write_text(recs.replace('"pose": [1,', '"pose": [NaN,', 1))
    (tmp_path / "cut_connectivity.json").write_text(recs[:40])
    store = GraphStore(tmp_path, use_cache=False)
    with pytest.raises(InvalidInputError) as exc:
        store.graph("nan")
    assert str(exc.value) == (
        f'error: {tmp_path}/nan_connectivity.json: image_id "S": pose[0]: nan is not a finite '
        "number (a pose holds numbers only)"
    )
    with pytest.raises(InvalidInputError) as exc:
        store.graph("cut")
    assert str(exc.value) == (
        f"error: {tmp_path}/cut_connectivity.json: not valid JSON: Expecting ',' delimiter at "
        "line 1, column 41"
    )


def _far_graph(tmp_path: Path) -> tuple[Path, str]:
    """The square with A at x = 1e308 and B at x = -1e308: edge lengths overflow to inf."""
    recs = connectivity(SQUARE, SQUARE_EDGES)
    recs[1]["pose"][3], recs[2]["pose"][3] = 1e308, -1e308
    path = tmp_path / "far_connectivity.json"
    path.write_text(json.dumps(recs))
    return path, (
        f'error: {path}: image_id "A": pose[3]: 1e+308 is beyond ±1e+06 m (a position '
        f'coordinate, in metres)\nerror: {path}: image_id "B": pose[3]: -1e+308 is beyond '
        "±1e+06 m (a position coordinate, in metres)"
    )


def test_a_huge_finite_coordinate_is_refused_with_viewpoint_and_field(tmp_path: Path) -> None:
    path, expected = _far_graph(tmp_path)
    with pytest.raises(InvalidInputError) as exc:
        GraphStore(tmp_path, use_cache=False).graph("far")
    assert str(exc.value) == expected


def test_a_cached_graph_with_a_huge_coordinate_is_read_again_and_refused(tmp_path: Path) -> None:
    """A table cached before coordinates were bounded is not served."""
    from vlneval.graph import distances as dist
    from vlneval.graph.matterport import NavGraph

    path, expected = _far_graph(tmp_path)
    pos = np.array([[0.0, 0, 0], [1e308, 0, 0]])
    old = NavGraph("far", ["S", "A"], pos, np.array([[0, 1]], np.int32), np.array([np.inf]))
    dist.save_cached(dist.file_key(path.read_bytes(), "far"), old, dist.distance_table(old))
    with pytest.raises(InvalidInputError) as exc:
        GraphStore(tmp_path).graph("far")
    assert str(exc.value) == expected
