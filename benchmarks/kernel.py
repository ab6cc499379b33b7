"""Microbenchmark of the batch metric kernel ``vlneval.metrics.batch.score_batch``.

Run by ``benchmarks/run.py`` in a child process; prints one JSON object on stdout.

Contract with the library (the kernel's signature is the library's business, so the library
builds its own inputs): ``vlneval.metrics.batch`` exposes

    bench_inputs(episodes: Path, predictions: Path, graphs: Path) -> tuple[tuple, dict]

returning the positional and keyword arguments of ``score_batch`` for the workload (parsed and
validated arrays, distance tables). Only ``score_batch`` itself is timed: one untimed warm-up
call (JIT compilation), then the best of ``--repeat`` calls.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import orjson

SRC = Path(__file__).resolve().parent.parent / "src"


def load_batch_module() -> Any:
    """``vlneval.metrics.batch``, from the installed package or the repo's src/; else None."""
    try:
        return importlib.import_module("vlneval.metrics.batch")
    except ModuleNotFoundError:
        pass
    sys.path.insert(0, str(SRC))
    try:
        return importlib.import_module("vlneval.metrics.batch")
    except ModuleNotFoundError:
        return None


def time_kernel(module: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Build the inputs with the library's helper and time ``score_batch``."""
    t = time.perf_counter()
    pos, kw = module.bench_inputs(args.episodes, args.predictions, args.graphs)
    prepare = time.perf_counter() - t
    n = len(orjson.loads(args.predictions.read_bytes()))
    t = time.perf_counter()
    module.score_batch(*pos, **kw)
    first = time.perf_counter() - t
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        module.score_batch(*pos, **kw)
        times.append(time.perf_counter() - t)
    best = min(times)
    return {
        "status": "ok",
        "episodes": n,
        "prepare_s": prepare,
        "first_call_s": first,
        "best_s": best,
        "episodes_per_s": n / best if best > 0 else None,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The result object for whatever state the library is in."""
    module = load_batch_module()
    if module is None or not hasattr(module, "score_batch"):
        return {"status": "skipped", "detail": "vlneval.metrics.batch.score_batch does not exist"}
    if not hasattr(module, "bench_inputs"):
        return {
            "status": "skipped",
            "detail": "score_batch exists but vlneval.metrics.batch.bench_inputs"
            "(episodes, predictions, graphs) -> (args, kwargs) does not",
        }
    return time_kernel(module, args)


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", type=Path, required=True)
    p.add_argument("--episodes", type=Path, required=True)
    p.add_argument("--predictions", type=Path, required=True)
    p.add_argument("--repeat", type=int, default=5)
    print(json.dumps(run(p.parse_args(argv))))


if __name__ == "__main__":
    main()
