"""Reference R2R scorer written the way the field's evaluation scripts are written.

Usage::

    python benchmarks/baseline_networkx.py --graphs DATA/matterport3d/connectivity \
        --episodes bench-out/R2R_bench.json --predictions bench-out/preds_bench.json \
        --out bench-out/baseline_summary.json

It follows the Matterport3DSimulator ``tasks/R2R/eval.py`` (graph loading, all-pairs Dijkstra
with networkx, per-episode Python loops) and the google-research ``r4r`` DTW/CLS definitions,
with the rules of ``spec/metrics.md``: success is ``NE < 3``; SPL uses the shortest start-goal
distance; consecutive repeats of a viewpoint are collapsed before DTW and CLS; consecutive
distinct viewpoints must be graph neighbours. It is an honest baseline: no numpy, no caching,
no deliberate slowness. The DTW table is a Python list of floats (the google script indexes a
numpy matrix element by element, which is slower).

It writes the means ``TL, NE, OSR, SR, SPL, nDTW, sDTW, CLS`` (rates as fractions) and the time
spent in each phase.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import networkx as nx

THRESHOLD = 3.0
Distances = dict[str, dict[str, float]]


def load_nav_graph(path: Path) -> nx.Graph:
    """One scan's graph, built edge by edge as the official ``load_nav_graphs`` does."""

    def distance(a: dict[str, Any], b: dict[str, Any]) -> float:
        pa: list[float] = a["pose"]
        pb: list[float] = b["pose"]
        return ((pa[3] - pb[3]) ** 2 + (pa[7] - pb[7]) ** 2 + (pa[11] - pb[11]) ** 2) ** 0.5

    with gzip.open(path, "rt") as f:
        data = json.load(f)
    graph = nx.Graph()
    for i, item in enumerate(data):
        if not item["included"]:
            continue
        for j, conn in enumerate(item["unobstructed"]):
            if conn and data[j]["included"]:
                if not data[j]["unobstructed"][i]:
                    raise ValueError(f"{path}: graph should be undirected ({i}, {j})")
                graph.add_edge(
                    item["image_id"], data[j]["image_id"], weight=distance(item, data[j])
                )
    return graph


def load_graphs(graphs_dir: Path, scans: set[str]) -> dict[str, nx.Graph]:
    """The graphs of the given scans."""
    return {s: load_nav_graph(graphs_dir / f"{s}_connectivity.json.gz") for s in sorted(scans)}


def all_distances(graphs: dict[str, nx.Graph]) -> dict[str, Distances]:
    """All-pairs shortest path lengths per scan, as the official scorer computes them."""
    return {scan: dict(nx.all_pairs_dijkstra_path_length(g)) for scan, g in graphs.items()}


def collapse(path: list[str]) -> list[str]:
    """Drop consecutive repeats of a viewpoint (turning in place)."""
    out = [path[0]]
    for vp in path[1:]:
        if vp != out[-1]:
            out.append(vp)
    return out


def path_length(path: list[str], dist: Distances) -> float:
    """Sum of the distances between consecutive viewpoints (repeats add 0)."""
    total = 0.0
    for a, b in zip(path[:-1], path[1:], strict=True):
        total += dist[a][b]
    return total


def dtw(reference: list[str], prediction: list[str], dist: Distances) -> float:
    """Exact dynamic time warping cost with geodesic distances."""
    inf = float("inf")
    prev = [0.0] + [inf] * len(prediction)
    for r in reference:
        row = dist[r]
        cur = [inf] * (len(prediction) + 1)
        for j, p in enumerate(prediction, start=1):
            cur[j] = row[p] + min(prev[j], cur[j - 1], prev[j - 1])
        prev = cur
    return prev[-1]


def cls(prediction: list[str], reference: list[str], dist: Distances) -> float:
    """Coverage weighted by Length Score (Jain et al. 2019)."""
    coverage = 0.0
    for r in reference:
        coverage += math.exp(-min(dist[r][p] for p in prediction) / THRESHOLD)
    coverage /= len(reference)
    expected = coverage * path_length(reference, dist)
    denom = expected + abs(expected - path_length(prediction, dist))
    score = 1.0 if denom == 0 else expected / denom
    return coverage * score


