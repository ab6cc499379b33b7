"""Object-task benchmarks: REVERIE box loading and scoring, SOON scoring, object geometry.

Usage::

    python benchmarks/bench_objects.py --data /work/shared/data [--repeat 3] [--full-geometry]

Measures (median wall time of ``--repeat`` runs, in this process):

- reading the v1 BBox files straight from ``BBox.tar.gz`` (10,567 files);
- scoring REVERIE v1 val_unseen (3,521 shortest-path predictions) end to end with ``evaluate``
  (episodes, graphs from the distance cache, boxes, parsing, scoring);
- scoring a synthetic SOON split built on the R2R val_unseen graphs (783 instructions, 3 start
  paths each: the R2R path and the shortest paths from two other viewpoints), end to end;
- centre-only geometry against the released boxes (every 20th file; all with ``--full-geometry``).

No real SOON file is available: the SOON workload is generated, with one centred box at each
start path's goal; its numbers are timings only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

console = Console()


def _time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def _shortest(store: Any, scan: str, start: str, goal: str) -> list[str]:
    g, d = store.graph(scan), store.distances(scan)
    cur, end, out = g.index[start], g.index[goal], [start]
    while cur != end:
        nb = g.neighbours(cur)
        step = np.linalg.norm(g.positions[nb] - g.positions[cur], axis=1)
        cur = int(nb[np.argmin(step + d[nb, end])])
        out.append(g.ids[cur])
    return out


def reverie_files(data: Path, tmp: Path, store: Any) -> Path:
    """Shortest-path predictions with the right object for v1 val_unseen."""
    with gzip.open(data / "reverie" / "REVERIE_val_unseen.json.gz") as fh:
        eps = json.load(fh)
    recs = []
    for r in eps:
        path = _shortest(store, r["scan"], r["path"][0], r["path"][-1])
        traj = [[v, 0.0, 0.0] for v in path]
        recs += [
            {"instr_id": f"{r['id']}_{k}", "trajectory": traj, "predObjId": r["objId"]}
            for k in range(len(r["instructions"]))
        ]
    out = tmp / "reverie_preds.json"
    out.write_text(json.dumps(recs))
    return out


def soon_files(data: Path, tmp: Path, store: Any) -> tuple[Path, Path]:
    """A synthetic SOON split in the official schema on the R2R val_unseen paths."""
    rng = np.random.default_rng(0)
    with gzip.open(data / "r2r" / "R2R_val_unseen.json.gz") as fh:
        r2r = json.load(fh)
    tau = 2 * np.pi
    corners = {"left_top": (0.4, 0.1), "right_top": (0.6, 0.1), "right_bottom": (0.6, -0.1),
               "left_bottom": (0.4, -0.1), "center": (0.5, 0.0)}  # fmt: skip
    target = {k: {"heading": h * tau, "elevation": e * tau} for k, (h, e) in corners.items()}
    episodes, preds = [], []
    for r in r2r:
        g = store.graph(r["scan"])
        goal = r["path"][-1]
        paths = [r["path"]]
        for node in rng.choice(g.n, size=2, replace=False):
            paths.append(_shortest(store, r["scan"], g.ids[int(node)], goal))
        iid = str(r["path_id"])
        episodes.append({
            "instr_id": iid, "scan": r["scan"], "path": paths,
            "bboxes": [{"image_id": goal, "scan": r["scan"], "target": target}],
            "instructions": [["", "", "", "", r["instructions"][0]]],
        })  # fmt: skip
        preds.append({
            "instr_id": iid,
            "trajectory": [{"path": [[v, 0.0, 0.0] for v in p], "obj_heading": [0.5],
                            "obj_elevation": [0.5]} for p in paths],
        })  # fmt: skip
    ep, pr = tmp / "soon" / "bench.json", tmp / "soon_preds.json"
    ep.parent.mkdir(parents=True, exist_ok=True)
    ep.write_text(json.dumps(episodes))
    pr.write_text(json.dumps(preds))
    return ep, pr


def geometry(data: Path, store: Any, boxes: Any, step: int) -> Any:
    """Centre-only agreement with the released boxes on every ``step``-th file."""
    from vlneval.graph.objects import agreement

    with gzip.open(data / "reverie" / "data_v2" / "objpos.json.gz") as fh:
        centres = json.load(fh)
    recs = []
    for scan, vp in sorted(boxes.by_viewpoint)[::step]:
        g = store.graph(scan)
        if vp not in g.index:
            continue
        for oid, o in boxes.objects(scan, vp).items():
            if oid in centres.get(scan, {}):
                recs.append((g.positions[g.index[vp]], centres[scan][oid], o.views, o.boxes))
    return agreement(recs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--full-geometry", action="store_true")
    args = ap.parse_args(argv)
    from vlneval.evaluation import evaluate
    from vlneval.graph.store import GraphStore
    from vlneval.tasks.reverie.boxes import load_boxes

    store = GraphStore(args.data / "matterport3d" / "connectivity")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        t, boxes = _time(lambda: load_boxes(args.data / "reverie" / "BBox.tar.gz"), args.repeat)
        rows.append(
            ("load BBox.tar.gz (10,567 files)", t, f"{boxes.describe()['objects']} objects")
        )
        preds = reverie_files(args.data, tmp, store)
        t, r = _time(
            lambda: evaluate(
                "reverie", "val_unseen", preds, root=args.data, options={"data_version": "v1"}
            ),  # fmt: skip
            args.repeat,
        )
        rows.append(("score REVERIE v1 val_unseen (3,521)", t, f"SR {r.metrics['SR']:.3f}"))
        ep, pr = soon_files(args.data, tmp, store)
        graphs = args.data / "matterport3d" / "connectivity"
        t, s = _time(
            lambda: evaluate("soon", "bench", pr, episodes_file=ep, graphs=graphs), args.repeat
        )
        rows.append((f"score SOON synthetic ({s.n_episodes:,} episodes)", t,
                     f"det_SR {s.metrics['det_SR']:.3f}"))  # fmt: skip
        step = 1 if args.full_geometry else 20
        t, a = _time(lambda: geometry(args.data, store, boxes, step), 1)
        rows.append((f"geometry agreement ({a.objects:,} objects)", t,
                     f"centre in box {a.centre_in_box:.3f}, views P {a.view_precision:.3f} "
                     f"R {a.view_recall:.3f}"))  # fmt: skip
    table = Table(title="object-task benchmarks (median wall time)")
    for col in ("step", "seconds", "check"):
        table.add_column(col)
    for name, t, note in rows:
        table.add_row(name, f"{t:.2f}", note)
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
