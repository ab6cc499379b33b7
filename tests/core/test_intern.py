"""The span interner gives every distinct text one code, across blocks and table growth."""

from __future__ import annotations

import random

import numpy as np

from vlneval.data.intern import SpanInterner


def _spans(texts: list[str]) -> tuple[bytes, np.ndarray, np.ndarray]:
    raw = b" ".join(t.encode() for t in texts)
    sizes = np.array([len(t.encode()) for t in texts], dtype=np.int64)
    starts = np.zeros(len(texts), dtype=np.int64)
    np.cumsum(sizes[:-1] + 1, out=starts[1:])
    return raw, starts, starts + sizes


def test_codes_match_a_dictionary_over_many_blocks() -> None:
    rng = random.Random(0)
    pool = [f"{rng.getrandbits(128):032x}" for _ in range(3000)] + ["a", "é", "", "a" * 40]
    interner, reference, got, all_texts = SpanInterner(), {}, [], []
    for _ in range(30):
        texts = [rng.choice(pool) for _ in range(rng.randint(0, 500))]
        all_texts += texts
        got += interner.add(*_spans(texts)).tolist()
        for t in texts:
            reference.setdefault(t, len(reference))
        assert len(interner) == len(reference)
    assert interner.texts() == list(reference)
    assert got == [reference[t] for t in all_texts]


def test_codes_follow_first_appearance() -> None:
    interner = SpanInterner()
    assert interner.add(*_spans(["x", "y", "x"])).tolist() == [0, 1, 0]
    assert interner.add(*_spans([])).tolist() == []
    assert interner.add(*_spans(["y", "z"])).tolist() == [1, 2]
    assert interner.texts() == ["x", "y", "z"]


def test_spans_outside_the_buffer_are_refused() -> None:
    import pytest

    for starts, ends in (([0], []), ([1], [0]), ([-1], [1]), ([0], [3])):
        with pytest.raises(ValueError, match="spans must lie in the buffer"):
            SpanInterner().add(b"ab", np.array(starts, np.int64), np.array(ends, np.int64))


def test_find_names_known_texts_and_refuses_none() -> None:
    interner = SpanInterner()
    interner.add(*_spans(["12_0", "12_1", "7_0"]))
    got = interner.find(*_spans(["7_0", "12_2", "12_1", "", "12_0"]))
    assert got.tolist() == [2, -1, 1, -1, 0]


def test_episode_rows_of_id_spans_match_the_index() -> None:
    from vlneval.data.episodes import EpisodeBuilder

    b = EpisodeBuilder()
    ids = ["4_0", "4_1", "é_0", "a\nb", "9"]  # one id holds a line break
    for eid in ids:
        b.add(eid, "s", ("v",), None, 0.0, "")
    table = b.build(task="t", split="s", source="f", id_field="instr_id")
    asked = ["a\nb", "9", "4_1", "nope", "é_0", "4_0"]
    raw, starts, ends = _spans(asked)
    assert table.rows_of(raw, starts, ends).tolist() == [table.index.get(a, -1) for a in asked]
