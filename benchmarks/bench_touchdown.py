"""Touchdown scoring: time and memory for the 800 dev routes and 100,000 synthetic routes.

Usage::

    python benchmarks/bench_touchdown.py --data /work/shared/data            # 100,000 routes
    python benchmarks/bench_touchdown.py --data /work/shared/data --routes 20000

Workloads (all on the real 29,641-panorama street graph, seeded with ``--seed``):

- ``dev-ref``: the 800 unseen-split dev routes, predictions = the reference routes;
- ``dev-walk``: the same routes, predictions = agent-like random walks from each start (no
  immediate U-turns, the route's length), so SPD queries are far from trivial;
- ``dev-sdr``: the 2,237 SDR examples of the dev routes, predictions jittered by N(0, 60 px);
- ``synth-walk``: ``--routes`` synthetic routes (random walks with the dev length distribution)
  and random-walk predictions, written as a Touchdown JSON-lines split.

Each scenario is scored by ``vlneval.evaluation.evaluate`` in a child process (as ``vlneval
score`` does: read the graph, the routes and the predictions, check, score, summarise); wall
time, CPU time and peak RSS (``os.wait4``) are of that child alone. One discarded warm-up run
fills numba's on-disk cache first; the best of ``--repeat`` runs is reported. An in-process
breakdown (graph load, parse, hops, SED) of the synthetic workload follows. Results go to
``<out>/results.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

console = Console(width=150)
DEV = "touchdown/touchdown_unseen_split/dev.json.gz"
CHILD = """
import json, sys
from vlneval.evaluation import evaluate
task, episodes, preds, graphs, profile = sys.argv[1:6]
r = evaluate(task, "dev", preds, profile=profile, episodes_file=episodes, graphs=graphs)
print(json.dumps({"metrics": r.to_dict()["metrics"], "n": r.n_episodes}))
"""


def random_walks(
    indptr: np.ndarray,
    indices: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    rng: np.random.Generator,
) -> list[list[int]]:
    """Walks of ``lengths[k]`` panoramas from ``starts[k]``, avoiding immediate U-turns."""
    n = len(starts)
    walks = np.full((n, int(lengths.max())), -1, dtype=np.int64)
    walks[:, 0] = starts
    prev = np.full(n, -1)
    for step in range(1, walks.shape[1]):
        cur = walks[:, step - 1]
        deg = indptr[cur + 1] - indptr[cur]
        pick = indices[indptr[cur] + (rng.random(n) * deg).astype(np.int64)]
        again = indices[indptr[cur] + (rng.random(n) * deg).astype(np.int64)]
        pick = np.where((pick == prev) & (deg > 1), again, pick)  # one retry against U-turns
        prev = cur
        walks[:, step] = pick
    return [walks[k, : lengths[k]].tolist() for k in range(n)]


def measure(name: str, args: list[str], log: Path) -> dict[str, Any]:
    """Runs the scoring child once; wall, CPU and peak RSS of that child alone.

    ``posix_spawn`` (vfork-like on Linux) keeps the parent's pages out of the child's peak RSS,
    which a plain fork would count; ``os.wait4`` returns the rusage of exactly this child.
    """
    out = log.with_suffix(".out")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    actions = [
        (os.POSIX_SPAWN_OPEN, 1, str(out), flags, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, str(log), flags, 0o644),
    ]
    t0 = time.perf_counter()
    pid = os.posix_spawn(
        sys.executable, [sys.executable, "-c", CHILD, *args], dict(os.environ), file_actions=actions
    )
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{name} failed:\n{log.read_text()[-2000:]}")
    result = json.loads(out.read_text())
    return {
        "name": name,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "n": result["n"],
        "metrics": result["metrics"],
    }


def best_of(name: str, args: list[str], log: Path, repeat: int) -> dict[str, Any]:
    """A warm-up run (numba cache), then the fastest of ``repeat`` runs (max RSS over all)."""
    measure(name, args, log)
    runs = [measure(name, args, log) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["wall_s"])
    best["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
    best["wall_s_all"] = [round(r["wall_s"], 3) for r in runs]
    return best


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def workloads(data: Path, out: Path, n_routes: int, seed: int) -> dict[str, tuple[str, Path, Path]]:
    """Writes every scenario's episodes and predictions; returns {name: (task, episodes, preds)}."""
    from vlneval.graph.street import street_graph

    rng = np.random.default_rng(seed)
    g = street_graph(data / "touchdown" / "graph")
    with gzip.open(data / DEV, "rt") as fh:
        routes = [json.loads(line) for line in fh]
    dev = data / DEV
    lengths = np.array([len(r["route_panoids"]) for r in routes])
    starts = np.array([g.index[r["route_panoids"][0]] for r in routes])
    walks = random_walks(g.indptr, g.indices, starts, lengths, rng)
    ref = [{"route_id": r["route_id"], "trajectory": r["route_panoids"]} for r in routes]
    walk = [
        {"route_id": r["route_id"], "trajectory": [g.ids[v] for v in w]}
        for r, w in zip(routes, walks, strict=True)
    ]
    sdr = []
    for r in routes:
        for kind in ("main", "pre", "post"):
            c = json.loads(r[f"{kind}_static_center"])
            if c != {"x": -1, "y": -1}:
                x, y = np.clip(
                    np.array([c["x"] * 3680, c["y"] * 800]) + rng.normal(0, 60, 2), 0, [3680, 800]
                )
                sdr.append({"route_id": r["route_id"], "pano": kind, "x": float(x), "y": float(y)})
    # Synthetic routes: random walks from random panoramas with the dev length distribution.
    syn_len = rng.choice(lengths, n_routes)
    syn_start = rng.integers(0, g.n, n_routes)
    syn_routes = random_walks(g.indptr, g.indices, syn_start, syn_len, rng)
    syn_preds = random_walks(g.indptr, g.indices, syn_start, rng.choice(lengths, n_routes), rng)
    episodes = [
        {
            "route_id": k,
            "route_panoids": [g.ids[v] for v in w],
            "start_heading": 0.0,
            "navigation_text": "synthetic",
        }
        for k, w in enumerate(syn_routes)
    ]
    preds = [{"route_id": k, "trajectory": [g.ids[v] for v in w]} for k, w in enumerate(syn_preds)]
    return {
        "dev-ref": ("touchdown", dev, write_jsonl(out / "dev_ref.jsonl", ref)),
        "dev-walk": ("touchdown", dev, write_jsonl(out / "dev_walk.jsonl", walk)),
        "dev-sdr": ("touchdown-sdr", dev, write_jsonl(out / "dev_sdr.jsonl", sdr)),
        "synth-walk": (
            "touchdown",
            write_jsonl(out / "synth_routes.jsonl", episodes),
            write_jsonl(out / "synth_walk.jsonl", preds),
        ),
    }


