"""The real NDH predictions (seq2seq, PREVALENT_R2R), scored and checked against an independent
port of the official scorer's logic (``tasks/NDH/eval.py`` of mmurray/cvdn, networkx Dijkstra)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest

from vlneval.evaluation import evaluate
from vlneval.tasks.cvdn.format import load_ndh

PRED = "predictions/ndh/seq2seq_prevalent_r2r/val-seq2seq-all-trusted_path-40-sample-imagenet_{}_iter_100.json.gz"

# Golden values (vlneval, checked against the port below when these tests were written).
GOLDEN = {
    ("val_seen", "planner_path"): {
        "TL": 8.949167,
        "NE": 9.086430,
        "SR": 0.172775,
        "SPL": 0.153257,
        "GP": 0.663645,
    },
    ("val_seen", "trusted_path"): {
        "TL": 8.949167,
        "NE": 10.459741,
        "SR": 0.159686,
        "SPL": 0.144817,
        "GP": 0.663645,
    },
    ("val_unseen", "planner_path"): {
        "TL": 8.930635,
        "NE": 9.298362,
        "SR": 0.167585,
        "SPL": 0.146289,
        "GP": 0.396490,
    },
    ("val_unseen", "trusted_path"): {
        "TL": 8.930635,
        "NE": 11.008166,
        "SR": 0.142227,
        "SPL": 0.125021,
        "GP": 0.396490,
    },
}


def _graph(root: Path, scan: str) -> nx.Graph:
    data = json.loads(
        gzip.decompress(
            (root / f"matterport3d/connectivity/{scan}_connectivity.json.gz").read_bytes()
        )
    )
    g = nx.Graph()
    for item in data:
        if not item["included"]:
            continue
        for j, conn in enumerate(item["unobstructed"]):
            if conn and data[j]["included"]:
                a, b = np.array(item["pose"])[[3, 7, 11]], np.array(data[j]["pose"])[[3, 7, 11]]
                g.add_edge(
                    item["image_id"], data[j]["image_id"], weight=float(np.linalg.norm(a - b))
                )
    return g


def _official(root: Path, split: str, path_type: str) -> dict[str, float]:
    """The official scorer's arithmetic, re-typed for Python 3 (no code shared with vlneval)."""
    gt = {}
    for item in json.loads(gzip.decompress((root / f"cvdn/NDH/{split}.json.gz").read_bytes())):
        if path_type == "trusted_path":
            planner_goal = item["planner_path"][-1]
            item["trusted_path"] = (
                item["player_path"]
                if planner_goal in item["player_path"][1:]
                else item["planner_path"]
            )
        gt[item["inst_idx"]] = item
    dist: dict[str, Any] = {}
    s: dict[str, list[float]] = {k: [] for k in ("nav", "oracle", "plan", "gp", "tl", "sp")}
    for item in json.loads(gzip.decompress((root / PRED.format(split)).read_bytes())):
        g = gt[item["inst_idx"]]
        if g["scan"] not in dist:
            dist[g["scan"]] = dict(nx.all_pairs_dijkstra_path_length(_graph(root, g["scan"])))
        d, path = dist[g["scan"]], [p[0] for p in item["trajectory"]]
        start, goal, final = g[path_type][0], g[path_type][-1], path[-1]
        s["nav"].append(d[final][goal])
        s["oracle"].append(min(d[p][goal] for p in path))
        s["plan"].append(min(d[p][g["planner_path"][-1]] for p in path))
        s["gp"].append(
            min(d[start][e] for e in g["end_panos"]) - min(d[final][e] for e in g["end_panos"])
        )
        s["tl"].append(sum(d[a][b] for a, b in zip(path, path[1:], strict=False)))
        s["sp"].append(d[start][goal])
    spl = [
        (sp / max(tl, sp) if sp > 0 else float(tl == 0)) if ne < 3.0 else 0.0
        for ne, tl, sp in zip(s["nav"], s["tl"], s["sp"], strict=True)
    ]
    return {
        "TL": float(np.mean(s["tl"])), "NE": float(np.mean(s["nav"])),
        "OSR": float(np.mean(np.array(s["oracle"]) < 3.0)), "SR": float(np.mean(np.array(s["nav"]) < 3.0)),
        "SPL": float(np.mean(spl)), "GP": float(np.mean(s["gp"])), "OPSR": float(np.mean(np.array(s["plan"]) < 3.0)),
    }  # fmt: skip


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
@pytest.mark.parametrize("path_type", ["planner_path", "player_path", "trusted_path"])
def test_real_predictions_match_the_official_logic(
    data_root: Path, split: str, path_type: str
) -> None:
    r = evaluate(
        "ndh",
        split,
        data_root / PRED.format(split),
        root=data_root,
        options={"path_type": path_type},
    )
    assert r.n_episodes == {"val_seen": 382, "val_unseen": 907}[split]
    ours, ref = r.metrics, _official(data_root, split, path_type)
    for label, value in ref.items():
        assert ours[label] == pytest.approx(value, abs=1e-9), label
    for label, value in GOLDEN.get((split, path_type), {}).items():
        assert ours[label] == pytest.approx(value, abs=5e-7), label
    assert all(c["holds"] for c in r.to_dict()["checks"])
    assert r.unavailable == {} and int(np.sum(r.per_episode["jumps"])) == 0


def test_real_files_have_native_types(data_root: Path) -> None:
    """SOURCES.md says this copy stores values as strings; it does not (both forms are read)."""
    ndh = load_ndh(data_root / "cvdn/NDH/val_unseen.json.gz", path_type="trusted_path")
    assert not ndh.string_valued and len(ndh) == 907
    assert sum(len(p) == 1 for p in load_ndh(data_root / "cvdn/NDH/val_unseen.json.gz").paths) == 8
