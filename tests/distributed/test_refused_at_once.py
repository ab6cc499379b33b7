"""Shard and sweep settings that cannot work are refused at once, before any plan is built
or any unit is written (a typo must not hang, eat memory, or fail N cluster jobs later)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from vlneval.cli.main import main
from vlneval.distributed.merge import card_path


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
    assert capsys.readouterr().err == (
        f"error: --checkpoints {missing}: no file matches this pattern\n"
    )
    gone = tmp_path / "ckpt" / "iter_100.pth"  # a plain name: no such file
    assert _plan(tmp_path, "--checkpoints", ckpt, gone, "--", "run", "--task", "demo",
                 "--agent", "random") == 2  # fmt: skip
    assert capsys.readouterr().err == f"error: --checkpoints {gone}: no such file or folder\n"
    assert not (tmp_path / "u.jsonl").exists()


STEPS = (
    "error: --max-steps must be a positive integer up to 10,000 (the environment reserves memory "
    "for every step up front; the standard limits are 35 to 1,000), got {}\n"
)


@pytest.mark.parametrize("agent", ["random", "http://127.0.0.1:9"])
def test_a_sweep_with_a_malformed_agent_arg(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str
) -> None:
    """Every unit's run would refuse it (a remote agent's too), so the plan does."""
    assert _plan(tmp_path, "--", "run", "--task", "demo", "--agent", agent,
                 "--agent-arg", "bad") == 2  # fmt: skip
    assert capsys.readouterr().err == (
        "error: --agent-arg 'bad': expected KEY=VALUE with KEY a Python name\n"
    )
    assert not (tmp_path / "u.jsonl").exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--seed", "-1"], "error: --seed must be a non-negative integer, got -1\n"),
        (["--max-steps", "1000000000"], STEPS.format(1000000000)),
        (["--max-steps", "100000000000000000000"], STEPS.format(100000000000000000000)),
        (["--max-steps", "0"], STEPS.format(0)),
    ],
)
@pytest.mark.parametrize(
    "mode",
    [[], ["--shard", "0/1"], ["--agent", "http://127.0.0.1:9"], ["--executor", "ray"],
     ["--env", "continuous-r2r-ce", "--agent", "continuous-stop"]],
)  # fmt: skip
def test_a_negative_seed_or_an_impossible_step_limit_in_every_run_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str,
    mode: list[str],
) -> None:  # fmt: skip
    out = tmp_path / "p.json"
    assert vlneval("run", "--task", "demo", "--agent", "stop", *option, *mode, "--out", out) == 2
    assert capsys.readouterr().err == message
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_with_a_negative_seed_or_an_impossible_step_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _plan(tmp_path, "--seeds", 0, -2, "--", "run", "--task", "demo", "--agent",
                 "random") == 2  # fmt: skip
    assert capsys.readouterr().err == "error: --seeds must be a non-negative integer, got -2\n"
    assert _plan(tmp_path, "--", "run", "--task", "demo", "--agent", "random", "--max-steps",
                 10001) == 2  # fmt: skip
    assert capsys.readouterr().err == STEPS.format(10001)
    assert list(tmp_path.iterdir()) == []


def test_the_longest_step_limit_runs(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    assert vlneval("run", "--task", "demo", "--agent", "stop", "--max-steps", 10000, "--out",
                   out, "--quiet") == 0  # fmt: skip
    assert json.loads(card_path(out).read_text())["inference_budget"]["max_steps"] == 10000


def test_without_ray_nothing_is_written_and_no_progress_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    for shard in ([], ["--shard", "0/2"]):
        out = tmp_path / "r.json"
        assert vlneval("run", "--task", "demo", "--agent", "random", "--executor", "ray",
                       *shard, "--out", out) == 2  # fmt: skip
        assert capsys.readouterr().err == (
            'error: --executor ray needs Ray: pip install "vlneval[ray]" (or pip install ray)\n'
        )
        assert list(tmp_path.iterdir()) == []
