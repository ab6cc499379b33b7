"""The R2R family on the Matterport3D graphs: Room-to-Room, Room-for-Room and Room-across-Room.

``format.py`` reads R2R/R4R episode files, ``rxr.py`` RxR's JSONL guide files, ``profiles.py``
holds the official scorers' rules and ``score.py`` scores a split (predictions are read by the
shared reader, :mod:`vlneval.tasks.common.predictions`).
"""

from __future__ import annotations

from vlneval.tasks.base import Task

__all__ = ["R2R", "R4R", "RXR"]

SPLITS = ("train", "val_seen", "val_unseen", "test")
LOAD_R2R = "vlneval.tasks.r2r.format:load_r2r"
SCORER = "vlneval.tasks.r2r.score:R2RScorer"

R2R = Task(
    "r2r",
    "Room-to-Room (Anderson et al. 2018): follow an instruction to a goal viewpoint",
    "r2r",
    ("r2r", "r2r-envdrop", "r2r-duet"),
    "r2r",
    ("R2R_{split}.json",),
    LOAD_R2R,
    SPLITS,
    "val_unseen",
    SCORER,
    graph_trajectories=True,
    summary_records=True,
    public_copy="vlneval.tasks.r2r.public:public_r2r",
)
R4R = Task(
    "r4r",
    "Room-for-Room (Jain et al. 2019): joined R2R paths, route fidelity matters",
    "r4r",
    ("r4r", "r4r-google", "r2r-duet"),
    "r4r",
    ("R4R_{split}.json",),
    LOAD_R2R,
    ("train", "val_seen", "val_unseen"),
    "val_unseen",
    SCORER,
    graph_trajectories=True,
    summary_records=True,
    public_copy="vlneval.tasks.r2r.public:public_r2r",
)
RXR = Task(
    "rxr",
    "Room-across-Room (Ku et al. 2020): multilingual, long, non-shortest routes",
    "rxr",
    ("rxr",),
    "rxr",
    ("rxr_{split}_guide.jsonl", "rxr_{split}.jsonl"),
    "vlneval.tasks.r2r.rxr:load_rxr",
    ("train", "val_seen", "val_unseen", "test_standard"),
    "val_unseen",
    SCORER,
    primary_metric="nDTW",
    graph_trajectories=True,
    summary_records=True,
    public_copy="vlneval.tasks.r2r.public:public_r2r",
)
