"""``decode_line``: a lenient line msgspec rejects is read by the explaining pass, and a line
that is not JSON at all is one ValueError in either mode."""

from __future__ import annotations

import math

import msgspec
import pytest

from vlneval.tasks.common.jsonl import decode_line

DECODER = msgspec.json.Decoder()


def test_a_lenient_line_reads_nan_and_infinity() -> None:
    got = decode_line(DECODER, b'{"a": NaN, "b": -Infinity, "c": [1]}', lenient=True)
    assert math.isnan(got["a"]) and got["b"] == -math.inf and got["c"] == [1]


def test_a_strict_line_refuses_nan() -> None:
    with pytest.raises(
        ValueError, match=r"^not valid JSON \(JSON is malformed: invalid character \(byte 6\)\)$"
    ):
        decode_line(DECODER, b'{"a": NaN}')  # the explaining pass only when lenient


@pytest.mark.parametrize("lenient", [False, True])
def test_a_line_that_is_not_json_is_one_value_error(lenient: bool) -> None:
    with pytest.raises(ValueError, match=r"^not valid JSON \(Input data was truncated\)$") as exc:
        decode_line(DECODER, b'{"a": 1,', lenient=lenient)
    assert exc.value.__cause__ is None and exc.value.__suppress_context__
