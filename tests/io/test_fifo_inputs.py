"""A FIFO (or device) given as predictions is read when it has a writer, and refused in bounded
time when it has none, by the API, ``score`` and ``validate``; a FIFO read once is not read again
for the split hint (which waited for a writer that had gone)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.fixtures import preds, square_root
from vlneval.cli.main import main
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.io import reader
from vlneval.tasks import get_task
from vlneval.tasks.common.blind import twin_hint
from vlneval.tasks.common.request import SplitRequest


@pytest.fixture
def fifo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(reader, "_WRITER_WAIT", 0.2)
    out = tmp_path / "preds.json"
    os.mkfifo(out)
    return out


def _refusal(path: Path) -> str:
    return (
        f"{path}: is not a regular file and gave nothing to read in 0.2 s (a FIFO without a "
        "writer?), expected a JSON file"
    )


def test_a_fifo_without_a_writer_is_refused(tmp_path: Path, fifo: Path) -> None:
    with pytest.raises(InvalidInputError) as exc:
        reader.read_bytes(fifo)
    assert str(exc.value) == f"error: {_refusal(fifo)}"
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", fifo, root=square_root(tmp_path / "root"))
    assert str(exc.value) == f"error: {_refusal(fifo)}"


@pytest.mark.parametrize("command", ["score", "validate"])
def test_the_cli_refuses_a_fifo_without_a_writer(
    tmp_path: Path, fifo: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    root = square_root(tmp_path / "root")
    args = [command, "--task", "r2r", "--split", "val", "--data-root", str(root)]
    assert main([*args, "--predictions", str(fifo)]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {_refusal(fifo)}"]


def test_a_refused_fifo_is_not_read_again_for_the_split_hint(
    tmp_path: Path, fifo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = square_root(tmp_path / "root")
    writer = threading.Thread(target=lambda: fifo.write_text(json.dumps(preds({"9_0": ["S"]}))))
    writer.start()
    codes: list[int] = []
    args = ["score", "--task", "r2r", "--split", "val", "--data-root", str(root), "--quiet"]
    run = threading.Thread(target=lambda: codes.append(main([*args, "--predictions", str(fifo)])))
    run.start()
    run.join(timeout=30)  # the split hint's second open waited for a writer that never came
    writer.join(timeout=1)
    assert codes == [2]
    assert capsys.readouterr().err.splitlines() == [
        f"error: {fifo}: no prediction matches an episode of r2r val"
    ]


def test_the_twin_hint_does_not_read_a_fifo_again(
    fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """r2r-ce's hint for an r2r-twin run's output reads a refused file again: not a FIFO."""
    monkeypatch.setattr(reader, "_WRITER_WAIT", 30.0)  # a second read would outlast the join
    task = get_task("r2r-ce")
    request = SplitRequest(task, "val_unseen", task.scoring_profile(None))
    found: list[str | None] = []
    run = threading.Thread(target=lambda: found.append(twin_hint(request, fifo)), daemon=True)
    run.start()
    run.join(timeout=10)  # it waited for a writer that had gone
    assert found == [None]


def _run_with_writer(fifo: Path, text: str, argv: list[str]) -> list[int]:
    """The exit code of ``main(argv)`` while a thread writes ``text`` into ``fifo`` once, or
    none when the command is still waiting after 10 s (it opened the FIFO a second time)."""
    writer = threading.Thread(target=lambda: fifo.write_text(text))
    writer.start()
    codes: list[int] = []
    run = threading.Thread(target=lambda: codes.append(main(argv)), daemon=True)
    run.start()
    run.join(timeout=10)
    writer.join(timeout=1)
    return codes


@pytest.mark.parametrize("command", ["score", "compare"])
def test_a_fifo_is_not_read_again_to_see_whether_it_is_a_summary(
    tmp_path: Path, fifo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:  # fmt: skip
    monkeypatch.setattr(reader, "_WRITER_WAIT", 30.0)  # a second read would outlast the join
    root = square_root(tmp_path / "root")
    other = tmp_path / "b.json"
    other.write_text(json.dumps(preds({"1_0": ["S"]})))
    args = [command, "--task", "r2r", "--split", "val", "--data-root", str(root)]
    files = (
        ["--predictions", str(fifo), "--quiet"] if command == "score" else [str(fifo), str(other)]
    )
    assert _run_with_writer(fifo, json.dumps({"1_0": 1}), [*args, *files]) == [2]
    assert capsys.readouterr().err.splitlines() == [
        f"error: {fifo}: expected a JSON list of predictions, got a JSON object"
    ]
