"""What reading a file costs is bounded by its size, not twice that: a gzip file is
decompressed into one buffer that becomes the bytes (no pieces joined into a copy), a bomb stops
one piece past the limit, and a pipe past the limit is refused before anything is joined."""

from __future__ import annotations

import gzip
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from vlneval.errors import InvalidInputError
from vlneval.io import Limits, read_bytes, reader
from vlneval.io.limits import MIB


def _peak(read: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        read()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


@pytest.fixture(autouse=True)
def _small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "GUNZIP_STEP", MIB)


def test_a_gzip_file_costs_about_its_size_once(tmp_path: Path) -> None:
    path = tmp_path / "p.json.gz"
    path.write_bytes(gzip.compress(b"[" + b" " * (32 * MIB) + b"]"))
    got: list[bytes] = []
    assert _peak(lambda: got.append(read_bytes(path))) < 40 * MIB  # was 64 MiB: the pieces joined
    assert len(got[0]) == 32 * MIB + 2


def test_a_gzip_bomb_stops_at_the_limit_and_its_error_holds_none_of_it(tmp_path: Path) -> None:
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b"[" + b" " * (64 * MIB) + b"]"))
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInputError, match="holds more than 8.0 MiB of JSON") as exc:
            read_bytes(path, Limits(max_bytes=8 * MIB))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert exc.value.__traceback__ is not None  # what the command line keeps while it hints
    assert held < 2 * MIB and peak < 12 * MIB  # was 9 MiB held by the frames of the error


def test_a_device_past_the_limit_is_refused_before_a_copy() -> None:
    def read() -> None:
        with pytest.raises(InvalidInputError, match="/dev/zero: holds more than 8.0 MiB"):
            read_bytes("/dev/zero", Limits(max_bytes=8 * MIB))

    assert _peak(read) < 13 * MIB  # was 18 MiB: the pieces joined before the size was checked
