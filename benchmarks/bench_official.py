"""vlneval against the official R2R scorer, side by side in one run (issue 11's figures).

Usage (``benchmarks/README.md`` says how to get the official checkout)::

    python benchmarks/bench_official.py --official CHECKOUT --data DATA [--repeat 7] [--json OUT]

On R2R val_unseen (2,349 episodes), with the official ``tasks/R2R/eval.py`` run as published
(``official_runner.py``: its unused ``env``/``agent`` imports stubbed) and both scorers reading the
same uncompressed files (``official_layout.py``), it measures:

1. whole process, warm distance cache: ``vlneval score --task r2r --split val_unseen
   --data-root D --predictions P`` against one run of the official script; median wall time of
   ``--repeat`` alternating runs, peak RSS of each child (``os.wait4``);
2. in process: ``Scorer.score(records)`` (or, until it exists, ``evaluate``: labelled) against
   ``Evaluation.score(file)``, each after its set-up; median of ``--repeat``;
3. a sweep of ``--sweep-files`` files: one ``vlneval score --predictions F1 ... FN`` call when the
   CLI takes several files (else N processes: labelled) against N runs of the official script;
4. the first score after install: fresh ``NUMBA_CACHE_DIR`` and ``VLNEVAL_CACHE``;
5. fidelity: the official printed TL, NE, OSR, SR, SPL of every distinct file against vlneval's
   ``r2r`` summary (tolerance 1e-9).

It prints markdown tables; ``--json OUT`` also writes every measurement. Exit code 1 when a
metric differs from the official value.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import fidelity  # noqa: E402  (sibling scripts, not a package)
from official_layout import Layout, make_layout  # noqa: E402

SPLIT = "val_unseen"
MAIN_FILE = "seq2seq-iter20000"
# argparse's usage for nargs="+" (``--predictions F [F ...]``) or "*" (``[F ...]``).
MULTI_FILE = re.compile(r"--predictions\s+(?:(\S+)\s+\[\1\s+\.\.\.\]|\[\S+\s+\.\.\.\])")


@dataclass
class Run:
    """One timed child process."""

    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    stdout: str


def run_child(command: list[str], env: dict[str, str], log: Path) -> Run:
    """Runs ``command``; wall time, CPU time and peak RSS of that child alone (``os.wait4``).

    Raises:
        SystemExit: the child failed (its stderr tail is shown).
    """
    out_path, err_path = log.with_suffix(".out"), log.with_suffix(".err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        tail = "\n".join(err_path.read_text(errors="replace").splitlines()[-8:])
        raise SystemExit(f"error: {' '.join(command[:6])} ... failed:\n{tail}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
               out_path.read_text(errors="replace"))  # fmt: skip


@dataclass
class Bench:
    """What every section needs: the commands, the folders and the environments."""

    args: argparse.Namespace
    layout: Layout
    cli: list[str]
    work: Path

    def official(self, files: list[Path]) -> list[str]:
        """The official script on ``files`` (one Evaluation per file, as the script does)."""
        return [sys.executable, str(HERE / "official_runner.py"), "--official",
                str(self.args.official), "--root", str(self.layout.official_root), "--split",
                SPLIT, "--predictions", *map(str, files)]  # fmt: skip

    def vlneval(self, files: list[Path], *extra: str) -> list[str]:
        """``vlneval score`` on ``files``."""
        return [*self.cli, "score", "--task", "r2r", "--split", SPLIT, "--data-root",
                str(self.layout.vlneval_root), "--predictions", *map(str, files), *extra]  # fmt: skip

    def env(self, caches: str = "warm") -> dict[str, str]:
        """The environment with its own distance and numba caches (created empty if new)."""
        folder = self.work / f"caches-{caches}"
        (folder / "numba").mkdir(parents=True, exist_ok=True)
        return dict(os.environ, VLNEVAL_CACHE=str(folder / "vlneval"),
                    NUMBA_CACHE_DIR=str(folder / "numba"))  # fmt: skip

    def log(self, name: str) -> Path:
        """A log path under the work folder."""
        (self.work / "logs").mkdir(exist_ok=True)
        return self.work / "logs" / name


def alternate(bench: Bench, official: list[str], vlneval: list[str], repeat: int,
              name: str, fresh: bool = False) -> tuple[list[Run], list[Run]]:  # fmt: skip
    """``repeat`` runs of each, alternating which goes first; ``fresh``: new vlneval caches."""
    off: list[Run] = []
    vl: list[Run] = []
    for i in range(repeat):
        env = bench.env(f"fresh-{name}-{i}") if fresh else bench.env()
        pair = [(off, official, bench.env()), (vl, vlneval, env)]
        for runs, command, environ in pair if i % 2 == 0 else pair[::-1]:
            label = "official" if runs is off else "vlneval"
            runs.append(run_child(command, environ, bench.log(f"{name}-{label}-{i}")))
    return off, vl


def timing(runs: list[Run]) -> dict[str, Any]:
    """Median and range of the wall times, largest peak RSS."""
    walls = [r.wall_s for r in runs]
    return {"median_s": statistics.median(walls), "min_s": min(walls), "max_s": max(walls),
            "cpu_median_s": statistics.median(r.cpu_s for r in runs),
            "peak_rss_mib": max(r.peak_rss_mib for r in runs), "runs": len(runs)}  # fmt: skip


def whole_process(bench: Bench) -> dict[str, Any]:
    """Section 1: one file, whole processes, warm caches."""
    main = bench.layout.predictions[MAIN_FILE]
    off, vl = alternate(bench, bench.official([main]), bench.vlneval([main]),
                        bench.args.repeat, "whole")  # fmt: skip
    return {"file": MAIN_FILE, "official": timing(off), "vlneval": timing(vl)}


def first_score(bench: Bench) -> dict[str, Any]:
    """Section 4: vlneval with fresh numba and distance caches, beside the official script."""
    main = bench.layout.predictions[MAIN_FILE]
    off, vl = alternate(bench, bench.official([main]), bench.vlneval([main]),
                        bench.args.cold_repeat, "first", fresh=True)  # fmt: skip
    return {"file": MAIN_FILE, "official": timing(off), "vlneval": timing(vl)}


def in_process(bench: Bench) -> dict[str, Any]:
    """Section 2: set-up once, then the scoring call alone, in one child process each."""
    main, n = bench.layout.predictions[MAIN_FILE], str(bench.args.repeat)
    off_json, vl_json = bench.work / "inproc-official.json", bench.work / "inproc-vlneval.json"
    run_child([*bench.official([main]), "--time-score", n, "--json", str(off_json)],
              bench.env(), bench.log("inproc-official"))  # fmt: skip
    run_child([sys.executable, str(HERE / "vlneval_runner.py"), "--split", SPLIT, "--root",
               str(bench.layout.vlneval_root), "--predictions", str(main), "--repeat", n,
               "--json", str(vl_json)], bench.env(), bench.log("inproc-vlneval"))  # fmt: skip
    result = {}
    for side, path in (("official", off_json), ("vlneval", vl_json)):
        data = json.loads(path.read_text())
        data["median_s"] = statistics.median(data["score_s"])
        data["cpu_median_s"] = statistics.median(data["score_cpu_s"])
        result[side] = data
    return result


def supports_multi_file(bench: Bench) -> bool:
    """Whether ``vlneval score --help`` shows ``--predictions F [F ...]``."""
    proc = subprocess.run([*bench.cli, "score", "--help"], capture_output=True, text=True,
                          env=bench.env(), check=False)  # fmt: skip
    return bool(MULTI_FILE.search(proc.stdout))


def sweep(bench: Bench) -> dict[str, Any]:
    """Section 3: N files; the official script once per file, vlneval in one call if it can."""
    files, multi = bench.layout.sweep, supports_multi_file(bench)
    official_totals, vlneval_totals, outputs = [], [], {}
    for i in range(bench.args.sweep_repeat):
        for side in ("official", "vlneval") if i % 2 == 0 else ("vlneval", "official"):
            if side == "official":
                runs = [run_child(bench.official([f]), bench.env(), bench.log(f"sweep-o-{i}-{k}"))
                        for k, f in enumerate(files)]  # fmt: skip
                outputs.update(parse_outputs(runs))
                official_totals.append(runs)
            elif multi:
                vlneval_totals.append([run_child(bench.vlneval(files), bench.env(),
                                                 bench.log(f"sweep-v-{i}"))])  # fmt: skip
            else:
                vlneval_totals.append([run_child(bench.vlneval([f]), bench.env(),
                                                 bench.log(f"sweep-v-{i}-{k}"))
                                       for k, f in enumerate(files)])  # fmt: skip
    return {"files": len(files), "vlneval_mode": "one call" if multi else
            f"{len(files)} processes [fallback: no multi-file --predictions]",
            "official": sweep_timing(official_totals), "vlneval": sweep_timing(vlneval_totals),
            "official_outputs": outputs}  # fmt: skip


def parse_outputs(runs: list[Run]) -> dict[str, dict[str, float]]:
    """The official summaries printed by ``runs``, keyed by file path."""
    return {
        Path(path).name: values
        for r in runs
        for path, values in fidelity.parse_official_output(r.stdout)
    }


def sweep_timing(repeats: list[list[Run]]) -> dict[str, Any]:
    """Median over the repeats of the summed wall time; largest peak RSS of any process."""
    totals = [sum(r.wall_s for r in runs) for runs in repeats]
    cpu = [sum(r.cpu_s for r in runs) for runs in repeats]
    return {"median_s": statistics.median(totals), "min_s": min(totals), "max_s": max(totals),
            "cpu_median_s": statistics.median(cpu),
            "peak_rss_mib": max(r.peak_rss_mib for runs in repeats for r in runs),
            "processes": len(repeats[0]), "repeats": len(repeats)}  # fmt: skip


def check_fidelity(bench: Bench, official: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """Section 5: every distinct file, official printed values against vlneval's summary."""
    rows = []
    for name, path in bench.layout.predictions.items():
        out = bench.work / f"summary-{name}.json"
        run_child(bench.vlneval([path], "--quiet", "--json", str(out)), bench.env(),
                  bench.log(f"fidelity-{name}"))  # fmt: skip
        metrics = json.loads(out.read_text())["metrics"]
        diffs = fidelity.compare(official_summary(bench, official, name, path), metrics)
        rows.append({"file": name, "vlneval": metrics,
                     "official": {d.label: d.official for d in diffs},
                     "max_abs_diff": max(abs(d.difference) for d in diffs),
                     "equal": all(d.equal for d in diffs),
                     "different": [d.label for d in diffs if not d.equal]})  # fmt: skip
    return rows


