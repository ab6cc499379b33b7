"""Shared helpers: run the CLI in-process and read files."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlneval.cli.main import main


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
