"""REVERIE object observations: the objects visible at the agent's viewpoint, never the target.

Each object is ``{"id", "name", "views", "boxes"}`` with one ``(x, y, w, h)`` pixel box per view
it is seen in (the BBox files' non-empty ``visible_pos``), in file order. The sensor reads only
the boxes and the observation's scan and viewpoint, so it cannot tell which object an episode
wants (spec/protocol.md). An agent names its object in ``finish()`` (``{"predObjId": id}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from vlneval.graph.store import GraphStore
from vlneval.registry import load_entry_point
from vlneval.tasks import TASKS, get_task
from vlneval.tasks.common.episodes import EpisodeTable

if TYPE_CHECKING:
    from vlneval.tasks.reverie.boxes import ObjectBoxes

__all__ = ["ObjectSensor", "ObjectTaskSetup", "object_task_setup"]


class ObjectSensor:
    """``objects``: the objects visible from the current viewpoint (REVERIE candidates).

    Example:
        >>> from vlneval.tasks.reverie.boxes import ObjectBoxes, ObjectView
        >>> boxes = ObjectBoxes("mem", "json", "v1", {("s", "a"): {
        ...     "7": ObjectView("7", "sofa", (12,), ((1.0, 2.0, 3.0, 4.0),)),
        ...     "8": ObjectView("8", "cup", (), ())}})
        >>> [o["id"] for o in ObjectSensor(boxes).observe({"scan": "s", "viewpoint": "a"}, None)]
        ['7']
    """

    key = "objects"

    def __init__(self, boxes: ObjectBoxes) -> None:
        self.boxes = boxes
        self.description = (
            "objects visible at the current viewpoint: id, name, views and (x, y, w, h) boxes "
            f"({boxes.version} boxes, {boxes.source}); never which one is the target"
        )
        self._cache: dict[tuple[str, str], tuple[Mapping[str, Any], ...]] = {}

    def observe(self, observation: Mapping[str, Any], inputs: Any) -> tuple[Mapping[str, Any], ...]:
        """The visible objects at ``observation``'s viewpoint (read-only mappings)."""
        key = (observation["scan"], observation["viewpoint"])
        out = self._cache.get(key)
        if out is None:
            out = tuple(
                MappingProxyType(
                    {"id": o.object_id, "name": o.name, "views": o.views, "boxes": o.boxes}
                )
                for o in self.boxes.visible_objects(*key)
            )
            self._cache[key] = out
        return out


@dataclass
class ObjectTaskSetup:
    """What a run of an object task needs.

    Attributes:
        episodes, graphs: the split of the requested release and its graphs.
        sensors: the observation sensors (``objects``).
        score_options: the options to score the run with (``data_version``, ``bboxes``).
        notes: remarks for the user (e.g. the boxes are of another release).
    """

    episodes: EpisodeTable
    graphs: GraphStore
    sensors: list[ObjectSensor]
    score_options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def object_task_setup(
    task: str,
    split: str | None,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    data_version: str | None = None,
    bboxes: str | Path | None = None,
) -> ObjectTaskSetup | None:
    """The episodes, sensor and scoring options of an object task (one that declares
    ``object_boxes``: its scorer's files are read); None for other tasks.

    Example:
        >>> object_task_setup("demo", None) is None
        True
    """
    t = get_task(task) if task in TASKS else None
    if t is None or not t.object_boxes:
        return None
    open_objects = load_entry_point(t.object_boxes)
    episodes, store, boxes, notes = open_objects(
        t, split or t.default_split, root=root, episodes_file=episodes_file, graphs=graphs,
        data_version=data_version, bboxes=bboxes,
    )  # fmt: skip
    options: dict[str, Any] = {}
    if data_version is not None:
        options["data_version"] = data_version
    if bboxes is not None:
        options["bboxes"] = str(bboxes)
    return ObjectTaskSetup(episodes, store, [ObjectSensor(boxes)], options, notes)
