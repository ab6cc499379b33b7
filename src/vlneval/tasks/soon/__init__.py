"""SOON: find an object from several starts and point at it (det SR, det SPL).

``format.py`` reads the episodes (one per instruction and start) and predictions,
``profiles.py`` holds the submission scorer's rules, ``score.py`` scores a split.
"""

from __future__ import annotations

from vlneval.tasks.base import Option, Task

__all__ = ["TASK", "ANGLE_UNITS"]

ANGLE_UNITS = Option(
    "angle_units",
    "SOON predicted angles: normalised (default, official) or radians (converted as DUET)",
    ("normalised", "radians"),
    "normalised",
    label="SOON angle unit",
)

TASK = Task(
    "soon",
    "SOON (Zhu et al. 2021): find an object from several starts and point at it (det SR)",
    "soon",
    ("soon", "soon-wrap"),
    "soon",
    ("{split}.json",),
    "vlneval.tasks.soon.format:load_soon",
    ("train", "val_unseen_instrs", "val_unseen_house", "test"),
    "val_unseen_house",
    "vlneval.tasks.soon.score:SoonScorer",
    options=(ANGLE_UNITS,),
    run_records="vlneval.tasks.soon.records:soon_submission",
    public_copy="vlneval.tasks.soon.public:public_soon",
    summary_records=True,
)
