"""The demo task: a tiny synthetic R2R-format benchmark shipped inside vlneval.

Its files live in ``vlneval/demo_data`` (regenerate them with
``python -m vlneval.tasks.demo.generate OUT_DIR``); it is read and scored as R2R is
(:mod:`vlneval.tasks.r2r`), with the profile of ``profiles.py``.
"""

from __future__ import annotations

from vlneval.tasks.base import Task

__all__ = ["TASK"]

TASK = Task(
    "demo",
    "a tiny synthetic benchmark shipped inside vlneval (no downloads; not real data)",
    "demo",
    ("demo", "r2r", "r2r-envdrop", "r2r-duet"),
    "demo",
    ("DEMO_{split}.json",),
    "vlneval.tasks.r2r.format:load_r2r",
    ("val",),
    "val",
    "vlneval.tasks.r2r.score:R2RScorer",
    embedded=True,
    graph_trajectories=True,
    summary_records=True,
    notes=("the demo task is synthetic (generated houses and episodes), not real data",),
    public_copy="vlneval.tasks.r2r.public:public_r2r",
)
