"""``--shard auto`` under torchrun, srun and SLURM arrays (faked environments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.distributed.conftest import vlneval
from vlneval.distributed import detect
from vlneval.distributed.detect import resolve_shard
from vlneval.errors import VLNEvalError

LAUNCHERS = ("RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_ARRAY_TASK_ID",
             "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT",
             "SLURM_ARRAY_TASK_STEP")  # fmt: skip


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LAUNCHERS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("env", "label"),
    [
        ({"RANK": "5", "WORLD_SIZE": "8", "LOCAL_RANK": "1"}, "5/8"),
        ({"SLURM_PROCID": "2", "SLURM_NTASKS": "4"}, "2/4"),
        ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "7"}, "3/7"),
        ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7"}, "3/7"),
        ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_PROCID": "1",
          "SLURM_NTASKS": "4"}, "5/8"),
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, None),
        ({"RANK": "1", "WORLD_SIZE": "2", "SLURM_PROCID": "0", "SLURM_NTASKS": "4"}, "1/2"),
    ],
)  # fmt: skip
def test_detect(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], label: str | None) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    found = detect()
    assert (found.label if found else None) == label


def test_explicit_beats_detected_and_bad_arrays_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert resolve_shard("1/2").label == "1/2"
    with pytest.raises(VLNEvalError, match="not one of 3 evenly spaced tasks"):
        detect(
            {"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "3"}
        )
    with pytest.raises(VLNEvalError, match="expected i/n"):
        resolve_shard("3-4")


@pytest.mark.parametrize(
    ("env", "name", "source"),
    [
        ({"RANK": "1", "WORLD_SIZE": "2"}, "preds.shard-1-of-2", "torchrun"),
        ({"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, "preds.shard-1-of-2", "srun"),
        ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "2"},
         "preds.shard-1-of-2", "SLURM array"),
    ],
)  # fmt: skip
def test_run_shard_auto(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str], name: str, source: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = tmp_path / "preds.json"
    assert (
        vlneval(
            "run", "--task", "demo", "--agent", "stop", "--out", out, "--shard", "auto", "--quiet"
        )
        == 0
    )
    manifest = json.loads((tmp_path / f"{name}.manifest.json").read_text())
    assert manifest["shard_source"].startswith(source) and manifest["status"] == "complete"
    assert manifest["assigned"] == list(range(18, 36))


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RANK": "1"}, "RANK=1 is set but WORLD_SIZE is not: pass --shard i/n (or set both)"),
        ({"WORLD_SIZE": "4"}, "WORLD_SIZE=4 is set but RANK is not: pass --shard i/n (or set both)"),
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "0"},
         "SLURM_ARRAY_TASK_COUNT=0 must be >= 1"),
    ],
)  # fmt: skip
def test_incomplete_launcher_variables_are_refused_in_one_line(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(VLNEvalError) as info:
        resolve_shard("auto", env)
    assert str(info.value) == message


def test_run_shard_auto_without_a_launcher_is_an_unsharded_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "preds.json"
    plain = tmp_path / "plain.json"
    args = ("run", "--task", "demo", "--agent", "random", "--seed", "3", "--quiet")
    assert vlneval(*args, "--out", out, "--shard", "auto", "--resume") == 0
    assert capsys.readouterr().err == (
        "note: --shard auto: no launcher variables found (torchrun's RANK/WORLD_SIZE, SLURM's); "
        f"running unsharded into {out} (--resume ignored)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["preds.json", "preds.protocol.json"]
    assert vlneval(*args, "--out", plain) == 0
    assert out.read_bytes() == plain.read_bytes()
