"""Regression tests for defects found in review: each is one clear error or an honest warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, preds, square_root, write_json
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.graph import parse_connectivity


def test_nested_trajectory_that_flattens_to_nothing_is_an_error(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    body = [
        {"instr_id": "1_0", "trajectory": [["S"], ["G"]]},
        {"instr_id": "1_1", "trajectory": [["S"]]},
        {"instr_id": "1_2", "trajectory": [[]]},
    ]
    p = write_json(tmp_path / "p.json", body)
    with pytest.raises(
        InvalidInputError, match=r'instr_id "1_2": trajectory: empty trajectory after flattening'
    ):
        evaluate("r2r", "val", p, root=root)


def test_trajectory_key_naming_the_id_field_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = square_root(tmp_path / "root")
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S"], "1_1": ["S"], "1_2": ["S"]}))
    args = ["score", "--task", "r2r", "--split", "val", "--data-root", str(root),
            "--predictions", str(p)]  # fmt: skip
    assert main([*args, "--trajectory-key", "instr_id"]) == 2
    assert "--trajectory-key instr_id names the id field" in capsys.readouterr().err


def test_unwritable_outputs_exit_2_and_nothing_is_written_for_a_bad_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["score", "--task", "demo", "--quiet", "--json", str(blocker / "s.json")]) == 2
    assert "cannot write the file" in capsys.readouterr().err
    summary = tmp_path / "s.json"
    code = main(["score", "--task", "demo", "--quiet", "--json", str(summary),
                 "--per-episode", str(tmp_path / "e.txt")])  # fmt: skip
    assert code == 2 and not summary.exists()
    assert "unknown table format '.txt'" in capsys.readouterr().err


def test_single_line_jsonl_and_missing_episodes_warning(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    p = tmp_path / "one.jsonl"
    p.write_text(json.dumps({"instr_id": "1_0", "trajectory": ["S", "G"]}) + "\n")
    r = evaluate("r2r", "val", p, root=root, profile="r2r-duet")
    assert r.n_episodes == 1
    assert any("3 of 4 episodes have no prediction; profile r2r-duet" in w for w in r.warnings)
    row = r.rows()[0]
    assert type(row["success"]) is int and type(row["steps"]) is int and row["success"] == 1


def test_connectivity_flags_must_be_booleans() -> None:
    recs = connectivity(SQUARE, SQUARE_EDGES)
    recs[1]["included"] = "false"
    recs[2]["pose"][3] = "4.0"
    with pytest.raises(InvalidInputError) as exc:
        parse_connectivity(recs, scan="sq", source="sq.json")
    text = str(exc.value)
    assert "record 1.included: included must be true or false, got 'false'" in text
    assert "record 2.pose: pose must be a list of 16 numbers" in text


def test_test_rows_with_null_distance_are_not_scorable(tmp_path: Path) -> None:
    eps = [
        {
            "path_id": 1,
            "scan": "sq",
            "path": ["S"],
            "heading": 0,
            "instructions": ["a"],
            "distance": None,
        },
        {"path_id": 2, "scan": "sq", "path": ["S"], "heading": "bad", "instructions": ["b"]},
    ]
    root = square_root(tmp_path / "root", eps)
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S"], "2_0": ["S"]}))
    with pytest.raises(InvalidInputError):  # the bad heading sends the file to the validating path
        evaluate("r2r", "val", p, root=root)
    eps[1]["heading"] = 0.0
    write_json(root / "r2r" / "R2R_val.json", eps)
    with pytest.raises(Exception, match="cannot be scored locally"):
        evaluate("r2r", "val", p, root=root)


def test_an_empty_split_is_a_clear_error_not_a_crash(tmp_path: Path) -> None:
    from vlneval.errors import InvalidInputError
    from vlneval.evaluation import evaluate

    root = square_root(tmp_path / "root", episodes=[])
    p = write_json(tmp_path / "p.json", preds({"1_0": ["S"]}))
    with pytest.raises(InvalidInputError, match="no prediction matches an episode"):
        evaluate("r2r", "val", p, root=root)


class _Stream:
    def __init__(self, error: OSError | None) -> None:
        self.error, self.written = error, ""

    def flush(self) -> None:
        if self.error is not None:
            raise self.error

    def write(self, text: str) -> int:
        self.written += text
        return len(text)


def test_output_that_cannot_be_written_fails_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from vlneval.cli.main import _flushed

    err = _Stream(None)
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr("sys.stdout", _Stream(OSError(errno.EFBIG, "File too large")))
    assert _flushed(0) == 120 and "could not write the output" in err.written
    assert _flushed(2) == 2  # an earlier failure keeps its code
    monkeypatch.setattr("sys.stdout", _Stream(BrokenPipeError()))
    assert _flushed(0) == 0  # `vlneval ... | head` is not a failure


def test_predictions_from_a_pipe_are_read_once(tmp_path: Path) -> None:
    import os
    import threading

    from vlneval.evaluation import evaluate

    root = square_root(tmp_path / "root")
    fifo = tmp_path / "preds.fifo"
    os.mkfifo(fifo)
    text = json.dumps(preds({"1_0": ["S", "A", "B", "G"], "1_1": ["S", "G"], "1_2": ["S"]}))
    writer = threading.Thread(target=lambda: fifo.write_text(text))
    writer.start()
    result = evaluate("r2r", "val", fifo, root=root)
    writer.join()
    assert result.n_episodes == 3