def official_summary(
    bench: Bench, printed: dict[str, dict[str, float]], name: str, path: Path
) -> dict[str, float]:
    """The official summary of ``name`` printed in the sweep, or from one more run of it."""
    for file_name, values in printed.items():
        if file_name.endswith(f"_{name}.json"):
            return values
    run = run_child(bench.official([path]), bench.env(), bench.log(f"fidelity-official-{name}"))
    return fidelity.parse_official_output(run.stdout)[0][1]


def vlneval_command() -> list[str] | None:
    """The installed ``vlneval`` console script, or None."""
    script = Path(sys.executable).parent / "vlneval"
    found = str(script) if script.is_file() else shutil.which("vlneval")
    return [found] if found else None


def byte_compile() -> None:
    """Byte-compiles the installed vlneval, as installing a wheel does (an editable install
    under ``PYTHONDONTWRITEBYTECODE`` would compile every module again in every run)."""
    spec = importlib.util.find_spec("vlneval")
    for root in (spec.submodule_search_locations or []) if spec else []:
        subprocess.run([sys.executable, "-m", "compileall", "-q", root], check=False)


def machine() -> dict[str, Any]:
    """CPU model, core count, load and package versions."""
    cpu = platform.processor()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    packages: dict[str, str | None] = {}
    for name in ("vlneval", "numpy", "scipy", "numba", "msgspec", "networkx"):
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[name] = None
    return {"cpu": cpu, "nproc": os.cpu_count(), "load_average_1_5_15": os.getloadavg(),
            "python": platform.python_version(), "platform": platform.platform(),
            "packages": packages}  # fmt: skip


