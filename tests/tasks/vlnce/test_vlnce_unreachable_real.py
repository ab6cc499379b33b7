"""Leaving the map cannot improve a metric unseen (issue: ending the worst half of the episodes
off the map improved r2r-twin NE from 8.95 to 6.45, the unreachable ones leaving the mean).

The random agent of the R2R-CE action space runs on every val_unseen episode of the twin
(seed 0): NE 9.15; then the worst half by NE take one more step, 707 m off the map (NE was
6.35 before this was reported, with nothing beside it). SR, OSR, SPL and
sDTW count those episodes as failures (no better than before); NE is over the reachable half
and says so beside its value, in the summary, the table and on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlneval.cli.main import main

Capture = pytest.CaptureFixture[str]
GOAL = ("OSR", "SR", "SPL", "sDTW")


def _score(root: Path, preds: Path, out: Path, *extra: str) -> list[str]:
    return ["score", "--task", "r2r-twin", "--split", "val_unseen", "--data-root", str(root),
            "--predictions", str(preds), "--json", str(out), *extra]  # fmt: skip


def _off_the_map(preds: Path, rows: Path, out: Path) -> int:
    """The worst half (by NE) of ``preds`` ends with a step of (+500, +500, 0) m."""
    ne = {r["instr_id"]: r["nav_error"] for r in map(json.loads, rows.read_text().splitlines())}
    worst = sorted(ne, key=lambda k: (-ne[k], k))[: len(ne) // 2]
    data = json.loads(preds.read_text())
    for k in worst:
        last = dict(data[k][-1])
        data[k][-1] = {**last, "stop": False}
        x, y, z = last["position"]
        data[k].append({**last, "position": [x + 500.0, y + 500.0, z]})
    out.write_text(json.dumps(data))
    return len(worst)


def test_ending_off_the_map_improves_no_goal_metric_and_ne_says_over_how_many(
    data_root: Path, tmp_path: Path, capsys: Capture
) -> None:
    preds, rows = tmp_path / "random.json", tmp_path / "rows.jsonl"
    run = ["run", "--task", "r2r-twin", "--split", "val_unseen", "--data-root", str(data_root),
           "--env", "continuous-r2r-ce", "--agent", "random", "--out", str(preds)]  # fmt: skip
    assert main(run) == 0
    assert main([*_score(data_root, preds, tmp_path / "s0.json"), "--per-episode", str(rows)]) == 0
    base = json.loads((tmp_path / "s0.json").read_text())
    assert base["n_episodes"] == 2349 and base["distance"]["unreachable"]["count"] == 0
    assert base["metrics"]["NE"] == pytest.approx(9.145653051725283, rel=1e-9)
    assert base["averaged_over"] == {}
    capsys.readouterr()

    moved = _off_the_map(preds, rows, tmp_path / "offmap.json")
    assert moved == 1174
    assert main(_score(data_root, tmp_path / "offmap.json", tmp_path / "s1.json")) == 0
    out, err = capsys.readouterr()
    s = json.loads((tmp_path / "s1.json").read_text())
    for label in GOAL:  # failures: no better than before
        assert s["metrics"][label] <= base["metrics"][label], label
    assert s["metrics"]["SR"] == pytest.approx(51 / 2349)
    assert s["metrics"]["OSR"] == base["metrics"]["OSR"] == pytest.approx(84 / 2349)
    # NE averages the 1175 reachable episodes, and every output says so.
    assert s["metrics"]["NE"] == pytest.approx(6.3539023891869055, rel=1e-9)
    assert s["averaged_over"] == {"NE": 1175}
    unreachable = s["distance"]["unreachable"]
    assert (unreachable["count"], unreachable["reachable"]) == (1174, 1175)
    assert unreachable["policy"] == "failure"
    assert "6.35 (1175 of 2349)" in out
    assert (
        "warning: 1174 of 2349 episode(s) end where the goal is unreachable (an infinite "
        "distance: off the map, out of the navigable area, or a goal the distance source cannot "
        "reach): SR, SPL and sDTW count them as failures (OSR keeps a closer approach on the way); "
        "NE is the mean over the 1175 "
        "reachable episode(s) only (the count is shown beside it)"
    ) in err
    # ... and each 707 m step is a move no action makes: warned here, refused when strict.
    assert "warning: 1174 move(s) in 1174 episode(s) are longer than one action allows" in err
    assert "moves 707.11 m" in err
    strict = _score(data_root, tmp_path / "offmap.json", tmp_path / "s2.json")
    assert main([*strict, "--profile", "vlnce-strict"]) == 2
    assert not (tmp_path / "s2.json").exists()
