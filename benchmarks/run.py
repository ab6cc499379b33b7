"""One command for the R2R scoring benchmark: baseline vs vlneval (cold and warm cache).

Usage::

    python benchmarks/run.py --data /work/shared/data            # 200,000 episodes
    python benchmarks/run.py --data /work/shared/data --quick    # 20,000 episodes

Steps: generate the workload into ``bench-out/wl-<episodes>-s<seed>/`` if it is absent; time
each scorer as a whole child process (wall time, CPU time, and peak RSS from ``os.wait4``, the
child's own ``getrusage``); check that the vlneval summary equals the baseline's to 1e-9; time
the ``vlneval.metrics.batch.score_batch`` kernel when it exists; print a table and write
``bench-out/results.json``. When the ``vlneval`` CLI is not installed yet, its rows are skipped
with a message.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workload  # noqa: E402  (a sibling script, not a package)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LABELS = ("TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW", "CLS")
TOLERANCE = 1e-9
QUICK_EPISODES = 20_000
PACKAGES = ("vlneval", "numpy", "scipy", "numba", "orjson", "networkx")
CLI_SHIM = "import sys; {path}from vlneval.cli.main import console; console()"
console = Console()


@dataclass
class Measurement:
    """One timed child process."""

    name: str
    command: list[str]
    returncode: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mib: float = 0.0
    episodes_per_s: float = 0.0
    stderr_tail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def measure(
    name: str, command: list[str], log: Path, env: dict[str, str] | None = None, episodes: int = 0
) -> Measurement:
    """Run ``command`` as a child; wall time, CPU time and peak RSS of that child alone.

    ``os.wait4`` returns the rusage of exactly this child (and any children it waited for), so
    the peak RSS is not mixed with earlier children as ``RUSAGE_CHILDREN`` would be.
    """
    with open(log, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    tail = log.read_text(errors="replace").strip().splitlines()[-5:]
    return Measurement(
        name=name,
        command=command,
        returncode=proc.returncode,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mib=usage.ru_maxrss / 1024,  # KiB on Linux
        episodes_per_s=episodes / wall if wall > 0 else 0.0,
        stderr_tail="\n".join(tail),
    )


def best_of(runs: list[Measurement]) -> Measurement:
    """The run with the smallest wall time; peak RSS is the largest seen."""
    best = min(runs, key=lambda m: m.wall_s if m.returncode == 0 else float("inf"))
    best.peak_rss_mib = max(m.peak_rss_mib for m in runs)
    best.extra["wall_s_all"] = [round(m.wall_s, 3) for m in runs]
    return best


def ensure_workload(args: argparse.Namespace) -> Path:
    """Generate the workload unless an identical one exists; return its directory.

    Identical means same episodes, seed and generator source (``workload_meta.json``).
    """
    wl: Path = args.out_dir / f"wl-{args.episodes}-s{args.seed}"
    meta_file = wl / workload.META_FILE
    expected = workload.workload_meta(workload.parse_args(workload_argv(args, wl)))
    if meta_file.is_file() and json.loads(meta_file.read_text()) == expected:
        console.print(f"workload: reusing {wl}")
        return wl
    console.print(f"workload: generating {args.episodes:,} episodes into {wl}")
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, str(HERE / "workload.py"), *workload_argv(args, wl)], check=True
    )
    args.workload_seconds = time.perf_counter() - t
    return wl


def workload_argv(args: argparse.Namespace, wl: Path) -> list[str]:
    """Command-line arguments of ``workload.py`` for this run."""
    return [
        "--data",
        str(args.data),
        "--out",
        str(wl),
        "--episodes",
        str(args.episodes),
        "--seed",
        str(args.seed),
    ]


def graphs_dir(data: Path) -> Path:
    """The Matterport3D connectivity directory under the data root."""
    return data / "matterport3d" / "connectivity"


def run_baseline(args: argparse.Namespace, wl: Path) -> tuple[Measurement, dict[str, float]]:
    """Time the networkx baseline and read its summary."""
    out = wl / "baseline_summary.json"
    cmd = [
        sys.executable,
        str(HERE / "baseline_networkx.py"),
        "--graphs",
        str(graphs_dir(args.data)),
        "--episodes",
        str(wl / "R2R_bench.json"),
        "--predictions",
        str(wl / "preds_bench.json"),
        "--out",
        str(out),
    ]
    runs: list[Measurement] = []
    summary: dict[str, Any] = {}
    for _ in range(args.repeat):
        m = measure("baseline (networkx)", cmd, wl / "baseline.log", episodes=args.episodes)
        if m.returncode != 0:
            raise SystemExit(f"baseline failed ({m.returncode}):\n{m.stderr_tail}")
        summary = json.loads(out.read_text())
        m.extra["phases_s"] = {k: round(v, 3) for k, v in summary["phases_s"].items()}
        runs.append(m)
    m = best_of(runs)
    return m, summary["metrics"]


def installed_cli_main() -> bool:
    """Whether the installed ``vlneval`` package has ``cli/main.py`` (nothing is imported)."""
    spec = importlib.util.find_spec("vlneval")
    roots = spec.submodule_search_locations if spec else None
    return bool(roots) and any((Path(r) / "cli" / "main.py").is_file() for r in roots or [])


def vlneval_command() -> list[str] | None:
    """How to call the vlneval CLI, or None while ``vlneval.cli.main`` does not exist."""
    if installed_cli_main():
        script = Path(sys.executable).parent / "vlneval"
        found = str(script) if script.is_file() else shutil.which("vlneval")
        return [found] if found else [sys.executable, "-c", CLI_SHIM.format(path="")]
    if (REPO / "src" / "vlneval" / "cli" / "main.py").is_file():  # not installed: use src/
        insert = f"sys.path.insert(0, {str(REPO / 'src')!r}); "
        return [sys.executable, "-c", CLI_SHIM.format(path=insert)]
    return None


def byte_compile() -> None:
    """Byte-compiles the vlneval package, as installing a wheel does. An editable install
    under ``PYTHONDONTWRITEBYTECODE`` (set on the machine these figures come from) would
    otherwise compile every module from source again in every run."""
    spec = importlib.util.find_spec("vlneval")
    for root in (spec.submodule_search_locations or []) if spec else []:
        subprocess.run([sys.executable, "-m", "compileall", "-q", root], check=False)


def run_vlneval(
    args: argparse.Namespace, wl: Path, base: list[str]
) -> tuple[list[Measurement], dict[str, Any] | None]:
    """Time ``vlneval score``: first run after install, cold, warm; return the runs and summary.

    First run: the compiled-kernel cache (``NUMBA_CACHE_DIR``) and the distance cache are both
    empty, as right after ``pip install`` (numba compiles every kernel once per machine).
    Cold: the distance-table cache (``VLNEVAL_CACHE``) is emptied before every run; the kernels
    stay compiled, as for every run after the first. Warm: the distance tables are cached too.
    """
    cache = args.out_dir / "vlneval-cache"
    numba_cache = args.out_dir / "numba-cache"
    out = wl / "vlneval_summary.json"
    cmd = base + [
        "score",
        "--task",
        "r2r",
        "--split",
        "bench",
        "--episodes",
        str(wl / "R2R_bench.json"),
        "--graphs",
        str(graphs_dir(args.data)),
        "--predictions",
        str(wl / "preds_bench.json"),
        "--json",
        str(out),
    ]
    env = dict(os.environ, VLNEVAL_CACHE=str(cache), NUMBA_CACHE_DIR=str(numba_cache))
    for folder in (cache, numba_cache):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    first = measure("vlneval first run", cmd, wl / "vlneval_first.log", env, args.episodes)
    cold: list[Measurement] = []
    warm: list[Measurement] = []
    for _ in range(args.repeat):
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        cold.append(measure("vlneval cold", cmd, wl / "vlneval_cold.log", env, args.episodes))
        warm.append(measure("vlneval warm", cmd, wl / "vlneval_warm.log", env, args.episodes))
    runs = [first, best_of(cold), best_of(warm)]
    failed = [m for m in runs if m.returncode != 0]
    for m in failed:
        console.print(f"[red]{m.name} failed ({m.returncode}):[/red]\n{m.stderr_tail}")
    summary = json.loads(out.read_text()) if out.is_file() and not failed else None
    return runs, summary


def compare(
    baseline: dict[str, float], metrics: dict[str, Any] | None, what: str
) -> dict[str, Any]:
    """Per-label absolute differences between ``metrics`` and the baseline's means."""
    if metrics is None:
        return {"ok": False, "reason": f"no {what} metrics"}
    diffs: dict[str, float | None] = {}
    for label in LABELS:
        value = metrics.get(label)
        diffs[label] = None if value is None else abs(float(value) - baseline[label])
    ok = all(d is not None and d <= TOLERANCE for d in diffs.values())
    return {
        "ok": ok,
        "tolerance": TOLERANCE,
        "abs_diff": diffs,
        "values": {k: metrics.get(k) for k in LABELS},
    }


