"""A shard's records file: one reading rule for its lines and its digest."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from vlneval.distributed.shardfile import read_lines, records_digest
from vlneval.errors import VLNEvalError


def test_a_missing_records_file_has_no_lines_and_an_empty_files_digest(tmp_path: Path) -> None:
    missing = tmp_path / "records.jsonl"
    empty = hashlib.sha256(b"").hexdigest()
    assert records_digest(missing) == empty
    assert read_lines(missing) == ([], [], 0, empty)


def test_an_unreadable_records_file_is_one_error_naming_it_for_lines_and_digest(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "records.jsonl"
    folder.mkdir()  # reading a folder fails as an unreadable file does
    for read in (read_lines, records_digest):
        with pytest.raises(
            VLNEvalError, match=rf"^{folder}: cannot read the file \(Is a directory\)$"
        ):
            read(folder)
