"""Microbenchmark of the batch metric kernel ``vlneval.metrics.batch.score_batch``.

Run by ``benchmarks/run.py`` in a child process; prints one JSON object on stdout.

The inputs are built here, independently of vlneval's loaders: distance tables with scipy's
Dijkstra on the connectivity graphs (as ``workload.py`` builds them), episodes packed in the
kernel's CSR layout in prediction order, the goal set = the reference's last viewpoint. Only
``score_batch`` is timed: one untimed first call (numba compilation or cache load), then the
best of ``--repeat`` calls, with and without the input validation. The per-column means are
returned so that ``run.py`` can compare them with the baseline.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workload  # noqa: E402  (a sibling script, not a package)

SRC = Path(__file__).resolve().parent.parent / "src"
#: Kernel column -> summary label.
LABEL_OF = {
    "path_length": "TL",
    "nav_error": "NE",
    "oracle_success": "OSR",
    "success": "SR",
    "spl": "SPL",
    "ndtw": "nDTW",
    "sdtw": "sDTW",
    "cls": "CLS",
}


def load_batch_module() -> Any:
    """``vlneval.metrics.batch``, from the installed package or the repo's src/; else None."""
    for attempt in range(2):
        try:
            return importlib.import_module("vlneval.metrics.batch")
        except ModuleNotFoundError:
            if attempt == 0:
                sys.path.insert(0, str(SRC))
    return None


def offsets(lengths: list[int]) -> np.ndarray:
    """CSR offsets ``[0, l0, l0 + l1, ...]``."""
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


def build_inputs(args: argparse.Namespace) -> tuple[tuple[np.ndarray, ...], int]:
    """The ten positional arrays of ``score_batch`` for the workload, and the episode count."""
    episodes = {e["path_id"]: e for e in orjson.loads(args.episodes.read_bytes())}
    predictions = orjson.loads(args.predictions.read_bytes())
    scans = sorted({e["scan"] for e in episodes.values()})
    graphs = [workload.read_scan(args.graphs / f"{s}_connectivity.json.gz") for s in scans]
    scan_no = {g.scan: k for k, g in enumerate(graphs)}
    index = [{vp: i for i, vp in enumerate(g.ids)} for g in graphs]
    sizes = np.array([len(g.ids) for g in graphs], dtype=np.int64)
    scan_index, traj, traj_len, ref, ref_len, goals = [], [], [], [], [], []
    for p in predictions:
        ep = episodes[int(p["instr_id"].rsplit("_", 1)[0])]
        s = scan_no[ep["scan"]]
        ids = index[s]
        scan_index.append(s)
        traj += [ids[step[0]] for step in p["trajectory"]]
        traj_len.append(len(p["trajectory"]))
        ref += [ids[vp] for vp in ep["path"]]
        ref_len.append(len(ep["path"]))
        goals.append(ids[ep["path"][-1]])
    arrays = (
        np.concatenate([g.dist.ravel() for g in graphs]),
        offsets([n * n for n in sizes.tolist()])[:-1],
        sizes,
        np.array(scan_index, dtype=np.int32),
        np.array(traj, dtype=np.int32),
        offsets(traj_len),
        np.array(ref, dtype=np.int32),
        offsets(ref_len),
        np.array(goals, dtype=np.int32),
        offsets([1] * len(goals)),
    )
    return arrays, len(predictions)


def best_time(fn: Any, repeat: int) -> float:
    """Fastest of ``repeat`` calls of ``fn()``, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def time_kernel(module: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Build the inputs and time ``score_batch``."""
    t = time.perf_counter()
    arrays, n = build_inputs(args)
    prepare = time.perf_counter() - t
    t = time.perf_counter()
    out = module.score_batch(*arrays, threads=1)  # per core, as the issue asks
    first = time.perf_counter() - t
    checked = best_time(lambda: module.score_batch(*arrays, threads=1), args.repeat)
    unchecked = best_time(
        lambda: module.score_batch(*arrays, validate=False, threads=1), args.repeat
    )
    return {
        "status": "ok",
        "episodes": n,
        "repeat": args.repeat,
        "prepare_s": prepare,
        "first_call_s": first,
        "best_s": unchecked,
        "episodes_per_s": n / unchecked if unchecked > 0 else None,
        "best_validated_s": checked,
        "episodes_per_s_validated": n / checked if checked > 0 else None,
        "means": {label: float(np.mean(out[col])) for col, label in LABEL_OF.items()},
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The result object for whatever state the library is in."""
    module = load_batch_module()
    if module is None or not hasattr(module, "score_batch"):
        return {"status": "skipped", "detail": "vlneval.metrics.batch.score_batch does not exist"}
    return time_kernel(module, args)


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", type=Path, required=True)
    p.add_argument("--episodes", type=Path, required=True)
    p.add_argument("--predictions", type=Path, required=True)
    p.add_argument("--repeat", type=int, default=10)
    print(json.dumps(run(p.parse_args(argv))))


if __name__ == "__main__":
    main()
