"""One choice between ``<scan>_connectivity.json`` and ``.json.gz``, made by
:func:`connectivity_file` for the graph store and for MatterSim alike."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity
from vlneval.errors import InvalidInputError
from vlneval.graph import GraphStore
from vlneval.graph.matterport import connectivity_file


def _write(folder: Path, *, plain: bytes | None = None, zipped: bytes | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if plain is not None:
        (folder / "sq_connectivity.json").write_bytes(plain)
    if zipped is not None:
        (folder / "sq_connectivity.json.gz").write_bytes(gzip.compress(zipped))


TEXT = json.dumps(connectivity(SQUARE, SQUARE_EDGES)).encode()


def test_either_file_alone_is_read_and_none_when_neither(tmp_path: Path) -> None:
    _write(tmp_path / "a", plain=TEXT)
    _write(tmp_path / "b", zipped=TEXT)
    assert connectivity_file(tmp_path / "a", "sq") == tmp_path / "a" / "sq_connectivity.json"
    assert connectivity_file(tmp_path / "b", "sq") == tmp_path / "b" / "sq_connectivity.json.gz"
    assert connectivity_file(tmp_path / "a", "other") is None
    assert GraphStore(tmp_path / "b", use_cache=False).graph("sq").ids == ["S", "A", "B", "G"]


def test_both_with_the_same_text_read_the_plain_one(tmp_path: Path) -> None:
    _write(tmp_path, plain=TEXT, zipped=TEXT)
    assert connectivity_file(tmp_path, "sq") == tmp_path / "sq_connectivity.json"
    store = GraphStore(tmp_path, use_cache=False)
    assert store.scans == ["sq"] and store.graph("sq").source == str(
        tmp_path / "sq_connectivity.json"
    )


def test_both_with_different_texts_are_refused_naming_both(tmp_path: Path) -> None:
    other = json.dumps(connectivity(SQUARE, SQUARE_EDGES[:3])).encode()
    _write(tmp_path, plain=TEXT, zipped=other)
    message = (
        f"error: {tmp_path / 'sq_connectivity.json'} and {tmp_path / 'sq_connectivity.json.gz'} "
        "both hold scan sq's graph but differ: remove one, or make them the same file"
    )
    with pytest.raises(InvalidInputError) as exc:
        connectivity_file(tmp_path, "sq")
    assert str(exc.value) == message
    store = GraphStore(tmp_path, use_cache=False)
    assert store.scans == ["sq"]  # listing the folder reads no file
    with pytest.raises(InvalidInputError) as exc:
        store.graph("sq")
    assert str(exc.value) == message


def test_a_folder_named_as_a_connectivity_file_is_called_a_folder(tmp_path: Path) -> None:
    from vlneval.errors import MissingDataError

    (tmp_path / "sq_connectivity.json").mkdir()
    store = GraphStore(tmp_path, use_cache=False)
    assert store.scans == ["sq"]
    with pytest.raises(MissingDataError) as exc:
        store.graph("sq")
    assert str(exc.value) == (
        f"{tmp_path}/sq_connectivity.json: is a folder, expected the connectivity file of scan sq"
    )
    (tmp_path / "sq_connectivity.json").rmdir()
    with pytest.raises(MissingDataError) as exc:
        store.graph("sq")
    assert str(exc.value) == f"{tmp_path}: the file of scan sq was removed"


def test_both_files_are_read_once_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store hashes and parses the bytes read to compare the two files: no third read."""
    from vlneval.graph import matterport

    _write(tmp_path, plain=TEXT, zipped=TEXT)
    reads: list[str] = []
    path_read, io_read = Path.read_bytes, matterport.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda p: reads.append(p.name) or path_read(p))
    monkeypatch.setattr(matterport, "read_bytes", lambda p: reads.append(p.name) or io_read(p))
    assert GraphStore(tmp_path, use_cache=False).graph("sq").ids == ["S", "A", "B", "G"]
    assert reads == ["sq_connectivity.json", "sq_connectivity.json.gz"]