def _git(folder: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else ""


def git_head(folder: Path, under: str = ".") -> str | None:
    """The last commit that touched ``under`` in ``folder`` (``+dirty`` with local changes)."""
    head = _git(folder, "log", "-1", "--format=%H", "--", under)
    if not head:
        return None
    return head + ("+dirty" if _git(folder, "status", "--porcelain", "--", under) else "")


def warm_up(bench: Bench) -> None:
    """One untimed run of each: fills the warm caches and the OS file cache."""
    main = bench.layout.predictions[MAIN_FILE]
    run_child(bench.official([main]), bench.env(), bench.log("warmup-official"))
    run_child(bench.vlneval([main]), bench.env(), bench.log("warmup-vlneval"))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--official", type=Path, required=True,
                   help="a checkout of the public Matterport3DSimulator repository")  # fmt: skip
    p.add_argument("--data", type=Path, required=True, help="the shared data folder")
    p.add_argument("--repeat", type=int, default=7, help="whole-process and in-process runs")
    p.add_argument("--cold-repeat", type=int, default=3, help="first-score runs (fresh caches)")
    p.add_argument("--sweep-files", type=int, default=30)
    p.add_argument("--sweep-repeat", type=int, default=3, help="repeats of the whole sweep")
    p.add_argument("--work", type=Path, default=REPO / "bench-out" / "official",
                   help="scratch folder (emptied first)")  # fmt: skip
    p.add_argument("--json", type=Path, default=None, help="write every measurement here")
    args = p.parse_args(argv)
    args.official, args.data, args.work = (
        x.resolve() for x in (args.official, args.data, args.work)
    )
    if not (args.official / "tasks" / "R2R" / "eval.py").is_file():
        p.error(f"{args.official} has no tasks/R2R/eval.py: clone Matterport3DSimulator there")
    return args


