"""HANNA: find an object, asking for help; several goals, success within 2 m.

``format.py`` reads HANNA episodes and checks predictions (``agent_pose``, help requests),
``profiles.py`` holds the official scorer's rules, ``score.py`` scores a split.
"""

from __future__ import annotations

from vlneval.tasks.base import Task

__all__ = ["TASK"]

TASK = Task(
    "hanna",
    "HANNA (Nguyen & Daume III 2019): find an object, asking for help (several goals, 2 m)",
    "hanna",
    ("hanna",),
    "hanna",
    ("hanna_{split}.json",),
    "vlneval.tasks.hanna.format:load_hanna",
    ("train", "val_seen", "val_unseen", "test_seen", "test_unseen"),
    "val_unseen",
    "vlneval.tasks.hanna.score:HannaScorer",
    run_records="vlneval.tasks.hanna.records:hanna_records",
    public_copy="vlneval.tasks.hanna.public:public_hanna",
    summary_records=True,
)
