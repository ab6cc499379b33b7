"""VLN-CE (Krantz et al. 2020) episodes, dense reference paths and predictions.

The code lives in three modules, re-exported here so that ``vlneval.tasks.vlnce.format`` stays the
one place to import from:

- :mod:`vlneval.tasks.vlnce.frames`: Habitat and world coordinates (``habitat_to_world``,
  ``world_to_habitat``, ``heading_from_quaternion``);
- :mod:`vlneval.tasks.vlnce.episodes`: the episodes and ``_gt`` files (``load_vlnce``,
  ``load_vlnce_gt``, ``ContinuousEpisodes``, ``episodes_from_arrays``);
- :mod:`vlneval.tasks.vlnce.predictions`: the ``r2r-ce`` and ``rxr-jsonl`` predictions
  (``parse_ce_predictions``, ``ContinuousPredictions``, ``reference_as_predictions``).

Every problem is collected and raised together, naming the file, the episode id and the field.
"""

from __future__ import annotations

import re
from pathlib import Path

from vlneval.tasks.vlnce.episodes import (
    ContinuousEpisode,
    ContinuousEpisodes,
    episodes_from_arrays,
    load_vlnce,
    load_vlnce_gt,
)

# A private helper, kept importable from here: vlneval.continuous.twin imports it.
from vlneval.tasks.vlnce.episodes import _ragged as _ragged
from vlneval.tasks.vlnce.frames import habitat_to_world, heading_from_quaternion, world_to_habitat
from vlneval.tasks.vlnce.predictions import (
    CE_FORMS,
    START_TOLERANCE,
    ContinuousPredictions,
    parse_ce_predictions,
    reference_as_predictions,
)

__all__ = [
    "ContinuousEpisode",
    "ContinuousEpisodes",
    "ContinuousPredictions",
    "load_vlnce",
    "load_vlnce_gt",
    "parse_ce_predictions",
    "heading_from_quaternion",
    "habitat_to_world",
    "world_to_habitat",
    "CE_FORMS",
    "START_TOLERANCE",
    "reference_as_predictions",
    "episodes_from_arrays",
    "load_vlnce_split",
]


def load_vlnce_split(
    path: str | Path, *, task: str, split: str, gt_path: str | Path | None = None
) -> ContinuousEpisodes:
    """The episodes of a split file with its dense ``_gt`` references: ``gt_path``, else the
    file beside it when there is one (``val_unseen.json`` and ``val_unseen_gt.json``); the
    task's reader. Their ``data_version`` is the release the folder names
    (``R2R_VLNCE_v1-3_preprocessed/...``: ``v1-3``), else None."""
    path = Path(path)
    if gt_path is None:
        gt = path.parent / path.name.replace(".json", "_gt.json")
        gt_path = gt if gt.exists() else None
    episodes = load_vlnce(path, gt_path=gt_path, task=task, split=split)
    named = [
        m[1] for p in path.parts if (m := re.fullmatch(r"R2R_VLNCE_(v[\d-]+)_preprocessed", p))
    ]
    episodes.data_version = named[-1] if named else None
    return episodes