def check_adjacent(path: list[str], graph: nx.Graph, instr_id: str) -> None:
    """Reject a jump between non-adjacent viewpoints, as the official scorer does."""
    for a, b in zip(path[:-1], path[1:], strict=True):
        if a != b and not graph.has_edge(a, b):
            raise ValueError(f"{instr_id}: {b} is not a neighbour of {a}")


def score_item(gt: dict[str, Any], path: list[str], dist: Distances) -> dict[str, float]:
    """All metrics of one episode."""
    start, goal = gt["path"][0], gt["path"][-1]
    ne = dist[path[-1]][goal]
    oe = min(dist[vp][goal] for vp in path)
    success = 1.0 if ne < THRESHOLD else 0.0
    tl = path_length(path, dist)
    shortest = dist[start][goal]
    if shortest > 0:
        spl = success * shortest / max(shortest, tl)
    else:
        spl = 1.0 if success and tl == 0 else 0.0
    reference, executed = collapse(gt["path"]), collapse(path)
    ndtw = math.exp(-dtw(reference, executed, dist) / (len(reference) * THRESHOLD))
    return {
        "TL": tl,
        "NE": ne,
        "OSR": 1.0 if oe < THRESHOLD else 0.0,
        "SR": success,
        "SPL": spl,
        "nDTW": ndtw,
        "sDTW": success * ndtw,
        "CLS": cls(executed, reference, dist),
    }


def score(
    episodes: list[dict[str, Any]],
    predictions: list[dict[str, Any]],
    graphs: dict[str, nx.Graph],
    distances: dict[str, Distances],
) -> dict[str, float]:
    """Score every instruction of every episode; return the means."""
    gt = {}
    for item in episodes:
        for k in range(len(item["instructions"])):
            gt[f"{item['path_id']}_{k}"] = item
    scores: dict[str, list[float]] = {}
    seen = set()
    for pred in predictions:
        instr_id = pred["instr_id"]
        if instr_id not in gt or instr_id in seen:
            continue
        seen.add(instr_id)
        item = gt[instr_id]
        path = [step[0] for step in pred["trajectory"]]
        if path[0] != item["path"][0]:
            raise ValueError(f"{instr_id}: trajectory does not start at the start viewpoint")
        check_adjacent(path, graphs[item["scan"]], instr_id)
        for name, value in score_item(item, path, distances[item["scan"]]).items():
            scores.setdefault(name, []).append(value)
    if len(seen) != len(gt):
        raise ValueError(f"{len(gt) - len(seen)} instructions have no prediction")
    return {name: sum(values) / len(values) for name, values in scores.items()}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Load, score and time each phase."""
    phases: dict[str, float] = {}
    t = time.perf_counter()
    with open(args.episodes) as f:
        episodes = json.load(f)
    with open(args.predictions) as f:
        predictions = json.load(f)
    phases["load_json"] = time.perf_counter() - t
    t = time.perf_counter()
    graphs = load_graphs(args.graphs, {item["scan"] for item in episodes})
    phases["load_graphs"] = time.perf_counter() - t
    t = time.perf_counter()
    distances = all_distances(graphs)
    phases["all_pairs_dijkstra"] = time.perf_counter() - t
    t = time.perf_counter()
    metrics = score(episodes, predictions, graphs, distances)
    phases["score"] = time.perf_counter() - t
    return {
        "metrics": metrics,
        "n_episodes": sum(len(e["instructions"]) for e in episodes),
        "phases_s": phases,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", type=Path, required=True, help="connectivity directory")
    p.add_argument("--episodes", type=Path, required=True, help="R2R episodes JSON")
    p.add_argument("--predictions", type=Path, required=True, help="R2R predictions JSON")
    p.add_argument("--out", type=Path, required=True, help="summary JSON to write")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    args = parse_args(argv)
    summary = run(args)
    args.out.write_text(json.dumps(summary, indent=2))
    phases = ", ".join(f"{k} {v:.2f} s" for k, v in summary["phases_s"].items())
    print(f"baseline: {summary['n_episodes']} episodes; {phases}", file=sys.stderr)


if __name__ == "__main__":
    main()
