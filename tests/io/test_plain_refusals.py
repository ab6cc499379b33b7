"""UTF-16 text (with a byte-order mark or without) and bytes after the end of a gzip stream are
refused in plain words, not as JSON one character in ("Expecting value at line 1, column 2")
or zlib's "incorrect header check"."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.fixtures import preds, square_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate
from vlneval.io import gunzip

TEXT = json.dumps(preds({"1_0": ["S", "A", "B", "G"]}))


@pytest.mark.parametrize(
    ("encoding", "order"),
    [("utf-16-le", "little"), ("utf-16-be", "big"), ("utf-16", "little")],  # the last: a BOM
)
def test_utf16_is_named(tmp_path: Path, encoding: str, order: str) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(TEXT.encode(encoding))
    with pytest.raises(InvalidInputError) as exc:
        evaluate("r2r", "val", path, root=square_root(tmp_path / "root"), subset=True)
    assert str(exc.value) == (
        f"error: {path}: is UTF-16 text ({order}-endian), not UTF-8: save it as UTF-8"
    )


def test_bytes_after_the_gzip_data_are_named() -> None:
    with pytest.raises(InvalidInputError) as exc:
        gunzip(gzip.compress(TEXT.encode()) + b"garbage", "p.json.gz", 1 << 20)
    assert str(exc.value) == (
        "error: p.json.gz: not a valid gzip file (7 bytes follow the end of its gzip data; the "
        "file was damaged or appended to)"
    )


def test_members_and_zero_padding_are_still_read() -> None:
    raw = gzip.compress(b"[1,") + gzip.compress(b"2]") + b"\x00" * 512
    assert gunzip(raw, "p.json.gz", 100) == b"[1,2]"
