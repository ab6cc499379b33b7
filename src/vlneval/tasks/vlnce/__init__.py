"""VLN-CE (continuous environments) and the continuous twin of R2R.

``format.py`` gathers the readers (``episodes.py``: episodes and ``_gt`` files; ``frames.py``:
Habitat and world coordinates; ``predictions.py``: ``r2r-ce`` and ``rxr-jsonl`` predictions),
``profiles.py`` the continuous profiles, ``score.py`` the scorers and their distance sources,
``summary.py`` the aggregates and the reason of every n/a, ``moves.py`` the check of moves
longer than one action allows.
"""

from __future__ import annotations

from vlneval.tasks.base import Option, Task

__all__ = ["R2R_CE", "R2R_TWIN", "DISTANCE", "GT_FILE", "UNREACHABLE", "SHOW_PROGRESS"]

DISTANCE = Option(
    "distance",
    "VLN-CE distance source: auto (carried when the file carries distances, else none), "
    "carried, twin (grid geodesic on the Matterport3D twin, an approximation) or none",
    ("auto", "carried", "twin", "none"),
    "auto",
    cli=True,
)
GT_FILE = Option("gt_file", "the split's dense _gt reference file (default: beside the episodes)")
UNREACHABLE = Option(
    "unreachable",
    "episodes ending where the goal is unreachable: failure (the profile's default) or exclude",
    ("failure", "exclude"),
)
SHOW_PROGRESS = Option("show_progress", "show a progress bar on long DTW runs", cli=False)

R2R_CE = Task(
    "r2r-ce",
    "R2R in continuous environments (VLN-CE, Krantz et al. 2020): Habitat positions",
    "vlnce",
    ("vlnce", "vlnce-exact", "vlnce-strict", "vlnce-fastdtw-python"),
    "vlnce/R2R_VLNCE_v1-3_preprocessed",
    ("{split}/{split}.json",),
    "vlneval.tasks.vlnce.format:load_vlnce_split",
    ("train", "val_seen", "val_unseen", "test"),
    "val_unseen",
    "vlneval.tasks.vlnce.score:VlnceScorer",
    options=(
        Option("data_version", "VLN-CE release of the episodes", ("v1-3",), "v1-3", cli=False),
        DISTANCE,
        GT_FILE,
        UNREACHABLE,
        SHOW_PROGRESS,
    ),
    run_env="continuous-r2r-ce",
    public_copy="vlneval.tasks.vlnce.public:public_vlnce",
)
R2R_TWIN = Task(
    "r2r-twin",
    "continuous twin of R2R: grid worlds built from the Matterport3D navigation graphs",
    "vlnce-exact",
    ("vlnce-exact", "vlnce", "vlnce-strict"),
    "r2r",
    ("R2R_{split}.json",),
    "vlneval.tasks.r2r.format:load_r2r",
    ("train", "val_seen", "val_unseen", "test"),
    "val_unseen",
    "vlneval.tasks.vlnce.score:TwinScorer",
    options=(UNREACHABLE, SHOW_PROGRESS),
    run_env="continuous-r2r-ce",
    public_copy="vlneval.tasks.r2r.public:public_r2r",
)
