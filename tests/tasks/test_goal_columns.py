"""A goal task built the documented way (``checked_navigation`` -> ``finish_columns``) keeps
the goal columns only: no DTW, nDTW, sDTW or CLS unless its profile reports them."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import vlneval
from tests.tasks.test_registry_tasks import CASES
from vlneval.tasks.common.goal_scoring import GOAL_COLUMNS, checked_navigation
from vlneval.tasks.common.request import ScoreOptions


def test_checked_navigation_keeps_the_goal_columns(tmp_path: Path) -> None:
    split, kw, predictions = CASES["ndh"](tmp_path)
    with vlneval.Scorer("ndh", split, **kw) as scorer:
        inner: Any = scorer.split_scorer  # the task's own scorer: its episodes and graphs
        preds = inner.trajectories(predictions, ScoreOptions())
        prof = inner.profile
        args = (inner.episodes, preds, inner.graphs)
        nav = checked_navigation(*args, prof, False)[2]
        with_cls = checked_navigation(
            *args, dataclasses.replace(prof, metrics=("SR", "CLS")), False
        )
    assert tuple(nav) == GOAL_COLUMNS
    assert tuple(with_cls[2]) == (*GOAL_COLUMNS, "cls")
