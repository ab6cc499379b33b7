"""REVERIE: navigate to a remote object and name it (visibility success, RGS, RGSPL).

``format.py`` reads the episodes and the predicted objects, ``boxes.py`` the BBox files (which
objects each viewpoint sees), ``profiles.py`` the challenge and VLN-DUET rules, ``score.py``
scores a split.
"""

from __future__ import annotations

from vlneval.tasks.base import Option, Task

__all__ = ["TASK", "DATA_VERSION", "BBOXES"]

DATA_VERSION = Option(
    "data_version", "REVERIE release: v2 (the default, current release) or v1", ("v2", "v1"), "v2"
)
BBOXES = Option("bboxes", "the object boxes (BBox/, BBox.tar.gz or BBoxes.json)", cli=False)

TASK = Task(
    "reverie",
    "REVERIE (Qi et al. 2020): navigate to a remote object and name it (visibility success, RGS)",
    "reverie",
    ("reverie", "reverie-duet"),
    "reverie",
    ("data_v2/REVERIE_{split}.json",),
    "vlneval.tasks.reverie.format:load_reverie",
    ("train", "val_seen", "val_unseen", "test"),
    "val_unseen",
    "vlneval.tasks.reverie.score:ReverieScorer",
    options=(DATA_VERSION, BBOXES),
    object_boxes="vlneval.tasks.reverie.score:open_reverie",
    version_files=(("v2", "data_v2/REVERIE_{split}.json"), ("v1", "REVERIE_{split}.json")),
    public_copy="vlneval.tasks.reverie.public:public_reverie",
    summary_records=True,
    primary_metric="RGSPL",
)
