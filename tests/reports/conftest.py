"""Two runs on the two-floor house: A (the table in house.py) and B (two more successes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reports.house import EXECUTED, house_root, write_predictions
from vlneval.diagnostics import ScoredRun, score_run
from vlneval.evaluation import Scorer

#: B stops on the goal in 2_0 and walks all the way in 3_0.
EXECUTED_B = {**EXECUTED, "2_0": ["F0", "F1", "F2", "F3"], "3_0": ["F0", "F1", "F2", "F3", "F4"]}


@dataclass
class House:
    root: Path
    a: Path
    b: Path


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> House:
    tmp = tmp_path_factory.mktemp("house")
    return House(
        house_root(tmp / "root"),
        write_predictions(tmp / "run_a.json"),
        write_predictions(tmp / "run_b.json", EXECUTED_B),
    )


@pytest.fixture(scope="module")
def runs(house: House) -> tuple[ScoredRun, ScoredRun]:
    scorer = Scorer("r2r", "val", root=house.root)
    return score_run(scorer, house.a), score_run(scorer, house.b)