def breakdown(data: Path, episodes: Path, preds: Path) -> dict[str, float]:
    """In-process stage timings of the synthetic scenario (after a warm-up of the kernels)."""
    from vlneval.graph.street import load_street_graph
    from vlneval.metrics.edit import sed_batch
    from vlneval.tasks.touchdown.format import load_touchdown_routes, parse_touchdown_predictions

    t = {}
    t0 = time.perf_counter()
    g = load_street_graph(data / "touchdown" / "graph")
    t["graph_load_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    routes = load_touchdown_routes(episodes)
    t["routes_load_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    p = parse_touchdown_predictions(preds, routes.table, g)
    t["predictions_parse_s"] = time.perf_counter() - t0
    final = p.nodes[p.offsets[1:] - 1]
    goal = np.array([g.index[routes.table.paths[i][-1]] for i in p.episodes])
    g.hops(final[:10], goal[:10])
    t0 = time.perf_counter()
    spd = g.hops(final, goal)
    t["spd_bfs_s"] = time.perf_counter() - t0
    t["spd_mean_hops"] = float(spd[np.isfinite(spd)].mean())
    ref = np.array([g.index[v] for i in p.episodes for v in routes.table.paths[i]])
    ref_off = np.concatenate([[0], np.cumsum([len(routes.table.paths[i]) for i in p.episodes])])
    t0 = time.perf_counter()
    sed_batch(p.nodes, p.offsets, ref, ref_off, (spd <= 1).astype(float))
    t["sed_s"] = time.perf_counter() - t0
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="the shared data root")
    ap.add_argument(
        "--routes", type=int, default=100_000, help="synthetic routes (default 100,000)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("bench-out/touchdown"))
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = args.out / "workloads.json"
    if args.generate_only:
        scenarios = workloads(args.data, args.out, args.routes, args.seed)
        body = {k: [t, str(e), str(p)] for k, (t, e, p) in scenarios.items()}
        manifest.write_text(json.dumps(body))
        return
    console.print(f"writing workloads ({args.routes:,} routes, seed {args.seed}) to {args.out}")
    # In a child, so that this process stays small while it spawns the measured children.
    subprocess.run([sys.executable, __file__, *sys.argv[1:], "--generate-only"], check=True)
    saved = json.loads(manifest.read_text())
    scenarios = {k: (t, Path(e), Path(p)) for k, (t, e, p) in saved.items()}
    graphs = str(args.data / "touchdown" / "graph")
    results = []
    for name, (task, episodes, preds) in scenarios.items():
        console.print(f"scoring {name} ...")
        child = [task, str(episodes), str(preds), graphs, "touchdown"]
        results.append(best_of(name, child, args.out / f"{name}.log", args.repeat))
    stages = breakdown(args.data, scenarios["synth-walk"][1], scenarios["synth-walk"][2])
    table = Table(title="Touchdown scoring (child process per run, best of repeats)")
    for col in ("scenario", "items", "wall s", "CPU s", "items/s", "peak RSS MiB", "metrics"):
        table.add_column(col, justify="right" if col not in ("scenario", "metrics") else "left")
    for r in results:
        metrics = ", ".join(f"{k} {v:.4g}" for k, v in r["metrics"].items())
        table.add_row(
            r["name"],
            f"{r['n']:,}",
            f"{r['wall_s']:.2f}",
            f"{r['cpu_s']:.2f}",
            f"{r['n'] / r['wall_s']:,.0f}",
            f"{r['peak_rss_mib']:.0f}",
            metrics,
        )
    console.print(table)
    console.print(
        "synthetic stages (in process): " + ", ".join(f"{k} {v:.3f}" for k, v in stages.items())
    )
    from vlneval.io import atomic_write_text

    report = {
        "routes": args.routes,
        "seed": args.seed,
        "results": results,
        "synthetic_stages": stages,
    }
    atomic_write_text(args.out / "results.json", json.dumps(report, indent=2))
    console.print(f"results: {args.out / 'results.json'}")


if __name__ == "__main__":
    main()
