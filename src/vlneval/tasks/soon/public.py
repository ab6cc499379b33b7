"""The public copy of a SOON file (see :mod:`vlneval.tasks.common.public_file`): every start
path cut to its start, and the target's boxes replaced by one stand-in box at the first start
(a fixed box in the middle of the panorama, named ``object``). The scan, starts and
instructions stay."""

from __future__ import annotations

import math
from typing import Any

from vlneval.tasks.common.public_file import cut_to_start, map_records

__all__ = ["public_instruction", "public_soon", "stand_in_box"]

_H, _E = math.pi, 0.0  # the panorama's middle, in radians as the release stores boxes
_D = 0.1


def stand_in_box(image_id: str, scan: str) -> dict[str, Any]:
    """A box of public values only: at ``image_id``, a fixed square around the middle.

    Example:
        >>> b = stand_in_box("s", "sq"); b["image_id"], b["obj_name"], b["target"]["center"]
        ('s', 'object', {'heading': 3.141592653589793, 'elevation': 0.0})
    """
    corners = {
        "left_top": (_H - _D, _E + _D),
        "right_top": (_H + _D, _E + _D),
        "right_bottom": (_H + _D, _E - _D),
        "left_bottom": (_H - _D, _E - _D),
        "center": (_H, _E),
    }
    return {
        "image_id": image_id,
        "scan": scan,
        "obj_name": "object",
        "heading": _H,
        "elevation": _E,
        "target": {k: {"heading": h, "elevation": e} for k, (h, e) in corners.items()},
        "mouse_left_top": {"x": 0, "y": 0},
        "mouse_right_bottom": {"x": 1, "y": 1},
    }


def public_instruction(rec: dict[str, Any]) -> None:
    """Keeps only the public parts of a SOON instruction record.

    Example:
        >>> rec = {"instr_id": "1", "path": [["s", "g"], ["a", "g"]],
        ...        "bboxes": [{"image_id": "g", "scan": "sq"}]}
        >>> public_instruction(rec); rec["path"], rec["scan"], rec["bboxes"][0]["image_id"]
        ([['s'], ['a']], 'sq', 's')
    """
    boxes = rec.get("bboxes")
    scan = rec.get("scan")
    if scan is None and isinstance(boxes, list) and boxes and isinstance(boxes[0], dict):
        scan = boxes[0].get("scan")
    paths = rec.get("path")
    starts = [cut_to_start(p) for p in paths] if isinstance(paths, list) else []
    rec["path"] = starts
    if scan is not None:
        rec["scan"] = scan
    first = starts[0][0] if starts and starts[0] else None
    if first is not None and isinstance(scan, str):
        rec["bboxes"] = [stand_in_box(first, scan)]
    else:
        rec.pop("bboxes", None)


public_soon = map_records(public_instruction)
