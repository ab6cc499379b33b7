"""``brief`` shows a value in a message: an integer too long for ``repr`` inside a list is
written by its size (it raised AttributeError), and a string cut after its escapes is told as
cut, with its length."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures import square_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.io import brief
from vlneval.tasks.common.record_checks import shown_value


def test_a_huge_integer_in_a_list_is_written_by_its_size() -> None:
    assert brief([10**5000]) == "[an integer of about 5,000 digits]"
    assert brief(10**5000) == "an integer of about 5,000 digits"


def test_a_string_cut_by_its_escapes_is_told_as_cut() -> None:
    shown = "'" + "a\\n" * 19 + "a\\"
    assert brief("a\n" * 25) == f"{shown}… (50 characters)"
    assert brief("a" * 58) == repr("a" * 58)


def test_a_dict_is_shown_in_its_own_order() -> None:
    """As ``repr`` and the file write it (``reprlib`` sorted the keys)."""
    assert brief({"b": 1, "a": {}}) == "{'b': 1, 'a': {}}"
    assert brief(dict.fromkeys(range(100)), 12) == "{0: None, 1:"
    assert brief({"z": {"y": {"x": 1}}}, 4) == "{'z'"
    assert shown_value({"id": "1_0", "a": 2}) == "dict {'id': '1_0', 'a': 2}"


def test_a_huge_integer_as_a_step_is_named(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    records = [{"instr_id": "1_0", "trajectory": [["S", 0, 0], [10**5000]]}]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", records, root=root, subset=True)
    assert [str(p) for p in exc.value.problems] == [
        '<records>: instr_id "1_0": trajectory[1]: expected [viewpoint, heading, elevation], '
        "got [an integer of about 5,000 digits]"
    ]


class _Counted:
    """A value that counts how often it is written."""

    written = 0

    def __repr__(self) -> str:
        _Counted.written += 1
        return "c"


def test_a_wrong_value_is_written_only_as_far_as_it_is_shown() -> None:
    """``shown_value`` builds only the characters it shows (the whole repr of a huge value was
    built to tell its length): a cut value tells its number of items instead."""
    _Counted.written = 0
    assert shown_value([_Counted()] * 100_000) == f"list [{'c, ' * 26}c… (100,000 items)"
    assert _Counted.written <= 80
    assert shown_value([10**5000]) == "list [an integer of about 5,000 digits]"  # repr raises


def test_an_id_holding_an_integer_too_long_to_write_is_named(tmp_path: Path) -> None:
    root = square_root(tmp_path / "root")
    records = [{"instr_id": [10**5000], "trajectory": [["S", 0, 0]]}]
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", records, root=root, subset=True)
    assert [str(p) for p in exc.value.problems] == [
        "<records>: record 0: instr_id must be a string, got list [an integer of about 5,000 "
        "digits]"
    ]
