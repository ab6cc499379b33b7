"""A tiny REVERIE benchmark on the square graph of spec/metrics.md (S-A-B-G-S, 4 m edges).

Objects (scan ``sq``): 7 is visible from B and G; 9 is visible from G only, and listed at A with
no view (near but unseen: the scorer must not count it); 8 is visible from S. Episodes:
``1_7`` follows S, A, B, G to object 7; ``2_9`` goes S, G to object 9; v2 drops nothing but
reroutes ``2_9`` through A (S, A, B, G), so that v1 and v2 ℓ differ under the DUET rule.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, write_json

BOXES: dict[str, dict[str, dict[str, Any]]] = {
    "S": {"8": {"name": "lamp", "visible_pos": [12], "bbox2d": [[10, 10, 20, 20]]}},
    "A": {"9": {"name": "cup", "visible_pos": [], "bbox2d": []}},
    "B": {"7": {"name": "sofa", "visible_pos": [3, 4], "bbox2d": [[0, 0, 5, 5], [1, 1, 5, 5]]}},
    "G": {
        "7": {"name": "sofa", "visible_pos": [12], "bbox2d": [[100, 100, 50, 40]]},
        "9": {"name": "cup", "visible_pos": [13], "bbox2d": [[300, 200, 10, 10]]},
    },
}

V1 = [
    {
        "id": "1_7",
        "path_id": 1,
        "objId": 7,
        "scan": "sq",
        "path": ["S", "A", "B", "G"],
        "heading": 0.0,
        "instructions": ["bring the sofa cushion", "the sofa"],
        "distance": 12.0,
    },
    {
        "id": "2_9",
        "path_id": 2,
        "objId": 9,
        "scan": "sq",
        "path": ["S", "G"],
        "heading": 0.0,
        "instructions": ["fetch the cup", "the cup by the door"],
        "distance": 4.0,
    },
]
V2 = [
    dict(V1[0]),
    dict(V1[1], path=["S", "A", "B", "G"]),
]
TEST = [{"id": "3", "scan": "sq", "path": ["S"], "heading": 0.0, "instructions": ["find it"]}]


def write_boxes(
    folder: Path, boxes: dict[str, dict[str, Any]] = BOXES, layout: str = "folder"
) -> Path:
    """Writes the boxes as a ``BBox`` folder, a ``BBox.tar.gz`` or a ``BBoxes.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    if layout == "json":
        return write_json(folder / "BBoxes.json", {f"sq_{vp}": objs for vp, objs in boxes.items()})
    bbox = folder / "BBox"
    for vp, objs in boxes.items():
        write_json(bbox / f"sq_{vp}.json", {vp: objs})
    if layout == "tar.gz":
        tar = folder / "BBox.tar.gz"
        with tarfile.open(tar, "w:gz") as tf:
            tf.add(bbox, arcname="BBox")
        for f in bbox.iterdir():
            f.unlink()
        bbox.rmdir()
        return tar
    return bbox


def reverie_root(tmp: Path, *, layout: str = "folder", v2_boxes: bool = False) -> Path:
    """A data root: the square graph, v1 and v2 val/test splits, v1 boxes (and v2 boxes)."""
    write_json(
        tmp / "matterport3d" / "connectivity" / "sq_connectivity.json",
        connectivity(SQUARE, SQUARE_EDGES, isolated=("X",)),
    )
    rev = tmp / "reverie"
    write_json(rev / "REVERIE_val.json", V1)
    write_json(rev / "REVERIE_test.json", TEST)
    write_json(rev / "data_v2" / "REVERIE_val.json", V2)
    write_json(rev / "data_v2" / "REVERIE_test.json", TEST)
    write_boxes(rev, layout=layout)
    if v2_boxes:
        write_boxes(rev / "data_v2", layout="json")
    return tmp


def rev_preds(
    entries: dict[str, tuple[list[str], Any]], field: str = "predObjId"
) -> list[dict[str, Any]]:
    """REVERIE records ``{instr_id: (viewpoints, predicted object)}`` (``...`` omits the field)."""
    out = []
    for k, (vps, obj) in entries.items():
        rec: dict[str, Any] = {"instr_id": k, "trajectory": [[v, 0.0, 0.0] for v in vps]}
        if obj is not ...:
            rec[field] = obj
        out.append(rec)
    return out


def dump(path: Path, value: Any) -> Path:
    """Writes JSON."""
    path.write_text(json.dumps(value))
    return path
