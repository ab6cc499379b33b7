"""The two-floor house run, scored once per test module."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reports.house import house_root, write_predictions
from vlneval.diagnostics import ScoredRun, score_run
from vlneval.evaluation import Scorer


@pytest.fixture(scope="module")
def house_run(tmp_path_factory: pytest.TempPathFactory) -> ScoredRun:
    """The house predictions scored with the R2R profile."""
    tmp = tmp_path_factory.mktemp("house")
    root = house_root(tmp / "root")
    preds = write_predictions(tmp / "preds.json")
    return score_run(Scorer("r2r", "val", root=root), preds)


@pytest.fixture(scope="module")
def house_paths(house_run: ScoredRun) -> Path:
    """The predictions file of ``house_run``."""
    return Path(house_run.evaluation.source)
