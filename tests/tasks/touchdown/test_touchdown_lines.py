"""Every record-level problem of a Touchdown JSON-lines file (its native form) is named by its
line (1-based, blank lines counted, as the R2R reader names them); a JSON list names the
record's place, as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.touchdown.fixture import ROUTES, RUNS, SDR, make_root
from vlneval.errors import InvalidInputError
from vlneval.evaluation import evaluate


def _problems(tmp: Path, preds: Path, task: str = "touchdown", **kw: Any) -> list[str]:
    with pytest.raises(InvalidInputError) as exc:
        evaluate(task, "dev", preds, root=kw.pop("root", None) or make_root(tmp / "root"), **kw)
    return [str(p) for p in exc.value.problems]


def test_a_bad_route_is_named_by_its_line(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_root(root)
    dev = next((root / "touchdown").rglob("dev.json"))
    bad = {**ROUTES[1], "route_id": "2", "start_heading": "north"}
    lines = [json.dumps(ROUTES[0]), "", json.dumps(bad), json.dumps(ROUTES[2])]
    dev.write_text("\n".join(lines) + "\n")
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps([{"route_id": k, "trajectory": v} for k, v in RUNS.items()]))
    assert _problems(tmp_path, preds, root=root) == [
        f"{dev}: line 3: route_id must be an integer, got '2'",
        f"{dev}: line 3: start_heading: start_heading must be a finite number of degrees, "
        "got 'north'",
    ]


@pytest.mark.parametrize(
    ("task", "good"),
    [("touchdown", {"route_id": 1, "trajectory": RUNS[1]}), ("touchdown-sdr", SDR[0])],
)
def test_a_prediction_without_a_route_id_is_named_by_its_line(
    tmp_path: Path, task: str, good: dict[str, Any]
) -> None:
    bad = {k: v for k, v in good.items() if k != "route_id"}
    preds = tmp_path / "p.jsonl"
    preds.write_text(f"{json.dumps(good)}\n\n{json.dumps(bad)}\n")
    assert f"{preds}: line 3: missing field 'route_id'" in _problems(tmp_path, preds, task)
    listed = tmp_path / "p.json"
    listed.write_text(json.dumps([good, bad]))
    assert f"{listed}: record 1: missing field 'route_id'" in _problems(tmp_path, listed, task)
