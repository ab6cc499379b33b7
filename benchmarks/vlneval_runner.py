"""Times vlneval's in-process scoring (a child process of ``bench_official.py``).

Usage::

    python benchmarks/vlneval_runner.py --root DATA --split val_unseen --predictions P \
        --repeat 7 --json OUT
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _times(call: Callable[[], Any], repeat: int) -> tuple[list[float], list[float], Any]:
    """Wall and CPU (all threads) times of ``repeat`` calls after an untimed first call (lazy
    imports, kernels loaded from their cache), and the last call's result."""
    call()
    times, cpu, result = [], [], None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        result = call()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times, cpu, result


def vlneval_in_process(
    task: str, split: str, predictions: Path, *, root: Path, repeat: int
) -> dict[str, Any]:
    """Set-up once, then ``repeat`` timed scorings of the same predictions.

    With ``vlneval.Scorer`` (issue 11) the split and graphs load once and ``Scorer.score`` gets
    the records already in memory. Until it exists the fallback times ``vlneval.evaluate`` on
    the file, which loads the split and the graphs in every call (the output says which ran).
    """
    import vlneval

    t0 = time.perf_counter()
    if hasattr(vlneval, "Scorer"):
        scorer = vlneval.Scorer(task, split, root=root)
        records = json.loads(predictions.read_bytes())
        setup = time.perf_counter() - t0
        times, cpu, result = _times(lambda: scorer.score(records), repeat)
        api = "Scorer.score(records)"
    else:
        setup = time.perf_counter() - t0
        times, cpu, result = _times(
            lambda: vlneval.evaluate(task, split, predictions, root=root), repeat
        )
        api = "evaluate(task, split, file) [fallback: no Scorer; loads split+graphs per call]"
    summary = result.summary if hasattr(result, "summary") else result.to_dict()
    return {
        "api": api,
        "setup_s": setup,
        "score_s": times,
        "score_cpu_s": cpu,
        "summary": summary["metrics"],
    }


def main(argv: list[str] | None = None) -> int:
    """Runs :func:`vlneval_in_process` and writes its result as JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--task", default="r2r")
    p.add_argument("--split", default="val_unseen")
    p.add_argument("--root", type=Path, required=True)
    p.add_argument("--predictions", type=Path, required=True)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--json", type=Path, required=True)
    args = p.parse_args(argv)
    result = vlneval_in_process(
        args.task, args.split, args.predictions, root=args.root, repeat=args.repeat
    )
    args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