def run_kernel(args: argparse.Namespace, wl: Path) -> dict[str, Any]:
    """Time ``vlneval.metrics.batch.score_batch`` in a child process, when it exists."""
    cmd = [
        sys.executable,
        str(HERE / "kernel.py"),
        "--graphs",
        str(graphs_dir(args.data)),
        "--episodes",
        str(wl / "R2R_bench.json"),
        "--predictions",
        str(wl / "preds_bench.json"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"status": "failed", "detail": proc.stderr.strip().splitlines()[-5:]}
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def machine() -> dict[str, Any]:
    """CPU model, core count and software versions."""
    model = platform.processor()
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(
            line.split(":", 1)[1].strip()
            for line in lscpu.splitlines()
            if line.startswith("Model name")
        )
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    return {
        "load_average_1_5_15": os.getloadavg(),
        "cpu": model,
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {name: package_version(name) for name in PACKAGES},
    }


def package_version(name: str) -> str | None:
    """Installed version of a distribution, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def print_table(runs: list[Measurement], baseline_wall: float) -> None:
    """The timing table."""
    table = Table(title="R2R scoring benchmark (whole processes)")
    for col in ("scorer", "wall s", "CPU s", "peak RSS MiB", "episodes/s", "speed-up"):
        table.add_column(col, justify="left" if col == "scorer" else "right")
    for m in runs:
        ok = m.returncode == 0
        table.add_row(
            m.name,
            f"{m.wall_s:.2f}",
            f"{m.cpu_s:.2f}",
            f"{m.peak_rss_mib:.0f}",
            f"{m.episodes_per_s:,.0f}" if ok else "failed",
            f"{baseline_wall / m.wall_s:.1f}x" if ok else "-",
        )
    console.print(table)


def print_metrics(baseline: dict[str, float], check: dict[str, Any] | None) -> None:
    """Baseline metrics beside vlneval's, with the absolute differences."""
    table = Table(title="Summary metrics (rates as fractions)")
    for col in ("metric", "baseline", "vlneval", "|diff|"):
        table.add_column(col, justify="right")
    for label in LABELS:
        ours = check.get("values", {}).get(label) if check else None
        diff = check.get("abs_diff", {}).get(label) if check else None
        shown = "-" if diff is None else f"{diff:.1e}"
        if diff is not None and diff > TOLERANCE:
            shown = f"[red]{shown}[/red]"
        table.add_row(
            label,
            f"{baseline[label]:.6f}",
            "-" if ours is None else f"{ours:.6f}",
            shown,
        )
    console.print(table)


def print_kernel(kernel: dict[str, Any]) -> None:
    """One line on the batch kernel microbenchmark."""
    if kernel.get("status") == "ok":
        console.print(
            f"kernel score_batch: {kernel['episodes_per_s']:,.0f} episodes/s "
            f"(best of {kernel['repeat']}: {kernel['best_s']:.4f} s, validate=False; "
            f"{kernel['episodes_per_s_validated']:,.0f} episodes/s validated; "
            f"first call {kernel['first_call_s']:.3f} s)"
        )
    else:
        console.print(
            f"[yellow]kernel score_batch {kernel.get('status')}: {kernel.get('detail')}[/yellow]"
        )


def print_check(check: dict[str, Any], what: str) -> None:
    """The verdict of a metric check, naming the labels that differ."""
    if check["ok"]:
        console.print(f"[green]{what}: equal to the baseline's within {TOLERANCE}[/green]")
        return
    bad = [k for k, d in check.get("abs_diff", {}).items() if d is None or d > TOLERANCE]
    reason = check.get("reason") or f"differ beyond {TOLERANCE}: {', '.join(bad)}"
    console.print(f"[bold red]{what}: does NOT match the baseline: {reason}[/bold red]")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="data root (holds matterport3d/)")
    p.add_argument("--episodes", type=int, default=200_000)
    p.add_argument("--quick", action="store_true", help=f"{QUICK_EPISODES:,} episodes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=1, help="runs per scorer; the fastest is kept")
    p.add_argument("--out-dir", type=Path, default=REPO / "bench-out")
    args = p.parse_args(argv)
    if args.quick:
        args.episodes = QUICK_EPISODES
    args.data, args.out_dir = args.data.resolve(), args.out_dir.resolve()
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point; exit code 1 when vlneval's metrics differ from the baseline's."""
    args = parse_args(argv)
    host = machine()  # before the runs: the load average says how quiet the machine was
    wl = ensure_workload(args)
    base_run, base_metrics = run_baseline(args, wl)
    runs: list[Measurement] = [base_run]
    check: dict[str, Any] | None = None
    cli = vlneval_command()
    if cli is None:
        console.print(
            "[yellow]vlneval CLI not available yet (vlneval.cli.main is neither installed "
            "nor in src/): skipping the vlneval rows and the metric check.[/yellow]"
        )
    else:
        byte_compile()
        vl_runs, summary = run_vlneval(args, wl, cli)
        runs += vl_runs
        check = compare(base_metrics, summary and summary.get("metrics"), "vlneval summary")
    kernel = run_kernel(args, wl)
    if kernel.get("status") == "ok":
        kernel["check"] = compare(base_metrics, kernel.get("means"), "kernel")
    print_table(runs, base_run.wall_s)
    print_metrics(base_metrics, check)
    print_kernel(kernel)
    if check is not None:
        print_check(check, "vlneval summary")
    if "check" in kernel:
        print_check(kernel["check"], "score_batch means")
    results = {
        "machine": host,
        "workload": {
            "dir": str(wl),
            "generation_s": getattr(args, "workload_seconds", None),
            "episodes": args.episodes,
            "seed": args.seed,
            "bytes": {f.name: f.stat().st_size for f in sorted(wl.glob("*_bench.json"))},
        },
        "runs": [asdict(m) for m in runs],
        "baseline_metrics": base_metrics,
        "check": check,
        "kernel": kernel,
        "vlneval": "skipped: CLI not installed" if cli is None else " ".join(cli),
    }
    (args.out_dir / "results.json").write_text(json.dumps(results, indent=2))
    console.print(f"wrote {args.out_dir / 'results.json'}")
    return 0 if check is None or check["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
