"""Generate a large R2R-format scoring workload on the real Matterport3D graphs.

Usage::

    python benchmarks/workload.py --data /work/shared/data --out bench-out \
        --episodes 200000 --seed 0

Writes ``OUT/R2R_bench.json`` (R2R episodes: ``path_id, scan, path, heading, instructions,
distance``) and ``OUT/preds_bench.json`` (R2R predictions ``{instr_id, trajectory}``). The
connectivity graphs are read from the data directory, never copied.

Episodes: scans drawn across all scans weighted by node count (the one scan of the 90 whose
8 nodes are never 4 hops apart gets none); a uniform random start among the nodes that have a
goal 4-7 hops away; a uniform random goal among those; ``path`` is the shortest metric path
(its hop count is what "4-7 hops" measures). Predictions: a random walk of 2-12
moves along graph edges from the start; each move goes one step toward the goal with probability
``--goal-bias`` (so that a realistic share of episodes succeed) and to a uniform random
neighbour otherwise; a turn in place (the same viewpoint again with another heading) follows a
move with probability ``--repeat-prob``.

This module deliberately does not import ``vlneval``: the benchmark must not depend on the code
it measures.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import hashlib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

MIN_HOPS, MAX_HOPS = 4, 7
MIN_MOVES, MAX_MOVES = 2, 12
EPISODES_FILE = "R2R_bench.json"
PREDICTIONS_FILE = "preds_bench.json"
META_FILE = "workload_meta.json"
WORDS = ("Walk", "Go", "Head", "Move", "Turn and walk")
PLACES = ("the hallway", "the kitchen", "the stairs", "the bedroom door", "the sofa", "the table")


@dataclass
class ScanGraph:
    """One scan's evaluation graph with everything the generator needs.

    Attributes:
        scan: scan id.
        ids: viewpoint ids of the nodes (included viewpoints with at least one edge).
        xy: horizontal positions ``(x, y)`` per node (headings only need these).
        neighbours: adjacency lists (node indices).
        dist: ``(n, n)`` geodesic distances in metres.
        next_hop: ``next_hop[g][u]`` is ``u``'s next node on the shortest path toward ``g``
            (the Dijkstra predecessor matrix as nested lists, for fast scalar access).
        hops: ``(n, n)`` edge counts of the shortest metric paths.
    """

    scan: str
    ids: list[str]
    xy: list[tuple[float, float]]
    neighbours: list[list[int]]
    dist: np.ndarray
    next_hop: list[list[int]]
    hops: np.ndarray


def generator_sha256() -> str:
    """Hash of this file: a workload made by other code is stale."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def workload_meta(args: argparse.Namespace) -> dict[str, Any]:
    """What determines the workload's contents (written beside it, compared before reuse)."""
    return {
        "episodes": args.episodes,
        "seed": args.seed,
        "goal_bias": args.goal_bias,
        "repeat_prob": args.repeat_prob,
        "generator_sha256": generator_sha256(),
    }


def connectivity_dir(data: Path) -> Path:
    """The Matterport3D connectivity directory under a data root."""
    return data / "matterport3d" / "connectivity"


def read_scan(path: Path) -> ScanGraph:
    """Read one ``<scan>_connectivity.json.gz`` and build its graph and distance tables."""
    records: list[dict[str, Any]] = orjson.loads(gzip.decompress(path.read_bytes()))
    incl = np.array([r["included"] for r in records], dtype=bool)
    unob = np.array([r["unobstructed"] for r in records], dtype=bool)
    adj = unob & incl[:, None] & incl[None, :]
    np.fill_diagonal(adj, False)
    keep = np.flatnonzero(adj.any(axis=1))
    adj = adj[np.ix_(keep, keep)]
    pose = np.array([records[k]["pose"] for k in keep], dtype=np.float64)
    pos = pose[:, [3, 7, 11]]
    ii, jj = np.nonzero(adj)
    w = np.linalg.norm(pos[ii] - pos[jj], axis=1)
    dist, pred = dijkstra(csr_matrix((w, (ii, jj)), shape=adj.shape), return_predecessors=True)
    return ScanGraph(
        scan=path.name.split("_")[0],
        ids=[records[k]["image_id"] for k in keep],
        xy=[(float(x), float(y)) for x, y in pos[:, :2]],
        neighbours=[np.flatnonzero(row).tolist() for row in adj],
        dist=dist,
        next_hop=pred.tolist(),
        hops=hop_counts(pred, dist),
    )


