"""Eight-bytes-at-a-time helpers of the compiled scanner agree with byte-by-byte reading."""

from __future__ import annotations

import random

import numpy as np


def _reference(text: bytes, i: int) -> tuple[int, bool]:
    j, escaped = i + 1, False
    while j < len(text):
        if text[j] == 0x5C:
            escaped, j = True, j + 2
            continue
        if text[j] == 0x22:
            return j, escaped
        j += 1
    return -1, escaped


def test_string_end_matches_a_byte_by_byte_reading() -> None:
    from vlneval.data._json_kernels import string_end

    rng = random.Random(0)
    alphabet = b'ab"\\\x00\xff\x22\x5c01'
    for _ in range(3000):
        body = bytes(rng.choice(alphabet[:2] * 8 + alphabet) for _ in range(rng.randint(0, 40)))
        text = b'"' + body + rng.choice([b'"', b""])
        end, escaped = string_end(np.frombuffer(text, np.uint8), 0, len(text))
        want_end, want_escaped = _reference(text, 0)
        assert end == want_end, text
        if end >= 0:
            assert escaped == want_escaped, text


def test_has_byte_is_exact() -> None:
    from vlneval.data._words import has_byte

    quotes = np.uint64(0x2222222222222222)
    rng = random.Random(1)
    for _ in range(2000):
        raw = bytes(rng.choice([0x21, 0x22, 0x23, 0xA2, 0x00, 0xFF]) for _ in range(8))
        word = np.uint64(int.from_bytes(raw, "little"))
        assert has_byte(word, quotes) == (0x22 in raw), raw
