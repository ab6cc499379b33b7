"""VLN-CE predictions that are wrong in ways a new user meets: each gets one exact message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.vlnce.helpers import steps
from vlneval.errors import InvalidInputError
from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions
from vlneval.tasks.vlnce.score import _progress

FOLDER = "vlnce/R2R_VLNCE_v1-3_preprocessed"
STEP = "{'position': [x, y, z], 'heading': h, 'stop': bool}"
NOT_CE = (
    "not a VLN-CE form: r2r-ce expects one JSON object {episode_id: [" + STEP + ", ...]}, "
    "start state first (or rxr-jsonl: one {'instruction_id': ..., 'path': [[x, y, z], ...]} "
    "per line)"
)


def _error(split: tuple[Path, Path], tmp_path: Path, text: str) -> str:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(InvalidInputError) as info:
        parse_ce_predictions(path, eps)
    return str(info.value).replace(str(path), "p.json")


def _good(eid: str) -> dict[str, Any]:
    return {eid: steps([[0.0, 0.0, 0.0], [0.0, 0.0, -1.0]])}


def test_nan_position_says_nan(split: tuple[Path, Path], tmp_path: Path) -> None:
    text = '{"1": [{"position": [NaN, 0, 0], "heading": 0, "stop": true}]}'
    assert _error(split, tmp_path, text) == (
        'error: p.json: episode_id "1": [0].position: position [nan, 0, 0] has a NaN '
        "coordinate: [x, y, z] must be finite"
    )


def test_infinite_position_says_infinite(split: tuple[Path, Path], tmp_path: Path) -> None:
    text = '{"1": [{"position": [0, Infinity, 0], "heading": 0, "stop": true}]}'
    assert _error(split, tmp_path, text) == (
        'error: p.json: episode_id "1": [0].position: position [0, inf, 0] has an infinite '
        "coordinate: [x, y, z] must be finite"
    )


@pytest.mark.parametrize(
    ("text", "why"), [("", "the file is empty"), ("  \n", "holds no JSON (only whitespace)")]
)
def test_empty_file_says_empty_as_every_task(
    split: tuple[Path, Path], tmp_path: Path, text: str, why: str
) -> None:
    assert _error(split, tmp_path, text) == f"error: p.json: {why}"


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ({"position": [0, 0, 0], "heading": 0}, "[0].stop: missing field 'stop' (true or false)"),
        ({"heading": 0, "stop": True}, "[0].position: missing field 'position' ([x, y, z])"),
        ([0, 0, 0], f"[0]: expected {STEP}, got [0, 0, 0]"),
    ],
)
def test_missing_step_fields_are_named(
    split: tuple[Path, Path], tmp_path: Path, step: Any, message: str
) -> None:
    text = json.dumps({"1": [step]})
    assert _error(split, tmp_path, text) == f'error: p.json: episode_id "1": {message}'


def test_list_of_records_is_one_error_showing_the_dict_form(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    records = [{"episode_id": e, "trajectory": v} for e in ("1", "2") for v in _good(e).values()]
    assert _error(split, tmp_path, json.dumps(records)) == (
        f"error: p.json: a list of 2 records with fields episode_id, trajectory, {NOT_CE}; to "
        'key them by id in Python: {str(r["episode_id"]): r["trajectory"] for r in records}'
    )


def test_r2r_file_is_one_error_naming_r2r(split: tuple[Path, Path], tmp_path: Path) -> None:
    records = [{"instr_id": f"{k}_0", "trajectory": [["v", 0.0, 0.0]]} for k in range(50)]
    assert _error(split, tmp_path, json.dumps(records)) == (
        "error: p.json: a list of 50 records with fields instr_id, trajectory (an R2R "
        f"predictions file? score it with --task r2r), {NOT_CE}"
    )


def test_file_of_another_split_is_named_once(split: tuple[Path, Path], tmp_path: Path) -> None:
    far = [{"position": [5.0, 0.0, 0.0], "heading": 0.0, "stop": True}]
    start = (
        "the trajectory starts 5.000 m from the episode's start [0.0, 0.0, 0.0] "
        "(the start state must come first)"
    )
    assert _error(split, tmp_path, json.dumps({"1": far, "2": far})) == (
        "error: p.json: 2 of 2 trajectories start more than 0.1 m from their episode's start: "
        "the file was probably made for another split than r2r-ce val (episode ids repeat "
        "across VLN-CE splits)\n"
        f'error: p.json: episode_id "1": [0].position: {start}\n'
        f'error: p.json: episode_id "2": [0].position: {start}'
    )


def test_one_far_start_gets_no_split_hint(split: tuple[Path, Path], tmp_path: Path) -> None:
    far = [{"position": [5.0, 0.0, 0.0], "heading": 0.0, "stop": True}]
    text = json.dumps({"1": far, **_good("2")})
    assert "another split" not in _error(split, tmp_path, text)


def test_real_val_unseen_file_on_val_seen_says_other_split(data_root: Path) -> None:
    """Episode ids 1..778 of val_unseen are ids of val_seen too: every one starts elsewhere."""
    seen = load_vlnce(data_root / FOLDER / "val_seen" / "val_seen.json.gz", split="val_seen")
    unseen = load_vlnce(data_root / FOLDER / "val_unseen" / "val_unseen.json.gz")
    preds = {
        unseen.ids[i]: [{"position": unseen.starts[i].tolist(), "heading": 0.0, "stop": True}]
        for i in range(len(unseen))
    }
    with pytest.raises(InvalidInputError) as info:
        parse_ce_predictions(preds, seen)
    assert str(info.value).splitlines()[0] == (
        "error: <records>: 778 of 778 trajectories start more than 0.1 m from their episode's "
        "start: the file was probably made for another split than r2r-ce val_seen (episode ids "
        "repeat across VLN-CE splits)"
    )


def test_progress_writes_nothing_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert sum(1 for _ in _progress(600, True)) == 600
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"1": null}', 'episode_id "1": expected a list of steps (start state first), got null'),
        ('{"1": []}', 'episode_id "1": empty trajectory (it must include the start state)'),
        (
            '{"1": [{"position": [0, 0, 0], "heading": null, "stop": true}]}',
            'episode_id "1": [0].heading: heading must be a finite number, got null',
        ),
        (
            '{"1": [{"position": [0, 0, 0], "heading": 0, "stop": null}]}',
            'episode_id "1": [0].stop: stop must be true or false, got null',
        ),
        (
            '{"instruction_id": null, "path": [[0, 0, 0]]}',
            "record 0: instruction_id must be an integer or string, got null",
        ),
        (
            '{"instruction_id": "i1", "path": null}',
            'instruction_id "i1": path: expected a list of [x, y, z], got null',
        ),
        (
            '{"instruction_id": "i1", "path": []}',
            'instruction_id "i1": path: empty trajectory (it must include the start state)',
        ),
        (
            '{"instruction_id": "i1", "path": [[0, 0, 0], [1.0, 2.0]]}',
            'instruction_id "i1": path[1]: position must be [x, y, z], got [1.0, 2.0]',
        ),
    ],
)
def test_null_and_empty_values_are_worded_as_the_r2r_reader_words_them(
    split: tuple[Path, Path], tmp_path: Path, text: str, expected: str
) -> None:
    """JSON's null is shown as null; a null or empty trajectory and a malformed point are
    named alike in both forms."""
    assert _error(split, tmp_path, text) == f"error: p.json: {expected}"


def test_an_episode_file_s_duplicate_id_names_its_first_record(tmp_path: Path) -> None:
    """A repeated episode_id is named as every reader names one (record_checks.UniqueIds): at
    the record that repeats it, with the record that gave it first; a malformed repeat is
    named for what is wrong with it, and a valid episode after them is still read."""
    from tests.tasks.vlnce.helpers import episode

    bad = {**episode(1, -4.0), "start_position": None}
    eps = [episode(1, -4.0), episode(2, -4.0), episode(1, -2.0), bad, episode(3, -4.0)]
    path = tmp_path / "val.json"
    path.write_text(json.dumps({"episodes": eps}))
    with pytest.raises(InvalidInputError) as info:
        load_vlnce(path)
    assert [str(p) for p in info.value.problems] == [
        f"{path}: record 2: duplicate episode_id 1 (also record 0)",
        f'{path}: episode_id "1": start_position: missing or malformed start_position',
    ]