def hop_counts(pred: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Edge counts of the shortest paths encoded by a Dijkstra predecessor matrix.

    ``pred[s, v]`` is the node before ``v`` on the path from ``s``. A node's predecessor is
    strictly nearer the source, so visiting nodes by increasing distance fills the table in one
    pass per rank. Unreachable pairs get -1.
    """
    n = pred.shape[0]
    rows = np.arange(n)
    hops = np.full((n, n), -1, dtype=np.int64)
    hops[rows, rows] = 0
    order = np.argsort(dist, axis=1, kind="stable")
    for rank in range(1, n):
        v = order[:, rank]
        p = pred[rows, v]
        reach = p >= 0
        hops[rows[reach], v[reach]] = hops[rows[reach], p[reach]] + 1
    return hops


def load_graphs(data: Path) -> list[ScanGraph]:
    """All scans of the data's connectivity directory, in scan-name order."""
    files = sorted(connectivity_dir(data).glob("*_connectivity.json.gz"))
    if not files:
        raise SystemExit(f"error: no *_connectivity.json.gz under {connectivity_dir(data)}")
    return [read_scan(f) for f in files]


def shortest_path(g: ScanGraph, start: int, goal: int) -> list[int]:
    """Node indices of the shortest metric path ``start -> goal``."""
    path = [start]
    while path[-1] != goal:
        path.append(g.next_hop[goal][path[-1]])
    return path


def heading_to(g: ScanGraph, u: int, v: int) -> float:
    """Simulator heading (clockwise from +y, in [0, 2*pi)) of the direction ``u -> v``."""
    (ux, uy), (vx, vy) = g.xy[u], g.xy[v]
    return math.atan2(vx - ux, vy - uy) % (2 * math.pi)


def random_walk(
    g: ScanGraph, start: int, goal: int, draws: list[list[float]], bias: float, repeat: float
) -> list[list[Any]]:
    """An R2R trajectory ``[[vp, heading, elevation], ...]``, some moves with a turn in place.

    One move per row of ``draws`` (uniform numbers: step toward the goal?, turn in place?,
    which neighbour / how far to turn); the first row only gives the initial heading.
    """
    heading = draws[0][0] * 2 * math.pi
    traj: list[list[Any]] = [[g.ids[start], round(heading, 6), 0.0]]
    cur = start
    for toward, turn, pick in draws[1:]:
        if toward < bias and cur != goal:
            nxt = g.next_hop[goal][cur]
        else:
            nbrs = g.neighbours[cur]
            nxt = nbrs[int(pick * len(nbrs))]
        heading = heading_to(g, cur, nxt)
        traj.append([g.ids[nxt], round(heading, 6), 0.0])
        cur = nxt
        if turn < repeat:
            heading = (heading + math.pi / 6 * (1 + int(pick * 11))) % (2 * math.pi)
            traj.append([g.ids[cur], round(heading, 6), 0.0])
    return traj


def instruction(u: float, v: float, n_hops: int) -> str:
    """A short synthetic instruction chosen by two uniform numbers."""
    verb, place = WORDS[int(u * len(WORDS))], PLACES[int(v * len(PLACES))]
    return f"{verb} past {place}, go {n_hops} steps ahead and stop."


def has_goal_pairs(g: ScanGraph) -> bool:
    """Whether some pair of nodes is 4-7 hops apart (one tiny scan has none)."""
    return bool(((g.hops >= MIN_HOPS) & (g.hops <= MAX_HOPS)).any())


def scan_quota(graphs: list[ScanGraph], n: int, rng: np.random.Generator) -> np.ndarray:
    """Number of episodes per scan, multinomial with probabilities proportional to node count.

    Scans without any pair 4-7 hops apart get weight 0.
    """
    sizes = np.array([len(g.ids) * has_goal_pairs(g) for g in graphs], dtype=np.float64)
    return rng.multinomial(n, sizes / sizes.sum())


def scan_episodes(
    g: ScanGraph, count: int, first_id: int, rng: np.random.Generator, args: argparse.Namespace
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``count`` episodes and their predictions in one scan, path ids from ``first_id``."""
    ok = (g.hops >= MIN_HOPS) & (g.hops <= MAX_HOPS)
    starts = np.flatnonzero(ok.any(axis=1))
    goal_lists = {int(s): np.flatnonzero(ok[s]).tolist() for s in starts}
    # All of the scan's random numbers at once: scalar draws from a Generator are slow.
    chosen = rng.choice(starts, size=count).tolist()
    u = rng.random((count, 4)).tolist()
    moves = rng.integers(MIN_MOVES, MAX_MOVES + 1, size=count).tolist()
    walks = rng.random((count, MAX_MOVES + 1, 3)).tolist()
    episodes: list[dict[str, Any]] = []
    preds: list[dict[str, Any]] = []
    for k, start in enumerate(chosen):
        goals = goal_lists[start]
        goal = goals[int(u[k][0] * len(goals))]
        path = shortest_path(g, start, goal)
        pid = first_id + k
        episodes.append(
            {
                "path_id": pid,
                "scan": g.scan,
                "path": [g.ids[i] for i in path],
                "heading": round(u[k][1] * 2 * math.pi, 3),
                "instructions": [instruction(u[k][2], u[k][3], len(path) - 1)],
                "distance": round(float(g.dist[start, goal]), 2),
            }
        )
        draws = walks[k][: moves[k] + 1]
        traj = random_walk(g, start, goal, draws, args.goal_bias, args.repeat_prob)
        preds.append({"instr_id": f"{pid}_0", "trajectory": traj})
    return episodes, preds


def generate(args: argparse.Namespace) -> dict[str, Any]:
    """Build the workload and write both files; return a small report."""
    # Millions of small lists and dicts, no reference cycles: the cyclic GC would only rescan
    # them over and over (it took half the run time).
    gc.disable()
    try:
        return build_and_write(args)
    finally:
        gc.enable()


def build_and_write(args: argparse.Namespace) -> dict[str, Any]:
    """Generate episodes and predictions, write them, and time it."""
    t0 = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    graphs = load_graphs(args.data)
    t_graphs = time.perf_counter() - t0
    episodes: list[dict[str, Any]] = []
    preds: list[dict[str, Any]] = []
    for g, count in zip(graphs, scan_quota(graphs, args.episodes, rng), strict=True):
        eps, prs = scan_episodes(g, int(count), len(episodes), rng, args)
        episodes += eps
        preds += prs
    # Neither file is grouped by scan, and predictions come in another order than episodes.
    ep_order, pred_order = rng.permutation(len(episodes)), rng.permutation(len(preds))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / EPISODES_FILE).write_bytes(orjson.dumps([episodes[i] for i in ep_order]))
    (args.out / PREDICTIONS_FILE).write_bytes(orjson.dumps([preds[i] for i in pred_order]))
    (args.out / META_FILE).write_bytes(orjson.dumps(workload_meta(args)))
    return {
        "episodes": len(episodes),
        "scans": len({e["scan"] for e in episodes}),
        "graph_seconds": round(t_graphs, 2),
        "total_seconds": round(time.perf_counter() - t0, 2),
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="data root (holds matterport3d/)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--episodes", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--goal-bias",
        type=float,
        default=0.5,
        help="probability that a move steps toward the goal (default 0.5)",
    )
    p.add_argument(
        "--repeat-prob",
        type=float,
        default=0.15,
        help="probability of a turn in place after a move (default 0.15)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    args = parse_args(argv)
    report = generate(args)
    print(
        f"wrote {report['episodes']} episodes over {report['scans']} scans to {args.out} "
        f"in {report['total_seconds']} s (graphs {report['graph_seconds']} s)"
    )


if __name__ == "__main__":
    main()
