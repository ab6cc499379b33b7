"""The board's intervals are what the API schema says they are."""

from __future__ import annotations

import numpy as np

from vlneval.diagnostics.context import path_groups
from vlneval.diagnostics.intervals import column_intervals
from vlneval.evaluation import evaluate
from vlneval.server.schemas import EntryOut
from vlneval.server.services.intervals import metric_intervals
from vlneval.tasks.common.root import demo_root


def test_the_board_intervals_resample_whole_paths_as_the_schema_says() -> None:
    """EntryOut's doc said "a 95 % bootstrap interval over the episodes"; the server resamples
    the demo's 12 paths (three instructions each), 1,000 times with seed 0."""
    assert (
        "a 95 % bootstrap interval (1,000 resamples, seed 0) that resamples whole paths\n    when "
        "episodes share one (:func:`vlneval.diagnostics.path_groups`), else the episodes."
        in str(EntryOut.__doc__)
    )
    res = evaluate("demo", "val", demo_root() / "demo" / "predictions_val.json")
    paths = path_groups(res)
    assert paths is not None and np.unique(paths).size == 12
    by_path = column_intervals(
        {"SR": np.asarray(res.per_episode["success"], dtype=np.float64)},
        rng=np.random.default_rng(0), n_resamples=1000, confidence=0.95,
        groups=paths, two_stage=False, rates=["SR"],
    )["SR"]  # fmt: skip
    assert by_path is not None
    assert metric_intervals(res)["SR"] == [float(by_path.low), float(by_path.high)]
