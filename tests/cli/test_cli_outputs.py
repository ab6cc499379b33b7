"""Pipe-friendly outputs of the CLI: ``-`` and ``/dev/stdout``, stdout holding only the table
(or only the output sent there), notes on stderr, refusals before any work, and user text never
read as markup."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vlneval.cli.main import main
from vlneval.tasks.common.root import demo_root

VLNEVAL = Path(sys.executable).with_name("vlneval")  # the real console script
DEMO_PREDS = demo_root() / "demo" / "predictions_val.json"
WARNING = "warning: the demo task is synthetic (generated houses and episodes), not real data"
Capture = pytest.CaptureFixture[str]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VLNEVAL), *args], capture_output=True, text=True, cwd=cwd, timeout=300, check=False
    )


def test_score_json_to_stdout_pipes_into_a_json_parser() -> None:
    score = subprocess.Popen(
        [str(VLNEVAL), "score", "--task", "demo", "--json", "-"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    parse = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.load(sys.stdin)['metrics']['SR'])"],
        stdin=score.stdout,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert score.stdout is not None and score.stderr is not None
    score.stdout.close()
    err = score.stderr.read().decode()
    assert score.wait(60) == 0 and parse.returncode == 0, err + parse.stderr
    assert float(parse.stdout) == pytest.approx(19 / 36)  # 52.78 %
    assert err == WARNING + "\n"  # the warning on stderr, no table anywhere


def test_dev_stdout_is_written_in_place_and_stays_a_symlink() -> None:
    before = os.path.islink("/dev/stdout")
    done = _run("score", "--task", "demo", "--json", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["task"] == "demo"  # only the JSON: no table beside it
    assert os.path.islink("/dev/stdout") == before


def test_per_episode_rows_to_stdout_as_csv_and_jsonl(capsys: Capture) -> None:
    assert main(["score", "--task", "demo", "--per-episode", "-", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 36 and rows[0]["instr_id"] == "100_0" and err == WARNING + "\n"
    assert main(["score", "--task", "demo", "--per-episode", "-", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 36 and json.loads(lines[0])["instr_id"] == "100_0"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json", "-", "--per-episode", "-", "--format", "csv"], "both write to stdout"),
        (["--per-episode", "-"], "--format csv or --format jsonl"),
        (["--json", "-", "--format", "markdown"], "the markdown table cannot go there too"),
        (["--format", "csv"], "--format csv is the format of --per-episode"),
        (["--per-episode", "rows.csv", "--format", "jsonl"], "csv by its name, not jsonl"),
        (["--json", "/dev/stdout", "--per-episode", "-", "--format", "csv"], "both write to"),
    ],
)
def test_conflicting_outputs_are_refused_before_scoring(
    args: list[str], message: str, capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["score", "--task", "demo", *args]) == 2
    out, err = capsys.readouterr()
    assert message in err and out == "" and list(tmp_path.iterdir()) == []


def test_a_missing_folder_is_named_before_scoring(tmp_path: Path, capsys: Capture) -> None:
    target = tmp_path / "runs" / "r1" / "s.json"
    assert main(["score", "--task", "demo", "--json", str(target)]) == 2
    out, err = capsys.readouterr()
    assert f"--json {target}: the folder {target.parent} does not exist" in err and out == ""


def test_symlinked_outputs_write_their_targets(tmp_path: Path, capsys: Capture) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (tmp_path / "s.json").symlink_to(store / "s.json")
    (tmp_path / "rows.csv").symlink_to(store / "rows.csv")
    args = ["--json", str(tmp_path / "s.json"), "--per-episode", str(tmp_path / "rows.csv")]
    assert main(["score", "--task", "demo", "--quiet", *args]) == 0
    assert (tmp_path / "s.json").is_symlink() and (tmp_path / "rows.csv").is_symlink()
    assert json.loads((store / "s.json").read_text())["n_episodes"] == 36
    assert (store / "rows.csv").read_text().startswith("instr_id,")


def test_the_table_holds_no_warning_and_the_notes_are_on_stderr(capsys: Capture) -> None:
    assert main(["score", "--task", "demo"]) == 0
    out, err = capsys.readouterr()
    assert "SR (%)" in out and "warning" not in out and err == WARNING + "\n"


def test_run_refuses_predictions_to_stdout(tmp_path: Path, capsys: Capture) -> None:
    assert main(["run", "--task", "demo", "--agent", "stop", "--out", "-", "--quiet"]) == 2
    assert "the predictions must go to a file" in capsys.readouterr().err


def test_run_writes_predictions_and_card_and_the_summary_to_stdout(
    tmp_path: Path, capsys: Capture
) -> None:
    out = tmp_path / "p.json"
    args = ["run", "--task", "demo", "--agent", "stop", "--out", str(out), "--quiet"]
    assert main([*args, "--score", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["TL"] == 0.0
    assert out.exists() and (tmp_path / "p.protocol.json").exists()


def _with_id(tmp_path: Path, name: str, instr_id: str) -> Path:
    records = json.loads(DEMO_PREDS.read_text())
    records.append({"instr_id": instr_id, "trajectory": records[0]["trajectory"]})
    path = tmp_path / name
    path.write_text(json.dumps(records))
    return path


def test_a_1mb_unknown_id_is_answered_in_under_2_seconds(tmp_path: Path, capsys: Capture) -> None:
    path = _with_id(tmp_path, "big.json", "x" * 1_000_000)
    main(["score", "--task", "demo", "--quiet"])  # warm: the split and the imports
    capsys.readouterr()
    start = time.perf_counter()
    assert main(["score", "--task", "demo", "--predictions", str(path)]) == 0
    seconds = time.perf_counter() - start
    out, err = capsys.readouterr()
    assert seconds < 2.0, f"{seconds:.2f} s"
    assert "ids not in the split were ignored" in err and len(err) < 5_000 and "xxx" not in out


def test_user_text_is_never_read_as_markup(tmp_path: Path, capsys: Capture) -> None:
    for k, instr_id in enumerate(["[/]", "[bold red]loud[/bold red]", "[link=x]y"]):
        path = _with_id(tmp_path, f"m{k}.json", instr_id)
        assert main(["score", "--task", "demo", "--predictions", str(path)]) == 0
        assert instr_id in capsys.readouterr().err  # as written, not styled nor a crash
    folder = tmp_path / "[bold]runs"
    folder.mkdir()
    names = [folder / "a.json", folder / "b.json"]
    for p in names:
        p.write_text(DEMO_PREDS.read_text())
    assert main(["score", "--task", "demo", "--predictions", *map(str, names)]) == 0
    assert "[bold]runs" in capsys.readouterr().out


def test_score_several_files_sends_each_note_once_to_stderr(
    tmp_path: Path, capsys: Capture
) -> None:
    names = [tmp_path / "a.json", tmp_path / "b.json"]
    for p in names:
        p.write_text(DEMO_PREDS.read_text())
    assert main(["score", "--task", "demo", "--predictions", *map(str, names)]) == 0
    out, err = capsys.readouterr()
    assert "a.json" in out and "warning" not in out
    assert err == "all 2 files: " + WARNING + "\n" + (  # the copy's results are the same too
        f"warning: {names[1]} has exactly the results of {names[0]} (every metric, to the last "
        "digit): most likely one run given twice (a copied file, or the same predictions under "
        "another name)\n"
    )


def test_a_note_of_some_files_of_a_sweep_names_them(tmp_path: Path, capsys: Capture) -> None:
    plain = [tmp_path / f"{k}.json" for k in "ace"]
    for p in plain:
        p.write_text(DEMO_PREDS.read_text())
    odd = [_with_id(tmp_path, f"{k}.json", "nowhere_0") for k in "bdfgh"]
    files = sorted(map(str, plain + odd))
    assert main(["score", "--task", "demo", "--predictions", *files, "--quiet"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "all 8 files: " + WARNING
    b, d, f = (str(tmp_path / f"{k}.json") for k in "bdf")
    assert lines[1].startswith(f"{b}, {d}, {f} and 2 more (5 of 8 files): warning: 1 ")
