"""Environment steps per second: single and batched, no features, a random policy acting.

Run: ``.venv/bin/python benchmarks/bench_env.py`` (R2R val_unseen from ``$VLNEVAL_DATA`` or
``../shared/data`` when present, else the shipped demo). Prints one line per configuration.

Every step is a real environment step: the policy draws a uniformly random valid action from the
observation (candidates, plus the four camera actions in the egocentric space), the environment
validates it, moves, records the executed path and builds the next observation; finished
episodes are replaced by the next ones (the single env calls ``reset``, the vector env
auto-resets from its queue). Random numbers are drawn in blocks so that the policy's cost is
the environment's caller's, not numpy's per-call overhead.

Each configuration is measured ``--repeats`` times; the best and median rates are printed, per
second of wall time and per second of this process's CPU time (on a shared machine the CPU
rate is what one idle core would give).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from vlneval.envs.graph.env import GraphNavEnv
from vlneval.envs.graph.vector import VectorGraphNavEnv
from vlneval.envs.loading import load_episodes

N_CAMERA = 4


def _data() -> tuple[object, object, str]:
    root = Path(
        os.environ.get("VLNEVAL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
    )
    if (root / "r2r").is_dir():
        eps, store = load_episodes("r2r", "val_unseen", root=root)
        return eps, store, "r2r val_unseen"
    eps, store = load_episodes("demo")
    return eps, store, "demo (synthetic)"


def bench_single(episodes, graphs, space: str, steps: int, seed: int = 0) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Steps per second (wall, CPU) of one ``GraphNavEnv``."""
    env = GraphNavEnv(episodes, graphs, action_space=space, seed=seed)
    extra = N_CAMERA if space == "egocentric" else 0
    u = np.random.default_rng(seed).random(steps).tolist()
    obs, _ = env.reset()
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(steps):
        n = len(obs["candidates"])
        a = int(u[k] * (n + extra))
        if a >= n:
            a = n - 1 - a  # -1..-4: the camera actions
        obs, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            obs, _ = env.reset()
    return steps / (time.perf_counter() - t0), steps / (time.process_time() - c0)


def bench_vector(
    episodes, graphs, space: str, batch: int, steps: int, seed: int = 0
) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Steps per second (wall, CPU) of a ``VectorGraphNavEnv`` with ``batch`` slots."""
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=batch, action_space=space, seed=seed)
    extra = N_CAMERA if space == "egocentric" else 0
    rng = np.random.default_rng(seed)
    calls = max(1, steps // batch)
    queue = np.resize(np.arange(len(episodes)), calls * batch)  # enough episodes never to idle
    u = rng.random((calls, batch))
    obs, _ = venv.reset(options={"episodes": queue})
    venv.step(np.zeros(batch, np.int32))  # compile outside the timing
    obs, _ = venv.reset(options={"episodes": queue})
    done = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(calls):
        n = obs.num_candidates
        a = (u[k] * (n + extra)).astype(np.int32)
        a = np.where(a >= n, n - 1 - a, a)
        done += int(obs.active.sum())
        obs, _, _, _, _ = venv.step(a)
    return done / (time.perf_counter() - t0), done / (time.process_time() - c0)


def _report(label: str, rates: list[tuple[float, float]]) -> None:
    wall, cpu = np.array(rates).T
    print(
        f"{label:42s} wall best {wall.max():11,.0f} median {np.median(wall):11,.0f} | "
        f"CPU best {cpu.max():11,.0f} median {np.median(cpu):11,.0f} steps/s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=500_000, help="steps per measurement")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per configuration")
    parser.add_argument("--batches", default="64,256,1024")
    args = parser.parse_args()
    episodes, graphs, label = _data()
    print(
        f"episodes: {label} ({len(episodes)}); no features; random policy; "
        f"{args.repeats} x {args.steps:,} steps each"
    )
    for space in ("panoramic", "egocentric"):
        rates = [
            bench_single(episodes, graphs, space, args.steps, seed=r) for r in range(args.repeats)
        ]
        _report(f"{space} single  GraphNavEnv", rates)
        for b in (int(x) for x in args.batches.split(",")):
            rates = [
                bench_vector(episodes, graphs, space, b, args.steps, seed=r)
                for r in range(args.repeats)
            ]
            _report(f"{space} batched VectorGraphNavEnv B={b}", rates)


if __name__ == "__main__":
    main()
