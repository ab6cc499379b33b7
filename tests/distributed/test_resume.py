"""A shard killed with SIGKILL mid-run, then resumed, gives the bytes of an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.distributed.conftest import vlneval
from vlneval.distributed import merge

ROOT = Path(__file__).resolve().parents[2]
SLOW = "tests.distributed.agents:SlowRandom"


def _args(out: Path) -> list[str]:
    return [
        "run",
        "--task",
        "demo",
        "--agent",
        SLOW,
        "--out",
        str(out),
        "--shard",
        "0/2",
        "--quiet",
    ]


def test_sigkill_then_resume_gives_the_same_bytes(tmp_path: Path) -> None:
    ref = tmp_path / "ref" / "preds.json"
    ref.parent.mkdir()  # a missing output folder is an error
    assert (
        vlneval(
            "run",
            "--task",
            "demo",
            "--agent",
            "random",
            "--out",
            ref.with_name("single.json"),
            "--quiet",
        )
        == 0
    )
    killed = tmp_path / "killed" / "preds.json"
    killed.parent.mkdir()
    records = killed.with_name("preds.shard-0-of-2.jsonl")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen([sys.executable, "-m", "vlneval", *_args(killed)], cwd=ROOT, env=env,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if records.exists() and records.read_bytes().count(b"\n") >= 4:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    written = records.read_bytes().count(b"\n")
    assert 4 <= written < 18  # killed mid-run
    with open(records, "ab") as fh:  # and as if killed mid-line
        fh.write(b'{"i": 17, "id": "105_')
    assert vlneval(*_args(killed), "--resume") == 0
    assert (
        vlneval(
            "run", "--task", "demo", "--agent", SLOW, "--out", killed, "--shard", "1/2", "--quiet"
        )
        == 0
    )
    lines = records.read_bytes().splitlines()
    assert len(lines) == 18 and len({line.split(b',"record"')[0] for line in lines}) == 18
    merged = merge([killed.parent], out=killed)
    assert killed.read_bytes() == ref.with_name("single.json").read_bytes()
    assert merged.n_episodes == 36


def test_resume_refuses_other_settings_and_skips_a_complete_shard(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "preds.json"
    base = ["run", "--task", "demo", "--agent", "random", "--out", out, "--shard", "0/2", "--quiet"]
    assert vlneval(*base) == 0
    assert capsys.readouterr().err == ""  # --quiet: no shard summary either
    assert vlneval(*base[:-1], "--resume") == 0
    assert "(18 already written, 0 run)" in capsys.readouterr().err
    assert vlneval(*base, "--resume", "--seed", "3") == 2
    assert "--resume: the shard on disk has seed = 0 but this run has 3" in capsys.readouterr().err


def test_shard_progress_lines_in_a_log(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Not a terminal (a SLURM log): plain lines labelled with the shard, ending at 100%."""
    out = tmp_path / "preds.json"
    assert (
        vlneval("run", "--task", "demo", "--agent", "random", "--out", out, "--shard", "0/2") == 0
    )
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("shard 0/2: ")]
    assert lines[0].startswith("shard 0/2: 0/18 episodes (0%)")
    assert lines[-1].split(",")[0] == "shard 0/2: 18/18 episodes (100%)"


def test_a_rerun_without_resume_says_it_discards_the_finished_episodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "preds.json"
    args = ["run", "--task", "demo", "--agent", "random", "--out", out, "--shard", "0/2", "--quiet"]
    assert vlneval(*args) == 0
    records = tmp_path / "preds.shard-0-of-2.jsonl"
    lines = records.read_bytes().splitlines(keepends=True)
    records.write_bytes(b"".join(lines[:5]) + lines[5][:9])  # killed: 5 episodes and a torn line
    capsys.readouterr()
    assert vlneval(*args) == 0
    assert capsys.readouterr().err == (
        f"warning: starting shard 0/2 over: the 5 finished episodes in {records} are discarded "
        "(pass --resume to keep them)\n"
    )
    assert vlneval(*args, "--resume") == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_shard_stopped_by_a_signal_says_so_and_how_to_resume(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    out = tmp_path / "preds.json"
    records = out.with_name("preds.shard-0-of-2.jsonl")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    argv = [a for a in _args(out) if a != "--quiet"]  # its progress lines, as in a SLURM log
    proc = subprocess.Popen([sys.executable, "-m", "vlneval", *argv], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if records.exists() and records.read_bytes().count(b"\n") >= 3:
            break
        time.sleep(0.05)
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    n = records.read_bytes().count(b"\n")
    lines = err.splitlines()
    assert lines[-2].startswith(f"shard 0/2: {n}/18 episodes (") and lines[-2].endswith(" stopped")
    assert lines[-1] == (
        f"shard 0/2: stopped by {sig.name} at {n}/18 episodes (kept in {records}); run the same "
        "command with --resume to finish"
    )
    assert vlneval(*_args(out), "--resume") == 0
    assert records.read_bytes().count(b"\n") == 18
