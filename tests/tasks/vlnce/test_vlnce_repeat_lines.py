"""A repeated instruction of VLN-CE's ``rxr-jsonl`` form names the line of its first repeat
and the line of its first record (blank lines counted); a JSON list of the same records names
the instruction alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlneval.errors import InvalidInputError
from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions


def _duplicates(split: tuple[Path, Path], path: Path) -> list[str]:
    eps = load_vlnce(split[0], gt_path=split[1], task="r2r-ce", split="val")
    with pytest.raises(InvalidInputError) as exc:
        parse_ce_predictions(path, eps, form="rxr-jsonl")
    return [str(p) for p in exc.value.problems if "duplicate" in p.message]


def test_a_repeated_instruction_names_its_lines(split: tuple[Path, Path], tmp_path: Path) -> None:
    one, two = ({"instruction_id": i, "path": [[0, 0, 0]]} for i in ("i1", "i2"))
    lines = [json.dumps(one), "", json.dumps(two), json.dumps(one), json.dumps(two), "  "]
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join([*lines, json.dumps(one)]) + "\n")
    assert _duplicates(split, path) == [
        f'{path}: line 4: instruction_id "i1": duplicate id: the file has 3 predictions for it '
        "(first on line 1)",
        f'{path}: line 5: instruction_id "i2": duplicate id: the file has two predictions for it '
        "(first on line 3)",
    ]


def test_a_json_list_names_the_instruction_alone(split: tuple[Path, Path], tmp_path: Path) -> None:
    one = {"instruction_id": "i1", "path": [[0, 0, 0]]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps([one, one]))
    assert _duplicates(split, path) == [
        f'{path}: instruction_id "i1": duplicate id: the file has two predictions for it'
    ]


def test_an_id_repeated_as_a_string_is_one_episode_named_as_first_given(
    split: tuple[Path, Path], tmp_path: Path
) -> None:
    """RxR's ids are integers; ``5`` and then ``"5"`` predict one episode twice: the problem
    names it as its first record did and keeps both lines."""
    episodes = json.loads(split[0].read_text())
    episodes["episodes"][0]["instruction"]["instruction_id"] = "5"
    split[0].write_text(json.dumps(episodes))
    first, again = ({"instruction_id": i, "path": [[0, 0, 0]]} for i in (5, "5"))
    path = tmp_path / "p.jsonl"
    path.write_text(f"{json.dumps(first)}\n\n{json.dumps(again)}\n")
    assert _duplicates(split, path) == [
        f"{path}: line 3: instruction_id 5: duplicate id: the file has two predictions for it "
        "(first on line 1)"
    ]
