"""Malformed connectivity records: one error naming the file, the record (index and image_id)
and the field, on both readings (msgspec's typed one rejects these files, so each goes to the
generic ``parse_connectivity`` path). The simulator's scan reader reads only what the C++ reads
(jsoncpp's ``asBool`` takes 0/1 and null; ``height`` is never read), so it refuses only the
fields it cannot convert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, write_json
from vlneval.errors import InvalidInputError
from vlneval.graph import load_connectivity, parse_connectivity
from vlneval.graph.simscan import load_sim_scan

FILE_CASES = [
    ("height", "1.5", "record 1.height: height must be a finite number (metres), got '1.5'"),
    ("height", None, "record 1.height: height must be a finite number (metres), got None"),
    ("height", True, "record 1.height: height must be a finite number (metres), got True"),
    ("height", float("nan"), "record 1.height: height must be a finite number (metres), got nan"),
    ("height", float("-inf"), "record 1.height: height must be a finite number (metres), got -inf"),
    ("unobstructed", ["true", "false", "false", "true"],
     "record 1.unobstructed: unobstructed[0] must be true or false, got 'true'"),
    ("unobstructed", [True, False, 1, False],
     "record 1.unobstructed: unobstructed[2] must be true or false, got 1"),
    ("unobstructed", None, "record 1.unobstructed: unobstructed must be a list of 4 booleans"),
    ("included", None, "record 1.included: included must be true or false, got None"),
]  # fmt: skip
ID_CASES = [
    (None, "got None"), (True, "got True"), (2.5, "got 2.5"), (["A"], "got ['A']"),
]  # fmt: skip


def _records(field: str, value: Any) -> list[dict[str, Any]]:
    recs = connectivity(SQUARE, SQUARE_EDGES)
    recs[1][field] = value  # A
    return recs


@pytest.mark.parametrize(("field", "value", "expected"), FILE_CASES)
def test_a_bad_field_names_the_file_the_record_its_image_id_and_the_field(
    tmp_path: Path, field: str, value: Any, expected: str
) -> None:
    path = write_json(tmp_path / "sq_connectivity.json", _records(field, value))
    message = f'error: {path}: image_id "A": {expected}'
    with pytest.raises(InvalidInputError) as exc:
        load_connectivity(path)
    assert str(exc.value) == message
    with pytest.raises(InvalidInputError) as exc:
        parse_connectivity(_records(field, value), scan="sq", source="sq.json")
    assert str(exc.value) == f'error: sq.json: image_id "A": {expected}'


SIM_CASES = [
    ("height", "1.5", None), ("height", None, None), ("height", True, None),
    ("height", float("nan"), "not valid JSON"), ("height", float("-inf"), "not valid JSON"),
    ("unobstructed", ["true", "false", "false", "true"],
     'image_id "A": record 1.unobstructed[0]: must be a boolean (true, false, a number or null), '
     "got 'true'"),
    ("unobstructed", [True, False, 1, False], None),
    ("unobstructed", None,
     'image_id "A": record 1.unobstructed: unobstructed must be a list of 4 booleans (one per '
     "record), got None"),
    ("included", None, None),
]  # fmt: skip


@pytest.mark.parametrize(("field", "value", "expected"), SIM_CASES)
def test_the_scan_reader_refuses_only_what_the_simulator_cannot_read(
    tmp_path: Path, field: str, value: Any, expected: str | None
) -> None:
    path = write_json(tmp_path / "sq_connectivity.json", _records(field, value))
    if expected is None:
        scan = load_sim_scan(path, "sq")
        assert scan.ids == ["S", "A", "B", "G"] and scan.graph is None  # scoring refuses it
        assert (
            scan.unobstructed.tolist()
            == load_sim_scan(
                write_json(tmp_path / "ok_connectivity.json", _records("visible", None)), "ok"
            ).unobstructed.tolist()
        )
        assert scan.included.tolist() == [True, field != "included", True, True]
        return
    with pytest.raises(InvalidInputError) as exc:
        load_sim_scan(path, "sq")
    if expected == "not valid JSON":  # Python's json writes NaN and Infinity; JSON has neither
        assert str(exc.value).startswith(f"error: {path}: not valid JSON (JSON is malformed: ")
        assert str(exc.value).endswith("; NaN and Infinity are not JSON numbers)")
    else:
        assert str(exc.value) == f"error: {path}: {expected}"


@pytest.mark.parametrize(("value", "got"), ID_CASES)
def test_an_image_id_that_is_no_string_or_integer_is_refused(
    tmp_path: Path, value: Any, got: str
) -> None:
    path = write_json(tmp_path / "sq_connectivity.json", _records("image_id", value))
    with pytest.raises(InvalidInputError) as exc:
        load_connectivity(path)
    assert str(exc.value) == (
        f"error: {path}: record 1.image_id: image_id must be a string (or an integer, read as "
        f"its text), {got}"
    )


def test_every_problem_of_a_file_is_listed_at_once(tmp_path: Path) -> None:
    recs = connectivity(SQUARE, SQUARE_EDGES)
    recs[0]["height"], recs[1]["height"] = "tall", float("nan")  # NaN: Python's json writes it
    recs[2]["image_id"], recs[3]["pose"] = None, None
    path = write_json(tmp_path / "sq_connectivity.json", recs)
    with pytest.raises(InvalidInputError) as exc:
        load_connectivity(path)
    assert [str(p) for p in exc.value.problems] == [
        f'{path}: image_id "S": record 0.height: height must be a finite number (metres), got '
        "'tall'",
        f'{path}: image_id "A": record 1.height: height must be a finite number (metres), got nan',
        f"{path}: record 2.image_id: image_id must be a string (or an integer, read as its "
        "text), got None",
        f'{path}: image_id "G": record 3.pose: pose must be a list of 16 numbers',
    ]


@pytest.mark.parametrize(
    ("digits", "got"), [(400, "9" * 60), (401, "an integer of 401 digits")]
)  # 400 digits: an int beyond a double's range; 401: the generic reader's stand-in
def test_numbers_float64_cannot_hold_are_refused_not_overflowed(
    tmp_path: Path, digits: int, got: str
) -> None:
    path = tmp_path / "sq_connectivity.json"
    text = json.dumps(connectivity(SQUARE, SQUARE_EDGES))
    path.write_text(text.replace('"height": 1.5', f'"height": {"9" * digits}', 1))
    with pytest.raises(InvalidInputError) as exc:
        load_connectivity(path)
    assert str(exc.value) == (
        f'error: {path}: image_id "S": record 0.height: height must be a finite number '
        f"(metres), got {got}"
    )


def test_nan_in_a_field_neither_reader_uses_is_an_input_error_of_the_scan_reader(
    tmp_path: Path,
) -> None:
    recs = connectivity(SQUARE, SQUARE_EDGES)
    recs[0]["visible"] = [float("nan")] * 4
    path = write_json(tmp_path / "sq_connectivity.json", recs)
    assert load_connectivity(path).ids == ["S", "A", "B", "G"]
    with pytest.raises(InvalidInputError) as exc:  # jsoncpp refuses NaN too
        load_sim_scan(path, "sq")
    assert str(exc.value).startswith(f"error: {path}: not valid JSON (JSON is malformed: ")


@pytest.mark.parametrize("number", [np.float32, np.float64, np.int64, np.int32])
def test_numpy_numbers_are_numbers(number: Any) -> None:
    """Records built in Python may hold numpy scalars: heights and poses of any real type."""
    recs = connectivity(SQUARE, SQUARE_EDGES)
    for r in recs:
        r["height"], r["pose"] = number(1), [number(x) for x in r["pose"]]
    graph = parse_connectivity(recs, scan="sq", source="sq.json")
    assert graph.ids == ["S", "A", "B", "G"]
    assert graph.positions[1].tolist() == [float(x) for x in recs[1]["pose"][3:12:4]]


@pytest.mark.parametrize(
    ("value", "got"), [(np.float32("nan"), "np.float32(nan)"), (np.bool_(True), "np.True_")]
)
def test_a_numpy_nan_or_bool_height_is_refused(value: Any, got: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        parse_connectivity(_records("height", value), scan="sq", source="sq.json")
    assert str(exc.value) == (
        f'error: sq.json: image_id "A": record 1.height: height must be a finite number '
        f"(metres), got {got}"
    )
