"""R2R-format episode records: the explaining pass refuses what the typed pass refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlneval.errors import InvalidInputError
from vlneval.tasks.r2r.format import load_r2r


def test_a_boolean_heading_is_refused_by_both_passes(tmp_path: Path) -> None:
    path = tmp_path / "R2R_val.json"
    rec = {"path_id": 1, "scan": "s", "path": ["a", "b"], "heading": True, "instructions": ["go"]}
    path.write_text(json.dumps([rec]))
    with pytest.raises(InvalidInputError) as info:
        load_r2r(path)
    assert [(p.message, p.field) for p in info.value.problems] == [
        ("heading must be a finite number, got True", "record 0.heading")
    ]


def test_bad_fields_are_each_named(tmp_path: Path) -> None:
    path = tmp_path / "R2R_val.json"
    path.write_text(json.dumps([{"path_id": True, "path": [], "heading": "x"}, 3]))
    with pytest.raises(InvalidInputError) as info:
        load_r2r(path)
    assert [(p.message, p.field) for p in info.value.problems] == [
        ("field 'path_id' has type bool", "record 0"),
        ("missing field 'scan'", "record 0"),
        ("heading must be a finite number, got 'x'", "record 0.heading"),
        ("expected an object", "record 1"),
    ]


def test_a_duplicate_after_bad_records_is_named_by_its_own_position(tmp_path: Path) -> None:
    """The explaining pass drops bad records; a later duplicate keeps its place in the file."""
    good = [
        {"path_id": k, "scan": "s", "path": ["a", "b"], "instructions": ["go"]} for k in range(6)
    ]
    path = tmp_path / "R2R_val.json"
    path.write_text(json.dumps([*good[:3], 3, 4, *good[3:5], good[0]]))
    with pytest.raises(InvalidInputError) as info:
        load_r2r(path)
    assert [(p.message, p.field) for p in info.value.problems] == [
        ("expected an object", "record 3"),
        ("expected an object", "record 4"),
        ("duplicate path_id 0 (also record 0)", "record 7"),
    ]
