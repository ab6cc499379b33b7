"""Every label a task's summary contains has a MetricInfo: the demo and each task's fixture are
scored, and each summary label is looked up in the table, its column found in the per-episode
table (with the summary's value as its mean) and its unit agreeing with the summary's ``units``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vlneval.evaluation import evaluate
from vlneval.metrics import metric_info


def _demo(tmp: Path) -> Any:
    from vlneval.tasks.common.root import demo_root

    return evaluate("demo", "val", demo_root() / "demo" / "predictions_val.json")


def _r2r(tmp: Path) -> Any:
    from tests.reports.house import house_root, write_predictions

    return evaluate("r2r", "val", write_predictions(tmp / "p.json"), root=house_root(tmp / "root"))


def _rxr(tmp: Path) -> Any:
    from tests.tasks.r2r.test_rxr import _root

    p = tmp / "preds.jsonl"
    p.write_text(
        '{"instruction_id": 11, "path": ["S", "G"]}\n'
        '{"instruction_id": 12, "path": ["S", "A", "B", "G"]}\n'
    )
    return evaluate("rxr", "val_unseen", p, root=_root(tmp / "root"))


def _ndh(tmp: Path) -> Any:
    from tests.tasks.cvdn.fixture import make_root, predictions

    return evaluate("ndh", "val_seen", predictions(tmp), root=make_root(tmp / "root"))


def _hanna(tmp: Path) -> Any:
    from tests.tasks.hanna.fixture import make_root, predictions

    return evaluate("hanna", "val_unseen", predictions(tmp), root=make_root(tmp / "root"))


def _touchdown(tmp: Path) -> Any:
    from tests.tasks.touchdown.fixture import make_root, nav

    return evaluate("touchdown", "dev", nav(tmp), root=make_root(tmp / "root"))


def _touchdown_sdr(tmp: Path) -> Any:
    from tests.tasks.touchdown.fixture import SDR, make_root, write

    return evaluate("touchdown-sdr", "dev", write(tmp, SDR), root=make_root(tmp / "root"))


def _reverie(tmp: Path) -> Any:
    from tests.tasks.reverie.reverie_fixtures import dump, rev_preds, reverie_root
    from tests.tasks.reverie.test_reverie_scoring import HAND

    p = dump(tmp / "preds.json", rev_preds(HAND, "predObjId"))
    root = reverie_root(tmp / "root")
    return evaluate("reverie", "val", p, root=root, options={"data_version": "v1"})


def _soon(tmp: Path) -> Any:
    from tests.tasks.soon.soon_fixtures import dump, soon_preds, soon_root

    p = dump(tmp / "preds.json", soon_preds())
    return evaluate("soon", "val", p, root=soon_root(tmp / "root"))


def _vlnce(tmp: Path) -> Any:
    from tests.tasks.vlnce.helpers import steps, write_split

    from vlneval.tasks.profiles import get_profile
    from vlneval.tasks.vlnce.format import load_vlnce, parse_ce_predictions
    from vlneval.tasks.vlnce.score import DistanceSource, score_continuous

    episodes_file, gt_file = write_split(tmp)
    eps = load_vlnce(episodes_file, gt_path=gt_file, task="r2r-ce", split="val")
    line = [[0.0, 0.0, -float(k)] for k in range(5)]
    p = tmp / "p.json"
    p.write_text(json.dumps({"1": steps(line, [4.0, 3.0, 2.0, 1.0, 0.0]),
                             "2": steps(line[:2], [4.0, 3.0])}))  # fmt: skip
    source = DistanceSource("carried", "carried in the test file")
    return score_continuous(eps, parse_ce_predictions(p, eps), get_profile("vlnce"), source)


SCORERS: dict[str, Callable[[Path], Any]] = {
    "demo": _demo,
    "r2r": _r2r,
    "rxr": _rxr,
    "ndh": _ndh,
    "hanna": _hanna,
    "touchdown": _touchdown,
    "touchdown-sdr": _touchdown_sdr,
    "reverie": _reverie,
    "soon": _soon,
    "r2r-ce": _vlnce,
}


@pytest.mark.parametrize("task", sorted(SCORERS))
def test_every_summary_label_has_metric_info(task: str, tmp_path: Path) -> None:
    result = SCORERS[task](tmp_path)
    summary = result.to_dict()
    assert summary["metrics"], task
    labels = [*summary["metrics"], *summary.get("unavailable", {}), *summary.get("units", {})]
    for label in labels:
        metric_info(label)  # raises UnknownNameError naming the label
    for label, unit in summary.get("units", {}).items():
        assert metric_info(label).shown_unit == unit, (task, label)
    per = result.per_episode
    for label, value in summary["metrics"].items():
        if value is None:
            continue
        column = metric_info(label).column
        assert column in per, (task, label, column)
        values = np.asarray(per[column], dtype=np.float64)
        finite = values[np.isfinite(values)]
        assert float(np.mean(finite)) == pytest.approx(value, abs=1e-9), (task, label)


def test_the_task_scorers_cover_every_registered_task_family() -> None:
    from vlneval.tasks import TASKS

    # r4r shares r2r's scorer and labels; r2r-twin is r2r-ce with distances from a real scene
    uncovered = sorted(set(TASKS) - set(SCORERS) - {"r4r", "r2r-twin"})
    assert not uncovered, (
        f"task(s) {', '.join(uncovered)} have no fixture here: add one to SCORERS in "
        "tests/metrics/test_metrics_info_tasks.py (a tiny root and predictions the task scores)"
    )
