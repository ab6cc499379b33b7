"""Executor overhead: one process against shards, Ray actors and an HTTP agent, on the same work.

    .venv/bin/python benchmarks/bench_executors.py --data DATA [--task r2r --split val_unseen]
        [--agent random] [--actors 2] [--chunks 8,64] [--json bench-out/executors.json]

Rows (every one checked to give the records of the single process):

- ``local``: ``run_agent`` in this process (environment built once);
- ``shards xN``: N ``vlneval run --shard i/N`` processes at once, then ``vlneval merge``
  (wall time of the whole, process start-up and imports included);
- ``ray K actors, chunk C``: :func:`run_on_ray` on a running local cluster (actor start-up and
  loading included; the cluster's own start-up is given apart);
- ``http``: the agent behind ``vlneval serve-agent`` on loopback; the per-request overhead is
  (http - local) / requests.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _local(args: argparse.Namespace) -> tuple[float, list[Any], int]:
    from vlneval.agents.registry import get_agent
    from vlneval.agents.rollout import run_agent
    from vlneval.envs.loading import load_episodes

    episodes, graphs = load_episodes(args.task, args.split, root=args.data)
    agent = get_agent(args.agent)
    run_agent(agent, episodes, graphs, limit=1)  # compile the kernels outside the timing
    t = time.perf_counter()
    result = run_agent(agent, episodes, graphs)
    return time.perf_counter() - t, result.records, result.steps


def _shards(args: argparse.Namespace, n: int, tmp: Path) -> tuple[float, bytes]:
    out = tmp / f"shards{n}" / "preds.json"
    base = [sys.executable, "-m", "vlneval", "run", "--task", args.task, "--agent", args.agent,
            "--out", str(out), "--quiet"]  # fmt: skip
    if args.data:
        base += ["--data-root", str(args.data)]
    if args.split:
        base += ["--split", args.split]
    t = time.perf_counter()
    procs = [subprocess.Popen([*base, "--shard", f"{i}/{n}"], cwd=ROOT, stderr=subprocess.DEVNULL)
             for i in range(n)]  # fmt: skip
    if any(p.wait() for p in procs):
        raise SystemExit("a shard failed")
    subprocess.run([sys.executable, "-m", "vlneval", "merge", str(out.parent), "--out", str(out)],
                   check=True, cwd=ROOT, stderr=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - t, out.read_bytes()


def _ray(args: argparse.Namespace, chunk: int) -> tuple[float, list[Any]]:
    from vlneval.distributed.executors import Workload
    from vlneval.distributed.executors.ray_executor import RayOptions, run_on_ray

    w = Workload(task=args.task, split=args.split, agent=args.agent,
                 data_root=None if args.data is None else str(args.data))  # fmt: skip
    n = len(w.load().episodes)
    got: dict[int, Any] = {}
    t = time.perf_counter()
    run_on_ray(w, range(n), options=RayOptions(num_actors=args.actors, chunk=chunk),
               on_record=got.__setitem__)  # fmt: skip
    return time.perf_counter() - t, [got[i] for i in range(n)]


def _http(args: argparse.Namespace) -> tuple[float, list[Any], int]:
    from vlneval.agents.registry import get_agent
    from vlneval.agents.remote import remote_agent_info
    from vlneval.agents.remote_server import AgentServer
    from vlneval.agents.rollout import run_agent
    from vlneval.envs.loading import load_episodes

    episodes, graphs = load_episodes(args.task, args.split, root=args.data)
    server = AgentServer(get_agent(args.agent), port=0)
    with server.running():
        counted = _Counting(server)
        agent = remote_agent_info(server.url)
        t = time.perf_counter()
        result = run_agent(agent, episodes, graphs)
        return time.perf_counter() - t, result.records, counted.n


class _Counting:
    def __init__(self, server: Any) -> None:
        self.n = 0
        inner = server.handle

        def handle(path: str, body: Any) -> Any:
            self.n += 1
            return inner(path, body)

        server.handle = handle


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=None)
    p.add_argument("--task", default="demo")
    p.add_argument("--split", default=None)
    p.add_argument("--agent", default="random")
    p.add_argument("--actors", type=int, default=2)
    p.add_argument("--chunks", default="8,64")
    p.add_argument("--shards", type=int, default=2)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()
    rows: list[dict[str, Any]] = []

    local_s, records, steps = _local(args)
    n = len(records)
    rows.append({"row": "local (1 process)", "seconds": local_s})
    with tempfile.TemporaryDirectory() as tmp:
        from vlneval.envs.graph.submission import task_records
        from vlneval.envs.loading import load_episodes
        from vlneval.envs.recording import write_predictions

        episodes, _ = load_episodes(args.task, args.split, root=args.data)
        single = Path(tmp) / "single.json"
        write_predictions(single, task_records(args.task, episodes, records)[0])
        s, data = _shards(args, args.shards, Path(tmp))
        assert data == single.read_bytes(), "shards differ from the single process"
        rows.append({"row": f"shards x{args.shards} (processes + merge)", "seconds": s})

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=max(args.actors, 2), include_dashboard=False, log_to_driver=False)
    rows.append({"row": "ray cluster start (once)", "seconds": time.perf_counter() - t,
                 "fixed": True})  # fmt: skip
    for chunk in (int(c) for c in args.chunks.split(",")):
        s, got = _ray(args, chunk)
        assert got == records, "the Ray run differs from the single process"
        rows.append({"row": f"ray {args.actors} actors, chunk {chunk}", "seconds": s})
    ray.shutdown()

    s, got, requests = _http(args)
    assert got == records, "the HTTP agent differs from the in-process agent"
    rows.append({"row": f"http agent ({requests} requests)", "seconds": s,
                 "per_request_ms": 1000 * (s - local_s) / requests})  # fmt: skip

    print(f"{args.task} {args.split or ''} {args.agent}: {n} episodes, {steps} steps\n")
    print("| run | wall s | episodes/s | overhead per episode (ms) |")
    print("|---|---:|---:|---:|")
    for r in rows:
        if r.get("fixed"):
            print(f"| {r['row']} | {r['seconds']:.2f} | | |")
            continue
        over = 1000 * (r["seconds"] - local_s) / n
        extra = f" ({r['per_request_ms']:.2f} ms per request)" if "per_request_ms" in r else ""
        print(f"| {r['row']} | {r['seconds']:.2f} | {n / r['seconds']:.0f} | {over:+.2f}{extra} |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"episodes": n, "steps": steps, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
