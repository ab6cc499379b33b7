"""Scorer: load once, score paths, bytes and in-memory records alike; options checked once."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from vlneval import Scorer, evaluate
from vlneval.errors import InvalidInputError, UnknownNameError, VLNEvalError
from vlneval.tasks.common.root import demo_root

DEMO = demo_root() / "demo" / "predictions_val.json"
SEQ = "predictions/r2r/seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_5000.json.gz"


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    da, db = a.to_dict(), b.to_dict()
    da.pop("predictions"), db.pop("predictions")
    assert da == db


def test_path_bytes_and_records_give_the_same_result() -> None:
    scorer = Scorer("demo")
    records = json.loads(DEMO.read_text())
    by_path = scorer.score(DEMO)
    _same(by_path, scorer.score(DEMO.read_bytes()))
    _same(by_path, scorer.score(gzip.compress(DEMO.read_bytes())))
    _same(by_path, scorer.score(records))
    assert scorer.score(records).source == "<records>"
    _same(by_path, evaluate("demo", None, DEMO))


def test_records_are_not_changed_and_can_be_scored_again() -> None:
    scorer = Scorer("demo")
    records = json.loads(DEMO.read_text())
    before = json.dumps(records)
    a, b = scorer.score(records), scorer.score(records)
    assert json.dumps(records) == before and a.metrics == b.metrics


def test_bad_records_name_the_episode_and_field() -> None:
    records = json.loads(DEMO.read_text())
    records[0]["trajectory"][1] = [records[0]["trajectory"][1][0], "north", 0.0]
    with pytest.raises(InvalidInputError) as exc:
        Scorer("demo").score(records)
    text = str(exc.value)
    assert "<records>" in text and records[0]["instr_id"] in text
    assert "trajectory[1]" in text and "heading must be a number" in text
    with pytest.raises(InvalidInputError, match="expected a path, bytes or a list of records"):
        Scorer("demo").score({"instr_id": "1"})  # type: ignore[arg-type]


def test_options_are_checked_at_construction() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'path_type'"):
        Scorer("demo", path_typ="trusted_path")
    with pytest.raises(
        VLNEvalError,
        match=re.escape(
            "option path_type (--path-type) does not apply to task demo (its options: none)"
        ),
    ):
        Scorer("demo", path_type="trusted_path")
    with pytest.raises(UnknownNameError, match="unknown profile"):
        Scorer("demo", profile="r2rr")
    with pytest.raises(VLNEvalError, match="does not score task demo"):
        Scorer("demo", profile="cvdn")


def test_tasks_with_their_own_reader_read_records_too(tmp_path: Path) -> None:
    """HANNA (like every task, see tests/tasks/test_inputs.py) reads records, checked as the
    file's records are: the problem is named with the episode and field, source <records>."""
    from tests.tasks.hanna.fixture import make_root

    scorer = Scorer("hanna", root=make_root(tmp_path / "root"))
    with pytest.raises(
        InvalidInputError,
        match=re.escape('<records>: instr_id "10_0": agent_pose: empty trajectory'),
    ):
        scorer.score([{"instr_id": "10_0", "agent_pose": []}])


def test_real_r2r_records_match_the_file(data_root: Path) -> None:
    path = data_root / SEQ
    records = json.loads(gzip.decompress(path.read_bytes()))
    scorer = Scorer("r2r", "val_unseen", root=data_root)
    by_file, by_records = scorer.score(path), scorer.score(records)
    assert by_file.n_episodes == 2349
    _same(by_file, by_records)


def _same_table(a, b) -> None:  # type: ignore[no-untyped-def]
    _same(a, b)
    assert a.scored.tolist() == b.scored.tolist()
    assert a.per_episode.keys() == b.per_episode.keys()
    for name, column in a.per_episode.items():
        assert column.tobytes() == b.per_episode[name].tobytes(), name


@pytest.mark.parametrize("profile", ["r2r", "r2r-duet"])
def test_kept_episode_arrays_score_exactly_as_a_fresh_scorer(data_root: Path, profile: str) -> None:
    """The episode side kept between calls (tables, references, lengths) changes nothing:
    the whole file, a subset, and the whole file again score bit for bit as new scorers do."""
    records = json.loads(gzip.decompress((data_root / SEQ).read_bytes()))
    kept = Scorer("r2r", "val_unseen", root=data_root, profile=profile)
    runs = [(records, False), (records[::3], True), (records, False), (records[1::2], True)]
    for given, subset in runs:
        fresh = Scorer("r2r", "val_unseen", root=data_root, profile=profile)
        _same_table(kept.score(given, subset=subset), fresh.score(given, subset=subset))


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_in_memory_records_with_a_non_finite_angle_are_refused(value: float) -> None:
    """Only in-memory records can hold NaN (JSON cannot), and a JSON 1e400 reads as inf: both
    get the explaining pass's message, as in a file."""
    scorer = Scorer("demo")
    records = json.loads(DEMO.read_text())
    first = records[0]
    first["trajectory"] = [list(step) for step in first["trajectory"]]
    first["trajectory"][0][1] = value
    with pytest.raises(
        InvalidInputError, match=rf"trajectory\[0\]: heading is {value} \(must be finite\)"
    ):
        scorer.score(records)


def test_a_json_number_beyond_float_range_is_refused(tmp_path: Path) -> None:
    records = json.loads(DEMO.read_text())
    text = json.dumps(records).replace(
        json.dumps(records[0]["trajectory"][0]),
        f'["{records[0]["trajectory"][0][0]}", 1e400, 0.0]',
        1,
    )
    with pytest.raises(InvalidInputError, match="heading is inf"):
        Scorer("demo").score(text.encode())


def test_profile_of_another_task_one_check_one_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Task.scoring_profile is the one check: the library's Scorer and ``vlneval run`` (before
    any episode runs) refuse a profile of another task with the same words."""
    from vlneval.cli.main import main
    from vlneval.tasks import get_task

    said = "profile cvdn does not score task demo (its profiles: demo, r2r, r2r-envdrop, r2r-duet)"
    with pytest.raises(VLNEvalError) as exc:
        get_task("demo").scoring_profile("CVDN")
    assert str(exc.value) == said
    with pytest.raises(VLNEvalError) as exc:
        Scorer("demo", profile="cvdn")
    assert str(exc.value) == said
    out = tmp_path / "p.json"
    argv = ["run", "--task", "demo", "--agent", "random", "--profile", "cvdn", "--out", str(out)]
    assert main(argv) == 2
    assert said in capsys.readouterr().err and not out.exists()
    assert get_task("demo").scoring_profile(None).name == "demo"
    assert get_task("demo").scoring_profile("R2R-DUET").name == "r2r-duet"
