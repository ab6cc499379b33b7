"""The ``vlneval`` command: exit codes, clean stdout, files written, the demo, a light import."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.fixtures import preds, square_root, write_json

from vlneval.cli.main import main
from vlneval.tasks.common.root import demo_root
from vlneval.tasks.demo.generate import generate


def test_demo_scores_with_no_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--task", "demo"]) == 0
    out, err = capsys.readouterr()
    assert "demo val" in out and "SR (%)" in out and "synthetic" not in out  # only the table
    assert (
        err
        == "warning: the demo task is synthetic (generated houses and episodes), not real data\n"
    )


def test_score_writes_summary_and_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary, table = tmp_path / "s.json", tmp_path / "e.csv"
    args = ["score", "--task", "demo", "--json", str(summary), "--per-episode", str(table)]
    assert main(args) == 0
    s = json.loads(summary.read_text())
    assert s["task"] == "demo" and s["profile"]["name"] == "demo" and s["n_episodes"] == 36
    assert set(s["metrics"]) == {"TL", "NE", "OSR", "SR", "SPL", "nDTW", "sDTW", "CLS"}
    assert all(0 <= s["metrics"][k] <= 1 for k in ("SR", "OSR", "SPL", "nDTW", "sDTW", "CLS"))
    assert {c["name"] for c in s["checks"]} >= {"SR <= OSR", "SPL <= SR", "sDTW <= SR"}
    assert s["protocol"]["scoring"]["comparison"] == "NE < 3.0"
    rows = list(csv.DictReader(table.open()))
    assert len(rows) == 36 and rows[0]["instr_id"] == "100_0"
    mean_sr = sum(float(r["success"]) for r in rows) / len(rows)
    assert mean_sr == pytest.approx(s["metrics"]["SR"])
    for suffix in (".jsonl", ".parquet"):
        assert (
            main(
                [
                    "score",
                    "--task",
                    "demo",
                    "--quiet",
                    "--per-episode",
                    str(tmp_path / f"e{suffix}"),
                ]
            )
            == 0
        )
    assert len((tmp_path / "e.jsonl").read_text().splitlines()) == 36


def test_bad_file_exits_2_with_named_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = square_root(tmp_path / "root")
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S", "B"], "1_1": ["S"], "1_2": ["S"]}))
    code = main(["score", "--task", "r2r", "--split", "val", "--data-root", str(root),
                 "--predictions", str(p)])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert 'instr_id "1_0": trajectory[1]: viewpoint B is not a neighbour of S' in err
    assert "Traceback" not in err


def test_validate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = square_root(tmp_path / "root")
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S"], "1_1": ["S"], "1_2": ["S", "G"]}))
    base = [
        "validate",
        "--task",
        "r2r",
        "--split",
        "val",
        "--data-root",
        str(root),
        "--predictions",
    ]
    assert main([*base, str(p)]) == 0
    assert "ok:" in capsys.readouterr().out
    q = write_json(tmp_path / "q.json", preds({"1_0": ["S"]}))
    assert main([*base, str(q)]) == 2
    assert "2 of 3 episodes have no prediction" in capsys.readouterr().err


def test_unknown_profile_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--task", "demo", "--profile", "r2r-duett"]) == 2
    assert "did you mean 'r2r-duet'" in capsys.readouterr().err


def test_missing_data_root_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["score", "--task", "r2r", "--data-root", str(tmp_path), "--predictions", "x.json"])
    assert code == 2 and "no r2r val_unseen episodes found" in capsys.readouterr().err


def test_listing_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks"]) == 0 and "r2r" in capsys.readouterr().out
    assert main(["profiles", "r4r-google"]) == 0
    assert '"sdtw_inclusive": true' in capsys.readouterr().out


def test_shipped_demo_is_what_the_generator_writes(tmp_path: Path) -> None:
    generate(tmp_path)
    for f in tmp_path.rglob("*.json"):
        assert f.read_bytes() == (demo_root() / f.relative_to(tmp_path)).read_bytes(), f


def test_import_is_light() -> None:
    code = "import sys, vlneval; print(any(m in sys.modules for m in ('numba', 'scipy', 'matplotlib')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_task_option_on_the_wrong_task_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--task", "demo", "--path-type", "planner_path"]) == 2
    assert (
        "option path_type (--path-type) does not apply to task demo (its options: none)"
        in capsys.readouterr().err
    )


def test_the_command_flushes_everything_before_its_fast_exit(tmp_path: Path) -> None:
    """``python -m vlneval`` (like the ``vlneval`` script) leaves through ``os._exit``: its
    output, files and exit codes must all be there."""
    summary = tmp_path / "s.json"
    ok = subprocess.run(
        [sys.executable, "-m", "vlneval", "score", "--task", "demo", "--json", str(summary)],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert "SPL" in ok.stdout and json.loads(summary.read_text())["task"] == "demo"
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    failed = subprocess.run(
        [sys.executable, "-m", "vlneval", "score", "--task", "demo", "--predictions", str(bad)],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 2 and "bad.json" in failed.stderr
