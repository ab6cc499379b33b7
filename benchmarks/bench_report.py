"""How long an HTML report of a full split takes (R2R val_unseen, 2,349 episodes).

Usage::

    python benchmarks/bench_report.py --data /work/shared/data [--repeats 3]

Two measurements, each the median of ``--repeats`` runs:

1. the whole command, as a user runs it, in a fresh child process (imports, JIT cache,
   scoring, diagnostics, bootstrap, plots, writing the file):
   ``vlneval report`` on NaviLLM's file, and ``vlneval report --compare`` (seq2seq iteration
   20000 against 5000, two files scored, a paired comparison drawn);
2. the stages inside one process (scoring, diagnostics with the bootstrap, the comparison,
   and the page with its figures), to show where the time goes.

The target is under 10 seconds for a report of 2,349 episodes. Only the worst N and a sample
of N episodes are drawn (6 + 6 by default), which keeps the report fast whatever the split size.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

P = "predictions/r2r"
NAVILLM = P + "/navillm_sadanand1120/navillm_val_unseen_compact.json.gz"
SEQ = P + "/seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_{}.json.gz"
CLI = [sys.executable, "-c", "import sys; from vlneval.cli.main import main; sys.exit(main())"]


def _commands(data: Path, out: Path) -> dict[str, list[str]]:
    common = ["report", "--task", "r2r", "--split", "val_unseen", "--data-root", str(data)]
    return {
        "report (NaviLLM, 2349 episodes)": [
            *common, "--predictions", str(data / NAVILLM), "--skip-summary-records",
            "--out", str(out / "navillm.html"), "--quiet",
        ],
        "report --compare (seq2seq 20000 vs 5000)": [
            *common, "--predictions", str(data / SEQ.format(20000)),
            "--compare", str(data / SEQ.format(5000)), "--step-limit", "20",
            "--out", str(out / "seq2seq.html"), "--quiet",
        ],
    }  # fmt: skip


def whole_command(data: Path, repeats: int) -> dict[str, float]:
    """Median wall time of each command in a fresh process."""
    out = Path(tempfile.mkdtemp(prefix="bench-report-"))
    times: dict[str, float] = {}
    for name, args in _commands(data, out).items():
        runs = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run([*CLI, *args], check=True, capture_output=True)
            runs.append(time.perf_counter() - start)
        times[name] = statistics.median(runs)
    return times


def stages(data: Path) -> dict[str, float]:
    """Seconds per stage of a comparison report, in this process (imports already warm)."""
    from vlneval.diagnostics import diagnose, score_run
    from vlneval.evaluation import Scorer
    from vlneval.reports.compare import compare_scored
    from vlneval.reports.html import ReportOptions, build_report
    from vlneval.reports.plots_base import require_matplotlib

    require_matplotlib()
    scorer = Scorer("r2r", "val_unseen", root=data)  # the split, loaded once for both files
    score_run(scorer, data / SEQ.format(5000))  # warm caches and JIT
    out: dict[str, float] = {}
    t = time.perf_counter()
    a = score_run(scorer, data / SEQ.format(5000))
    b = score_run(scorer, data / SEQ.format(20000))
    out["score two files"] = time.perf_counter() - t
    t = time.perf_counter()
    diagnose(b, step_limit=20)
    out["diagnose one run (bootstrap 2000)"] = time.perf_counter() - t
    t = time.perf_counter()
    compare_scored(a, b)
    out["paired comparison (8 metrics)"] = time.perf_counter() - t
    t = time.perf_counter()
    build_report(b, baseline=a, options=ReportOptions(step_limit=20))
    out["build the page (all of the above + 17 figures)"] = time.perf_counter() - t
    return out


def main() -> int:
    """Runs both measurements and prints them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("whole command, fresh process (median of", args.repeats, "runs):")
    for name, seconds in whole_command(args.data, args.repeats).items():
        print(f"  {name:52s} {seconds:6.2f} s")
    print("stages, one warm process:")
    for name, seconds in stages(args.data).items():
        print(f"  {name:52s} {seconds:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
