"""CVDN's navigation from dialog history (NDH): goal progress on the Matterport3D graphs.

``format.py`` reads NDH episodes and checks predictions, ``profiles.py`` holds the NDH
scorer's rules, ``score.py`` scores a split against the chosen ground-truth path.
"""

from __future__ import annotations

from vlneval.tasks.base import Option, Task

__all__ = ["TASK", "PATH_TYPE"]

PATH_TYPE = Option(
    "path_type",
    "NDH ground-truth path (default planner_path, as the official CVDN scorer)",
    ("planner_path", "player_path", "trusted_path"),
    "planner_path",
)

TASK = Task(
    "ndh",
    "CVDN/NDH (Thomason et al. 2019): navigate from a dialog history (goal progress)",
    "cvdn",
    ("cvdn",),
    "cvdn",
    ("NDH/{split}.json", "{split}.json"),
    "vlneval.tasks.cvdn.format:load_ndh",
    ("train", "val_seen", "val_unseen", "test"),
    "val_unseen",
    "vlneval.tasks.cvdn.score:NDHScorer",
    options=(PATH_TYPE,),
    public_copy="vlneval.tasks.cvdn.public:public_ndh",
    summary_records=True,
    primary_metric="GP",
)
