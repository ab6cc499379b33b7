"""Shared helpers: run the CLI in-process and read files; the session's Ray cluster."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vlneval.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A local cluster of two CPUs and two GPUs for every Ray test of the session (starting one
    takes seconds). The GPUs are declared, not real: Ray schedules and assigns them (GPU ids,
    ``CUDA_VISIBLE_DEVICES``) as it would real ones, so placement is tested without a GPU."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray = pytest.importorskip("ray")
    started = time.perf_counter()
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})  # fmt: skip
    print(f"ray cluster up in {time.perf_counter() - started:.1f} s")
    yield ray
    ray.shutdown()


def vlneval(*args: str) -> int:
    """``vlneval ARGS`` in-process; the exit code."""
    return main([str(a) for a in args])


@pytest.fixture
def demo_shards(tmp_path: Path) -> Path:
    """Three complete shards of the demo run (random agent, seed 0); the merged path."""
    out = tmp_path / "preds.json"
    for i in range(3):
        code = vlneval(
            "run",
            "--task",
            "demo",
            "--agent",
            "random",
            "--out",
            out,
            "--shard",
            f"{i}/3",
            "--quiet",
        )
        assert code == 0
    return out
