"""Data versions and option values as people type them: a split missing under one REVERIE or
Touchdown release is answered with the splits of THAT release and the release that has it; an
unknown option value gets the closest one; values in another case are taken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlneval.cli.main import main
from vlneval.errors import UnknownNameError
from vlneval.evaluation import Scorer

PREDS = "predictions/r2r/simple_agents_sadanand1120/val_seen_stop_agent.json.gz"
NDH = (
    "predictions/ndh/seq2seq_prevalent_r2r/"
    "val-seq2seq-all-trusted_path-40-sample-imagenet_val_seen_iter_100.json.gz"
)


def _score_error(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> str:
    code = main(["score", "--predictions", str(root / PREDS), "--data-root", str(root), *argv])
    assert code == 2, argv
    return capsys.readouterr().err


def test_reverie_split_missing_in_v1_names_v2(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _score_error(capsys, data_root, "--task", "reverie", "--split", "train",
                       "--data-version", "v1")  # fmt: skip
    assert "no reverie train episodes for data version v1 under" in err
    assert "(splits found for v1: test, val_seen, val_unseen)" in err
    assert "train is there for data version v2: pass --data-version v2" in err


def test_reverie_unknown_split_gets_did_you_mean_and_that_versions_splits(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _score_error(capsys, data_root, "--task", "reverie", "--split", "valunseen",
                       "--data-version", "v2")  # fmt: skip
    assert (
        "did you mean 'val_unseen'? (splits found for v2: test, train, val_seen, val_unseen)" in err
    )
    err = _score_error(capsys, data_root, "--task", "reverie", "--split", "trian",
                       "--data-version", "v1")  # fmt: skip
    assert "did you mean 'train'? (splits found for v1: test, val_seen, val_unseen)" in err
    assert "train is there for data version v2" in err


def test_touchdown_split_missing_in_original_names_unseen(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _score_error(capsys, data_root, "--task", "touchdown", "--split", "dev",
                       "--data-version", "original")  # fmt: skip
    assert "no touchdown dev routes (original) found under" in err
    assert "(splits found for original: none)" in err
    assert "dev is there for data version unseen: pass --data-version unseen" in err


def test_touchdown_split_in_no_version_lists_each_and_the_fetch(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _score_error(capsys, data_root, "--task", "touchdown", "--split", "train")
    assert "no touchdown train episodes for any data version under" in err
    assert "(splits found per data version: original: none; unseen: dev)" in err
    assert "`vlneval data fetch touchdown touchdown-unseen`" in err
    err = _score_error(capsys, data_root, "--task", "touchdown-sdr", "--split", "test",
                       "--data-version", "unseen")  # fmt: skip
    assert (
        "(splits found for unseen: dev); get its files with `vlneval data fetch touchdown-unseen`"
        in err
    )
    err = _score_error(capsys, data_root, "--task", "touchdown", "--split", "dve",
                       "--data-version", "unseen")  # fmt: skip
    assert "did you mean 'dev'? (splits found for unseen: dev)" in err


def test_unknown_data_versions_get_did_you_mean(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _score_error(capsys, data_root, "--task", "reverie", "--data-version", "v22")
    assert "unknown reverie data version 'v22'; did you mean 'v2'? (known: v1, v2)" in err
    err = _score_error(capsys, data_root, "--task", "touchdown", "--data-version", "unsen")
    assert "did you mean 'unseen'?" in err
    out = ["--out", str(data_root / "never-written.json")]
    assert main(["run", "--task", "reverie", "--agent", "stop", *out, "--data-version", "v22",
                 "--data-root", str(data_root)]) == 2  # fmt: skip
    assert "unknown reverie data version 'v22'; did you mean 'v2'?" in capsys.readouterr().err


def test_an_unknown_choice_flag_gets_did_you_mean(
    data_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", "--task", "ndh", "--split", "val_seen", "--data-root", str(data_root),
            "--predictions", str(data_root / NDH), "--path-type", "trsted_path"]  # fmt: skip
    assert main(argv) == 2  # one line, not argparse's usage
    err = capsys.readouterr().err
    assert err == (
        "error: unknown ndh path type 'trsted_path'; did you mean 'trusted_path'? "
        "(known: planner_path, player_path, trusted_path)\n"
    )


def test_option_values_in_another_case_are_taken(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", "--task", "ndh", "--split", "val_seen", "--data-root", str(data_root),
            "--predictions", str(data_root / NDH), "--path-type", "TRUSTED_PATH", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    out = str(tmp_path / "rv.json")
    assert main(["run", "--task", "reverie", "--split", "val_seen", "--agent", "stop",
                 "--out", out, "--data-version", "V1", "--limit", "2", "--quiet",
                 "--data-root", str(data_root)]) == 0  # fmt: skip


def test_the_library_checks_option_values_too(data_root: Path) -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'trusted_path'"):
        Scorer("ndh", "val_seen", root=data_root, path_type="trsted_path")
    with pytest.raises(UnknownNameError, match="unknown reverie data version 'v3'"):
        Scorer("reverie", "val_seen", root=data_root, data_version="v3")


@pytest.mark.parametrize("path_type", ["player_path", "TRUSTED_PATH"])
def test_run_loads_the_ndh_path_type_it_scores_with(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], path_type: str
) -> None:
    """``--path-type`` reaches the episodes the environment runs (the shortest-path agent follows
    that path, as make_env's ``path_type=`` does), not only the scorer: the oracle scores SR 1."""
    out, summary = tmp_path / "ndh.json", tmp_path / "s.json"
    argv = ["run", "--task", "ndh", "--split", "val_seen", "--data-root", str(data_root),
            "--agent", "shortest", "--out", str(out), "--path-type", path_type, "--score",
            "--json", str(summary), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    result = json.loads(summary.read_text())
    assert result["protocol"]["scoring"]["path_type"] == path_type.lower()
    assert (result["metrics"]["SR"], result["metrics"]["NE"]) == (1.0, 0.0)
    capsys.readouterr()
