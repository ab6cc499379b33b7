"""Names as people type them, through the real command line: task and profile names in any
case with did-you-mean on every command; unknown splits list the splits under the data root; a
missing, one-level-too-deep or task-less data root is said so."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlneval.cli.main import main

PREDS = "predictions/r2r/simple_agents_sadanand1120/val_unseen_random_agent.json.gz"


def _commands(root: Path, tmp: Path, task: str, split: str, *extra: str) -> list[list[str]]:
    """Every command that takes a task, with the names under test."""
    preds = str(root / PREDS)
    common = ["--task", task, "--split", split, *extra]
    data = ["--data-root", str(root)]
    return [
        ["score", *common, *data, "--predictions", preds, "--quiet"],
        ["validate", *common, *data, "--predictions", preds],
        ["run", *common, *data, "--agent", "random", "--out", str(tmp / "run.json"), "--score"],
        ["report", *common, *data, "--predictions", preds, "--out", str(tmp / "r.html")],
        ["compare", *common, *data, preds, preds],
        ["admin", "--data-dir", str(tmp / "srv"), "create-phase", "--challenge", "c",
         "--slug", "p", *common, *data],
    ]  # fmt: skip


@pytest.fixture()
def server(tmp_path: Path) -> Path:
    pytest.importorskip("fastapi")
    pytest.importorskip("sqlalchemy")
    base = ["admin", "--data-dir", str(tmp_path / "srv")]
    assert main([*base, "migrate"]) == 0
    assert main([*base, "create-challenge", "--slug", "c", "--title", "C"]) == 0
    return tmp_path


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2, argv
    return capsys.readouterr().err


def test_an_unknown_task_gets_did_you_mean_everywhere(
    data_root: Path, server: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in _commands(data_root, server, "r2x", "val_unseen"):
        assert "unknown task 'r2x'; did you mean 'r2r'?" in _error(capsys, argv), argv[0]


def test_an_unknown_profile_gets_did_you_mean_everywhere(
    data_root: Path, server: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in _commands(data_root, server, "R2R", "val_unseen", "--profile", "R2R-envdrp"):
        assert "did you mean 'r2r-envdrop'?" in _error(capsys, argv), argv[0]


def test_an_unknown_split_lists_the_splits_under_the_data_root(
    data_root: Path, server: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = sorted(p.name[4:].split(".")[0] for p in (data_root / "r2r").glob("R2R_*.json*"))
    for argv in _commands(data_root, server, "R2R", "valunseen"):
        text = _error(capsys, argv)
        assert "no r2r valunseen episodes found" in text, argv[0]
        assert "did you mean 'val_unseen'?" in text
        assert f"(splits found there: {', '.join(found)})" in text


def test_task_and_profile_names_ignore_case(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _commands(data_root, data_root, "R2R", "val_unseen", "--profile", "R2R")[1]
    assert main(argv) == 0
    assert "valid r2r val_unseen submission for profile r2r" in capsys.readouterr().out


def _score(root: Path, split: str = "val_unseen") -> list[str]:
    return ["score", "--task", "r2r", "--split", split, "--data-root", str(root),
            "--predictions", "x.json"]  # fmt: skip


def test_a_missing_data_root_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _error(capsys, _score(tmp_path / "nowhere"))
    assert f"the data root {tmp_path / 'nowhere'} does not exist" in text


def test_a_root_one_level_too_deep_names_the_parent(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for deep in (data_root / "r2r", data_root / "matterport3d"):
        text = _error(capsys, _score(deep))
        assert f"the data root {deep} looks one level too deep" in text
        assert f"pass --data-root {data_root}," in text


def test_a_root_without_the_task_folder_names_what_it_expected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _error(capsys, _score(tmp_path))
    assert "no r2r val_unseen episodes found" in text
    assert f"has no r2r/ folder for task r2r (expected {tmp_path / 'r2r'}/R2R_<split>.json)" in text
    assert "`vlneval data fetch r2r`" in text


def test_splits_are_found_with_the_task_file_patterns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A split present on disk but not declared by the task is listed too."""
    (tmp_path / "r2r").mkdir()
    for name in ("R2R_val_unseen.json", "R2R_val_extra.json.gz", "notes.txt"):
        (tmp_path / "r2r" / name).write_text("[]")
    text = _error(capsys, _score(tmp_path, "val_extr"))
    assert "did you mean 'val_extra'?" in text
    assert "(splits found there: val_extra, val_unseen)" in text
