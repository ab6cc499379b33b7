"""iter_records: a JSON list, or JSON lines; one JSON object only in a JSON-lines file."""

from __future__ import annotations

import pytest

from vlneval.errors import InvalidInputError
from vlneval.io import iter_records


@pytest.mark.parametrize("body", [b'{"a": 1}', b'{"a": NaN}'])
def test_one_json_object_in_a_json_file_is_refused_with_or_without_a_nan(body: bytes) -> None:
    """A NaN makes msgspec reject the object and the text be read as JSON lines: the one
    object is refused all the same, not scored."""
    with pytest.raises(InvalidInputError) as exc:
        iter_records(body, "preds.json", expected="a JSON list of predictions")
    assert str(exc.value) == (
        "error: preds.json: expected a JSON list of predictions, got a JSON object"
    )


@pytest.mark.parametrize("name", ["preds.jsonl", "preds.jsonl.gz"])
def test_one_json_object_in_a_json_lines_file_is_its_one_record(name: str) -> None:
    [[plain]] = list(iter_records(b'{"a": 1}\n', name))
    [[nan]] = list(iter_records(b'{"a": NaN}\n', name))
    assert plain == {"a": 1} and nan["a"] != nan["a"] and nan.line == 1  # type: ignore[attr-defined]


def test_json_lines_with_a_nan_in_a_json_file_are_read() -> None:
    [rows] = list(iter_records(b'{"a": NaN}\n{"a": 2}\n', "preds.json"))
    assert len(rows) == 2 and rows[1] == {"a": 2}
