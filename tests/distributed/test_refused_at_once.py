"""Shard and sweep settings that cannot work are refused at once, before any plan is built
or any unit is written (a typo must not hang, eat memory, or fail N cluster jobs later)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vlneval.cli.main import main


def vlneval(*args: Any) -> int:
    return main([str(a) for a in args])


@pytest.mark.parametrize("count", ["37", "1000000000000"])
def test_more_shards_than_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], count: str
) -> None:
    out = tmp_path / "p.json"
    assert vlneval("run", "--task", "demo", "--agent", "stop", "--shard", f"0/{count}",
                   "--out", out) == 2  # fmt: skip
    assert capsys.readouterr().err == (
        f"error: shard 0/{count} (explicit): more shards than the 36 episodes of demo val: "
        "use at most 36 shards\n"
    )
    assert list(tmp_path.iterdir()) == []


def _plan(tmp_path: Path, *args: Any) -> int:
    return vlneval("sweep", "plan", "--units", tmp_path / "u.jsonl", "--runs-dir",
                   tmp_path / "runs", *args)  # fmt: skip


def test_a_sweep_of_too_many_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _plan(tmp_path, "--seeds", 0, 1, "--shards", 100000000000, "--", "run", "--task",
                 "demo", "--agent", "random") == 2  # fmt: skip
    assert capsys.readouterr().err == (
        "error: a sweep of 1 checkpoints x 2 seeds x 100000000000 shards is 200000000000 units, "
        "more than 1000000: use fewer shards (a run needs no more shards than its split has "
        "episodes)\n"
    )
    assert not (tmp_path / "u.jsonl").exists()


def test_a_sweep_with_an_unknown_task_or_a_missing_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = tmp_path / "c.pth"
    ckpt.write_text("3")
    assert _plan(tmp_path, "--checkpoints", ckpt, "--", "run", "--task", "dmeo",
                 "--agent", "random") == 2  # fmt: skip
    assert capsys.readouterr().err.startswith("error: unknown task 'dmeo'; did you mean 'demo'?")
    missing = tmp_path / "ckpt" / "none*.pth"  # a shell pattern that matched nothing
    assert _plan(tmp_path, "--checkpoints", ckpt, missing, "--", "run", "--task", "demo",
                 "--agent", "random") == 2  # fmt: skip
    assert capsys.readouterr().err == f"error: --checkpoints {missing}: no such file or folder\n"
    assert not (tmp_path / "u.jsonl").exists()
