"""Load benchmark of the evaluation server on loopback: concurrent clients, real R2R files.

Usage::

    python benchmarks/bench_server.py --data /work/shared/data                # SQLite and PostgreSQL
    python benchmarks/bench_server.py --data /work/shared/data --backend sqlite
    python benchmarks/bench_server.py --clients 20 --submissions 200 --workers 2 --json out.json

For each backend: a fresh database (SQLite in a temporary folder; PostgreSQL started on
127.0.0.1 by ``tests/server/pg.sh`` with its durable defaults), a phase scoring R2R val_unseen
against ``r2r/R2R_val_unseen.json.gz`` as the hidden labels, 20 teams, and ``vlneval serve``
with ``--workers`` worker processes. ``--clients`` threads upload ``--submissions`` files taken
round-robin from the R2R val_unseen prediction files under ``<data>/predictions/r2r`` (one of
them is refused by the scorer and must fail once with messages). Then it waits until the queue
is empty and checks that every accepted submission was claimed once, has exactly one result, and
that the result equals ``vlneval score`` on the same file.

Reported: uploads per second and upload latency (p50/p95/p99/max) while the workers score,
submissions scored per second from the first claim to the last result, and end-to-end time from
upload to result (p50/p95/max). Only 127.0.0.1 is contacted; every loop is bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.server.live import free_port  # noqa: E402
from tests.server.load import Load, drain, setup, start_server, stop_server, upload, verify  # noqa: E402


def real_files(data: Path) -> tuple[list[tuple[str, Path]], dict[str, Any]]:
    """The R2R val_unseen prediction files (named ``<folder>--<file>``) and what ``vlneval
    score`` gives for each (None: it refuses the file)."""
    from vlneval.errors import InvalidInputError
    from vlneval.evaluation import evaluate

    paths = sorted((data / "predictions" / "r2r").rglob("*val_unseen*.json*"))
    files = [(f"{p.parent.name}--{p.name}", p) for p in paths]
    expected: dict[str, Any] = {}
    for name, f in files:
        try:
            expected[name] = evaluate("r2r", "val_unseen", f, root=data).to_dict()["metrics"]
        except InvalidInputError:
            expected[name] = None
    return files, expected


def run_backend(
    backend: str,
    data: Path,
    args: argparse.Namespace,
    files: list[tuple[str, Path]],
    expected: dict[str, Any],
) -> dict[str, Any]:
    """One full run on one backend; returns its figures."""
    tmp = Path(tempfile.mkdtemp(prefix=f"vlneval-bench-{backend}-"))
    pg_dir = None
    if backend == "sqlite":
        url = f"sqlite:///{tmp / 'bench.sqlite3'}"
    else:
        proc = subprocess.run(
            ["bash", str(REPO / "tests" / "server" / "pg.sh"), "start"],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise SystemExit(f"cannot start PostgreSQL: {proc.stderr.strip()}")
        url, pg_dir = proc.stdout.strip(), proc.stderr.strip().splitlines()[-1]
    try:
        phase = {
            "task": "r2r", "split": "val_unseen",
            "episodes_file": str(data / "r2r" / "R2R_val_unseen.json.gz"),
            "graphs": str(data / "matterport3d" / "connectivity"),
        }  # fmt: skip
        tokens = setup(url, args.teams, phase)
        load = Load(files, expected, args.clients, args.submissions, timeout=args.timeout)
        server = start_server(tmp / "data", url, args.workers, free_port())
        try:
            time.sleep(args.warmup)  # let the workers import and load the phase once
            out = upload(f"http://127.0.0.1:{server.args[5]}", tokens, load)
            if out.refused:
                raise SystemExit(f"{len(out.refused)} uploads refused: {sorted(set(out.refused))}")
            drain(url, out, load.timeout)
        finally:
            stop_server(server)
        figures = verify(url, out, load)
        figures["backend"] = backend
        return figures
    finally:
        if pg_dir:
            subprocess.run(
                ["bash", str(REPO / "tests" / "server" / "pg.sh"), "stop", pg_dir],
                capture_output=True,
            )


def _table(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(
        title=f"vlneval server: {args.clients} clients, {args.submissions} real R2R val_unseen submissions, {args.workers} workers"
    )
    for col in (
        "backend",
        "accepted",
        "finished",
        "failed",
        "uploads/s",
        "upload p50/p95/p99 ms",
        "scored/s",
        "end-to-end p50/p95 s",
    ):
        t.add_column(col, justify="right")
    for r in results:
        lat, e2e = r["upload_latency_ms"], r["end_to_end_s"]
        t.add_row(
            r["backend"], str(r["accepted"]), str(r["finished"]), str(r["failed_invalid"]),
            str(r["uploads_per_s"]), f"{lat['p50']}/{lat['p95']}/{lat['p99']}",
            str(r["scored_per_s"]), f"{e2e['p50']}/{e2e['p95']}",
        )  # fmt: skip
    Console(width=160).print(t)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--data", default=os.environ.get("VLNEVAL_DATA", str(REPO.parent / "shared" / "data"))
    )
    p.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--submissions", type=int, default=200)
    p.add_argument("--teams", type=int, default=20)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument(
        "--warmup", type=float, default=5.0, help="seconds between start and first upload"
    )
    p.add_argument("--timeout", type=float, default=900.0)
    p.add_argument("--json", default=None, help="write the figures here")
    args = p.parse_args(argv)
    data = Path(args.data)
    files, expected = real_files(data)
    print(
        f"{len(files)} prediction files ({sum(v is None for v in expected.values())} refused by the scorer)",
        file=sys.stderr,
    )
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    results = [run_backend(b, data, args, files, expected) for b in backends]
    _table(results, args)
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "settings": {
            k: getattr(args, k) for k in ("clients", "submissions", "teams", "workers", "warmup")
        },
        "files": [name for name, _ in files],
        "results": results,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
