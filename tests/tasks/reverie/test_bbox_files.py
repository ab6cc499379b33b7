"""Object-box files: the three layouts, the visibility index, and malformed files named."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from tests.tasks.reverie.reverie_fixtures import BOXES, write_boxes
from vlneval.errors import InvalidInputError, MissingDataError
from vlneval.tasks.reverie import boxes as boxes_module
from vlneval.tasks.reverie.boxes import find_boxes, load_boxes


@pytest.mark.parametrize("layout", ["folder", "tar.gz", "json"])
def test_layouts_read_the_same_index(tmp_path: Path, layout: str) -> None:
    boxes = load_boxes(write_boxes(tmp_path, layout=layout), version="v1")
    assert boxes.layout == layout
    assert boxes.seen_from("sq", "7") == {"B", "G"} and boxes.seen_from("sq", 9) == {"G"}
    assert boxes.seen_from("sq", "404") == frozenset()
    assert [o.object_id for o in boxes.visible_objects("sq", "A")] == []  # 9 listed, no view
    assert list(boxes.objects("sq", "A")) == ["9"]
    sofa = boxes.objects("sq", "B")["7"]
    assert sofa.name == "sofa" and sofa.views == (3, 4) and sofa.boxes[1] == (1.0, 1.0, 5.0, 5.0)
    assert boxes.describe()["viewpoints"] == 4 and boxes.describe()["objects"] == 5


def _bad(tmp: Path, name: str, content: object) -> Path:
    folder = tmp / "BBox"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(content))
    return folder


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        (
            "sq_G.json",
            {"G": {"7": {"name": "x", "visible_pos": [36], "bbox2d": [[0, 0, 1, 1]]}}},
            "sq_G.json.7.visible_pos: visible_pos must be a list of view indices 0..35",
        ),
        (
            "sq_G.json",
            {"G": {"7": {"name": "x", "visible_pos": [1, 2], "bbox2d": [[0, 0, 1, 1]]}}},
            "sq_G.json.7.bbox2d: bbox2d must hold one [x, y, w, h] per view of visible_pos (2)",
        ),
        ("sq_G.json", {"H": {}}, "sq_G.json: expected {'G': {objId: record}}"),
        ("sqG.json", {"G": {}}, "sqG.json: file name must be <scan>_<viewpoint>.json"),
        ("sq_G.json", {"G": {"7": [1, 2]}}, "sq_G.json.7: expected an object record"),
    ],
)
def test_malformed_files_are_named(tmp_path: Path, name: str, content: object, needle: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        load_boxes(_bad(tmp_path, name, content))
    assert needle in str(exc.value)


def test_missing_and_empty(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError, match="no such object-box file or folder"):
        load_boxes(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInputError, match="holds no object boxes"):
        load_boxes(tmp_path / "empty")
    (tmp_path / "b.json").write_text(json.dumps({"noscan": {}}))
    with pytest.raises(InvalidInputError, match="noscan: keys must be <scan>_<viewpoint>"):
        load_boxes(tmp_path / "b.json")
    (tmp_path / "x.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(InvalidInputError, match="not a readable tar archive"):
        load_boxes(tmp_path / "x.tar.gz")


def test_find_boxes_prefers_the_release(tmp_path: Path) -> None:
    assert find_boxes(tmp_path, "v2") is None
    write_boxes(tmp_path, BOXES, layout="tar.gz")
    assert find_boxes(tmp_path, "v2") == (tmp_path / "BBox.tar.gz", "v1")
    write_boxes(tmp_path / "data_v2", BOXES, layout="json")
    assert find_boxes(tmp_path, "v2") == (tmp_path / "data_v2" / "BBoxes.json", "v2")
    assert find_boxes(tmp_path, "v1") == (tmp_path / "BBox.tar.gz", "v1")


@pytest.mark.parametrize("layout", ["tar.gz", "json"])
def test_a_box_file_is_parsed_once_across_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """The parsed boxes are kept in the vlneval cache, keyed by the file's bytes: a later
    process (an empty in-memory cache) reads them back instead of parsing the file again."""
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    path = write_boxes(tmp_path / "data", layout=layout)
    first = load_boxes(path, version="v1")
    [kept] = (tmp_path / "cache" / "reverie").iterdir()
    assert kept.name.startswith("boxes-v1-") and kept.suffix == ".msgpack"

    def no_parse(*_: object) -> None:
        raise AssertionError("the file was parsed again")

    monkeypatch.setattr(boxes_module, "_CACHE", {})
    monkeypatch.setattr(boxes_module, "_load", no_parse)
    again = load_boxes(path, version="v2")
    assert again.by_viewpoint == first.by_viewpoint and again.layout == layout
    assert (again.source, again.version) == (str(path), "v2")
    assert again.objects("sq", "B")["7"].boxes[1] == (1.0, 1.0, 5.0, 5.0)


def test_a_damaged_copy_or_a_changed_file_is_parsed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    path = write_boxes(tmp_path / "data", layout="json")
    first = load_boxes(path)
    [kept] = (tmp_path / "cache" / "reverie").iterdir()
    kept.write_bytes(b"\x93 not msgpack")
    monkeypatch.setattr(boxes_module, "_CACHE", {})
    assert load_boxes(path).by_viewpoint == first.by_viewpoint
    assert kept.read_bytes()[:1] != b"\x93"  # written again
    data = json.loads(path.read_text())
    data["sq_X"] = {}
    path.write_text(json.dumps(data))
    monkeypatch.setattr(boxes_module, "_CACHE", {})
    assert (
        load_boxes(path).objects("sq", "X") == {} and ("sq", "X") in load_boxes(path).by_viewpoint
    )
    assert len(list((tmp_path / "cache" / "reverie").iterdir())) == 2


def test_a_cache_that_cannot_be_written_does_not_fail_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache is best effort: ``$VLNEVAL_CACHE`` naming a file (no folder can be made in it)
    leaves the boxes read from the file, and nothing is written."""
    (tmp_path / "cache").write_text("a file, not a folder")
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    path = write_boxes(tmp_path / "data", layout="tar.gz")
    boxes = load_boxes(path)
    assert boxes.objects("sq", "B")["7"].boxes[1] == (1.0, 1.0, 5.0, 5.0)
    assert (tmp_path / "cache").read_text() == "a file, not a folder"


@pytest.mark.parametrize(
    "kept", [("tar.gz", []), ("zip", [("sq", "B", {})]), ("json", [("sq", "B")])]
)
def test_a_well_formed_copy_of_the_wrong_shape_is_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kept: object
) -> None:
    """An empty or wrong-shaped msgpack copy is passed over: the file is parsed again."""
    monkeypatch.setenv("VLNEVAL_CACHE", str(tmp_path / "cache"))
    path = write_boxes(tmp_path / "data", layout="tar.gz")
    first = load_boxes(path)
    [copy] = (tmp_path / "cache" / "reverie").iterdir()
    copy.write_bytes(msgspec.msgpack.encode(kept))
    monkeypatch.setattr(boxes_module, "_CACHE", {})
    again = load_boxes(path)
    assert again.by_viewpoint == first.by_viewpoint and again.layout == "tar.gz"
    assert msgspec.msgpack.decode(copy.read_bytes())[0] == "tar.gz"
    assert len(msgspec.msgpack.decode(copy.read_bytes())[1]) == len(first.by_viewpoint)
