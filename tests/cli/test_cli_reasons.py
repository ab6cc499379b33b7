"""Every n/a says why on stderr; non-finite aggregates are null with a reason, never a string,
and never valid; the README's own-agent example works through the console script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.tasks.vlnce.helpers import steps, write_split

from vlneval.cli.main import main
from vlneval.io import to_json_bytes

VLNEVAL = Path(sys.executable).with_name("vlneval")
README = Path(__file__).resolve().parents[2] / "README.md"
STRAIGHT = [[0.0, 0.0, -float(k)] for k in range(5)]
Capture = pytest.CaptureFixture[str]


def _split(tmp_path: Path, preds: dict[str, object]) -> list[str]:
    ep, gt = write_split(tmp_path)
    path = tmp_path / "p.json"
    path.write_text(json.dumps(preds))
    return ["--task", "r2r-ce", "--split", "val", "--episodes", str(ep), "--predictions",
            str(path)]  # fmt: skip


def test_vlnce_na_metrics_say_why_on_stderr(tmp_path: Path, capsys: Capture) -> None:
    args = _split(tmp_path, {"1": steps(STRAIGHT), "2": steps(STRAIGHT)})  # no distances
    summary = tmp_path / "s.json"
    gt = str(tmp_path / "val_gt.json")
    assert main(["score", *args, "--gt", gt, "--json", str(summary)]) == 0
    out, err = capsys.readouterr()
    assert out.count("n/a") == 5 and "note" not in out and "warning" not in out
    note = re.search(r"^note: NE, OSR, SR, SPL, sDTW are n/a: (.+)$", err, re.M)
    assert note is not None, err
    assert "distance_to_goal" in note.group(1) and "--distance twin" in note.group(1)
    record = json.loads(summary.read_text())
    assert record["metrics"]["SR"] is None and record["unavailable"]["SR"] == note.group(1)
    assert main(["score", *args, "--distance", "none"]) == 0  # the option the note names
    assert note.group(0) in capsys.readouterr().err.splitlines()


def _overflowing(tmp_path: Path) -> list[str]:
    far = [[0.0, 0.0, 0.0], [1e200, 0.0, 0.0], [0.0, 0.0, -4.0]]  # a step of 1e200 m
    preds = {"1": steps(far, [4.0, 4.0, 0.0]), "2": steps(STRAIGHT, [4, 3, 2, 1, 0.5])}
    return [*_split(tmp_path, preds), "--profile", "vlnce-exact"]


def test_an_overflowing_position_is_refused_naming_file_episode_and_field(
    tmp_path: Path, capsys: Capture
) -> None:
    summary = tmp_path / "s.json"
    assert main(["score", *_overflowing(tmp_path), "--json", str(summary)]) == 2
    err = capsys.readouterr().err
    assert (
        'p.json: episode_id "1": [1].position: position [1e+200, 0.0, 0.0] has a coordinate '
        "beyond ±1e+06 m" in err
    )
    assert not summary.exists()


def test_validate_refuses_an_overflowing_position(tmp_path: Path, capsys: Capture) -> None:
    assert main(["validate", *_overflowing(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert "ok:" not in out and 'episode_id "1": [1].position' in err


def test_non_finite_values_are_never_strings() -> None:
    raw = to_json_bytes({"a": float("inf"), "b": [float("-inf"), float("nan")], "c": 1.5})
    assert json.loads(raw) == {"a": None, "b": [None, None], "c": 1.5}


def test_aggregate_says_why_a_metric_is_left_out(tmp_path: Path, capsys: Capture) -> None:
    card = {"task": "r2r", "split": "val", "privileged": "none",
            "scoring": {"profile": "r2r", "profile_version": "1"}}  # fmt: skip
    runs = []
    for k, sr in enumerate([0.5, None]):
        p = tmp_path / f"s{k}.json"
        unavailable = {} if sr is not None else {"SR": "no distances in this run"}
        p.write_text(json.dumps({"metrics": {"SR": sr, "TL": 9.0 + k}, "protocol": card,
                                 "unavailable": unavailable}))  # fmt: skip
        runs.append(str(p))
    out_json = tmp_path / "agg.json"
    assert main(["aggregate", *runs, "--json", str(out_json)]) == 0
    out, err = capsys.readouterr()
    assert "TL (m)" in out and "SR" not in out
    assert "note: SR is left out of the aggregate: n/a in s1: no distances in this run" in err
    assert json.loads(out_json.read_text())["unavailable"]["SR"].startswith("n/a in s1")
    assert main(["aggregate", runs[0]]) == 0
    out, err = capsys.readouterr()
    assert "–" in out and "note: std and the interval are – : they need at least two runs" in err


def _readme_agent() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"```python\n(# mypkg/agents\.py\n.*?)```", text, re.S)
    assert match is not None, "the README's own-agent example moved"
    return match.group(1)


def _readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```bash\n(python -c .*?check_agent.*?)```", text, re.S)
    assert block is not None, "the README's own-agent commands moved"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_readme_own_agent_example_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "agents.py").write_text(_readme_agent())  # no __init__.py, as written
    env_bin = str(VLNEVAL.parent)
    for line in _readme_commands():
        done = subprocess.run(
            line, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=300,
            env={"PATH": f"{env_bin}:/usr/bin:/bin", "HOME": str(tmp_path)}, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{line}\n{done.stderr}"
    card = json.loads((tmp_path / "preds.protocol.json").read_text())
    assert card["agent"]["id"] == "mypkg.agents:NearestThrice"
    assert json.loads((tmp_path / "preds.json").read_text())[0]["instr_id"] == "100_0"


def test_an_own_agent_that_is_not_there_is_named(tmp_path: Path, capsys: Capture) -> None:
    args = ["run", "--task", "demo", "--agent", "nopkg.agents:X", "--out", str(tmp_path / "p")]
    assert main(args) == 2
    assert "cannot import module 'nopkg.agents'" in capsys.readouterr().err
