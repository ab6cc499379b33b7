"""Street environment (Touchdown) steps per second, a random policy acting, and the baselines' run
times on the dev routes.

Run: ``.venv/bin/python benchmarks/bench_street_env.py`` (Touchdown from ``$VLNEVAL_DATA`` or
``../shared/data``; the unseen-split dev routes). Every step is a real step: the policy draws one
of STOP (with probability ``--stop``), FORWARD, TURN_LEFT, TURN_RIGHT; the environment validates
it, moves, records the path and builds the next observation (links and candidates); finished
routes are replaced by a random next one. Prints the best and median of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from vlneval.agents.registry import get_agent
from vlneval.agents.street import run_street
from vlneval.envs.street.env import StreetNavEnv
from vlneval.envs.street.loading import load_street_episodes

ACTIONS = (1, -1, -2)


def _root() -> Path:
    default = Path(__file__).resolve().parents[2] / "shared" / "data"
    return Path(os.environ.get("VLNEVAL_DATA", default))


def bench_steps(env: StreetNavEnv, steps: int, stop: float, seed: int) -> float:
    """Environment steps per second of wall time under a random policy."""
    rng = np.random.default_rng(seed)
    u = rng.random(steps).tolist()
    pick = rng.integers(0, 3, steps).tolist()
    env.reset(seed=seed)
    t0 = time.perf_counter()
    for k in range(steps):
        a = 0 if u[k] < stop else ACTIONS[pick[k]]
        _, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - t0)


def main() -> None:
    """Prints the figures."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--stop", type=float, default=0.02, help="probability of STOP per step")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    episodes, graph = load_street_episodes("touchdown", "dev", root=_root(), data_version="unseen")
    env = StreetNavEnv(episodes, graph)
    rates = [bench_steps(env, args.steps, args.stop, s) for s in range(args.repeats)]
    print(
        f"street env, random policy: best {max(rates):,.0f} steps/s, "
        f"median {statistics.median(rates):,.0f} steps/s ({args.steps:,} steps x {args.repeats})"
    )
    for name in ("stop", "random", "shortest"):
        result = run_street(get_agent(name), episodes, graph)
        print(
            f"run {name:9s}: {result.n_episodes} routes, {result.steps:,} steps in "
            f"{result.seconds:.2f} s ({result.steps / result.seconds:,.0f} steps/s)"
        )


if __name__ == "__main__":
    main()
