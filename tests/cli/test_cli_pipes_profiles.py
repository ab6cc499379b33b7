"""A closed stdout pipe ends any command quietly; ``vlneval run --profile`` is checked before
the run, with or without ``--score``."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vlneval.cli.main import _pipe_safe, main

REPO = Path(__file__).resolve().parents[2]


def _closed_pipe_run(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """Runs ``vlneval ARGV`` with stdout a pipe whose reader has already gone."""
    read, write = os.pipe()
    os.close(read)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # every print writes at once
    try:
        return subprocess.run(
            [sys.executable, "-m", "vlneval", *argv],
            stdout=write, stderr=subprocess.PIPE, env=env, cwd=REPO, timeout=120, check=False,
        )  # fmt: skip
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "argv", [("profiles",), ("tasks",), ("agents",), ("data", "list", "--data-root", "nowhere")]
)
def test_a_closed_stdout_pipe_ends_quietly(argv: tuple[str, ...]) -> None:
    done = _closed_pipe_run(*argv)
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr and b"internal error" not in done.stderr
    assert done.stderr == b""


def test_other_broken_pipes_stay_errors(capsys: pytest.CaptureFixture[str]) -> None:
    # e.g. a remote agent's socket: stdout and stderr are fine, so it is not swallowed
    def fn(args: argparse.Namespace) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(BrokenPipeError):
        _pipe_safe(fn)(argparse.Namespace())


def _run(root: Path, tmp: Path, *extra: str) -> list[str]:
    return ["run", "--task", "r2r", "--split", "val_seen", "--data-root", str(root),
            "--agent", "stop", "--out", str(tmp / "p.json"), "--limit", "1", "--quiet", *extra]  # fmt: skip


def test_run_refuses_an_unknown_profile_before_running(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for extra in ((), ("--score",)):
        assert main(_run(data_root, tmp_path, "--profile", "r2r-dute", *extra)) == 2
        err = capsys.readouterr().err
        assert "unknown profile 'r2r-dute'; did you mean 'r2r-duet'?" in err
        assert not (tmp_path / "p.json").exists()  # refused before the run


def test_run_refuses_a_profile_of_another_task(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(data_root, tmp_path, "--profile", "cvdn")) == 2
    err = capsys.readouterr().err
    assert "profile cvdn does not score task r2r (its profiles: r2r, r2r-envdrop, r2r-duet)" in err
    assert not (tmp_path / "p.json").exists()


def test_run_takes_a_profile_in_any_case(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(data_root, tmp_path, "--profile", "R2R-DUET", "--score")) == 0
    assert (tmp_path / "p.json").exists()