def main(argv: list[str] | None = None) -> int:
    """Runs every section, prints the tables; exit 1 when a metric differs."""
    import official_report as report

    args = parse_args(argv)
    cli = vlneval_command()
    if cli is None:
        raise SystemExit("error: the vlneval CLI is not installed")
    host = machine()
    byte_compile()
    bench = Bench(args, make_layout(args.data, args.work, SPLIT, args.sweep_files), cli, args.work)
    warm_up(bench)
    results: dict[str, Any] = {
        "date": datetime.date.today().isoformat(),
        "command": " ".join(["python", "benchmarks/bench_official.py", *(argv or sys.argv[1:])]),
        "machine": host,
        "vlneval_commit": git_head(REPO, "src"),
        "official_commit": git_head(args.official),
        "split": SPLIT,
    }
    results["whole_process"] = whole_process(bench)
    results["in_process"] = in_process(bench)
    results["sweep"] = sweep(bench)
    results["first_score"] = first_score(bench)
    results["fidelity"] = check_fidelity(bench, results["sweep"].pop("official_outputs"))
    results["machine"]["load_average_after"] = os.getloadavg()
    print(report.markdown(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    shutil.rmtree(args.work / "sweep", ignore_errors=True)
    return 0 if all(row["equal"] for row in results["fidelity"]) else 1


if __name__ == "__main__":
    sys.exit(main())
