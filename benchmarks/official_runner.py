"""Runs the official R2R scorer (Matterport3DSimulator ``tasks/R2R/eval.py``) as published.

Usage (``bench_official.py`` calls it; it is a script, not part of the package)::

    python benchmarks/official_runner.py --official CHECKOUT --root LAYOUT --split val_unseen \
        --predictions preds.json [--time-score N --json OUT]

``CHECKOUT`` is a clone of the public Matterport3DSimulator repository; nothing of it is copied.
``LAYOUT`` is the folder the script expects as its working directory (it opens
``tasks/R2R/data/R2R_<split>.json`` and ``connectivity/<scan>_connectivity.json`` relative to it).

The script imports ``env`` (the simulator batch, which needs the compiled MatterSim module) and
``agent`` (the baseline agents); scoring uses neither, so both are replaced by stub modules in
``sys.modules`` before the import. Everything else runs unchanged: ``Evaluation([split])`` builds
its networkx graphs and all-pairs Dijkstra tables, ``score(file)`` reads and scores the file, and
the summary is pretty-printed with the script's own printer, as its ``eval_seq2seq()`` does.

With ``--time-score N`` the set-up runs once and ``score(file)`` is timed ``N`` times; the times
and the summary go to ``--json OUT``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import types
from pathlib import Path
from typing import Any

STUBBED = {
    "env": ("R2RBatch",),
    "agent": ("BaseAgent", "StopAgent", "RandomAgent", "ShortestAgent"),
}


def _unused(qualname: str) -> type:
    """A class standing in for ``qualname``; using it is an error (scoring never does)."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError(f"{qualname} is a benchmark stub: scoring does not use it")

    return type(qualname.rsplit(".", 1)[-1], (), {"__init__": refuse, "get_agent": refuse})


def install_stubs() -> None:
    """Puts stub ``env`` and ``agent`` modules into ``sys.modules``."""
    for name, attributes in STUBBED.items():
        module = types.ModuleType(name, f"benchmark stub for the official {name}.py")
        for attribute in attributes:
            setattr(module, attribute, _unused(f"{name}.{attribute}"))
        sys.modules[name] = module


def load_official(official: Path, root: Path) -> types.ModuleType:
    """Imports the official ``eval`` module with its working directory set to ``root``."""
    task_dir = official / "tasks" / "R2R"
    if not (task_dir / "eval.py").is_file():
        raise SystemExit(f"error: {task_dir / 'eval.py'} not found: --official must be a checkout")
    install_stubs()
    sys.path.insert(0, str(task_dir))
    os.chdir(root)
    return importlib.import_module("eval")


def plain(summary: dict[str, Any]) -> dict[str, float]:
    """The summary with numpy scalars turned into floats (for JSON)."""
    return {key: float(value) for key, value in summary.items()}


def score_files(module: types.ModuleType, split: str, files: list[str]) -> None:
    """Scores each file as ``eval_seq2seq()`` does: a new Evaluation, score, pretty-print."""
    for path in files:
        evaluation = module.Evaluation([split])
        summary, _ = evaluation.score(path)
        print(f"\n{path}")
        module.pp.pprint(summary)


def time_score(module: types.ModuleType, split: str, path: str, repeat: int) -> dict[str, Any]:
    """Builds the Evaluation once, calls ``score(path)`` once, then times ``repeat`` calls."""
    t0 = time.perf_counter()
    evaluation = module.Evaluation([split])
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    summary, _ = evaluation.score(path)  # untimed first call, as on the vlneval side
    first = time.perf_counter() - t0
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        summary, _ = evaluation.score(path)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    module.pp.pprint(summary)
    return {"api": "Evaluation.score(file)", "setup_s": setup, "first_s": first, "score_s": times,
            "score_cpu_s": cpu, "summary": plain(summary)}  # fmt: skip


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--official", type=Path, required=True, help="Matterport3DSimulator checkout")
    p.add_argument("--root", type=Path, required=True, help="working directory laid out for it")
    p.add_argument("--split", default="val_unseen")
    p.add_argument("--predictions", nargs="+", required=True)
    p.add_argument("--time-score", type=int, default=0, metavar="N", help="time score() N times")
    p.add_argument("--json", type=Path, default=None, help="with --time-score: write times here")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Runs the official scorer on the given files."""
    args = parse_args(argv)
    files = [str(Path(f).resolve()) for f in args.predictions]
    json_out = args.json.resolve() if args.json else None
    module = load_official(args.official.resolve(), args.root.resolve())
    if args.time_score:
        result = time_score(module, args.split, files[0], args.time_score)
        if json_out:
            json_out.write_text(json.dumps(result, indent=1))
    else:
        score_files(module, args.split, files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
