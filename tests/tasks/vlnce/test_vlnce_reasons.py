"""Every ``n/a`` of a continuous table comes with its reason and the fix on stderr: r2r-ce and
r2r-twin, under each VLN-CE profile."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.tasks.vlnce.helpers import episode, steps, write_split
from vlneval.cli.main import main

Capture = pytest.CaptureFixture[str]
PROFILES = ("vlnce", "vlnce-exact", "vlnce-strict")
LINE = [[0.0, 0.0, -float(k)] for k in range(5)]
NOTE = re.compile(r"^note: (.+?) (?:is|are) n/a: (.+)$", re.M)
FIXES = {  # the reason and the fix each n/a must name
    "distance": ("no distance source", "distance_to_goal", "--distance twin"),
    "dense": ("no dense reference path", "--gt-file FILE"),
    "length": ("no start-goal distance", "info.geodesic_distance", "--distance twin"),
    "unreachable": ("ends where the goal is unreachable", "check that the trajectories end"),
}


def _cases(tmp: Path) -> dict[str, tuple[list[str], dict[str, str]]]:
    """name -> (score arguments, n/a label -> the kind of reason expected)."""
    tmp.mkdir()
    ep, _ = write_split(tmp)
    (tmp / "nogt").mkdir()
    shutil.copy(ep, tmp / "nogt" / "val.json")
    nogd = tmp / "nogd" / "val.json"
    nogd.parent.mkdir()
    nogd.write_text(json.dumps({"episodes": [episode(1, -4.0, None), episode(2, -4.0, None)]}))
    files = {
        "plain": {"1": steps(LINE), "2": steps(LINE)},
        "carried": {"1": steps(LINE, [4, 3, 2, 1, 0]), "2": steps(LINE, [4, 3, 2, 1, 0])},
        "lost": {"1": steps(LINE, [4, 3, 2, 1, "inf"]), "2": steps(LINE, [4, 3, 2, 1, "inf"])},
    }
    for name, body in files.items():
        (tmp / f"{name}.json").write_text(json.dumps(body))
    goal = {k: "distance" for k in ("NE", "OSR", "SR", "SPL", "sDTW")}

    def args(episodes: Path, preds: str) -> list[str]:
        return ["--task", "r2r-ce", "--split", "val", "--episodes", str(episodes),
                "--predictions", str(tmp / f"{preds}.json")]  # fmt: skip

    return {
        "no distances": (args(ep, "plain"), goal),
        "no distances, no _gt": (
            args(tmp / "nogt" / "val.json", "plain"),
            {**goal, "nDTW": "dense"},
        ),  # fmt: skip
        "no _gt": (args(tmp / "nogt" / "val.json", "carried"), {"nDTW": "dense", "sDTW": "dense"}),
        "no start-goal distance": (
            args(nogd, "carried"),
            {"SPL": "length", "nDTW": "dense", "sDTW": "dense"},
        ),  # fmt: skip
        "all unreachable": (args(ep, "lost"), {"NE": "unreachable"}),
        "all unreachable, excluded": (
            [*args(ep, "lost"), "--unreachable", "exclude"],
            {k: "unreachable" for k in goal},
        ),  # fmt: skip
    }


def _check_notes(out: str, err: str, summary: dict[str, object], want: dict[str, str]) -> None:
    metrics = summary["metrics"]
    assert isinstance(metrics, dict)
    assert {k for k, v in metrics.items() if v is None} == set(want)
    assert out.count("n/a") == len(want)
    noted = {}
    for labels, reason in NOTE.findall(err):
        for label in labels.split(", "):
            noted[label] = reason
    assert set(noted) == set(want), err
    for label, kind in want.items():
        for part in FIXES[kind]:
            assert part in noted[label], (label, noted[label])
        assert summary["unavailable"][label] == noted[label]  # type: ignore[index]


@pytest.mark.parametrize("profile", PROFILES)
def test_every_r2r_ce_na_says_why_and_how_to_fix_it(
    tmp_path: Path, capsys: Capture, profile: str
) -> None:
    for name, (args, want) in _cases(tmp_path / profile).items():
        out_json = tmp_path / profile / f"{name}.json"
        assert main(["score", *args, "--profile", profile, "--json", str(out_json)]) == 0, name
        out, err = capsys.readouterr()
        _check_notes(out, err, json.loads(out_json.read_text()), want)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_r2r_twin_na_says_why_and_how_to_fix_it(
    data_root: Path, tmp_path: Path, capsys: Capture, profile: str
) -> None:
    """Three twin episodes whose agent rises off the floor in 0.9 m steps (each a plausible
    move, so the strict profile scores them too) and ends off the navigable area."""
    from vlneval.tasks import get_task
    from vlneval.tasks.vlnce.score import load_twin_split

    eps, _ = load_twin_split(get_task("r2r-twin"), "val_unseen", root=data_root)
    preds = {}
    for i in range(3):
        pts = eps.starts[i] + np.array([[0.0, 0.0, 0.9 * k] for k in range(5)])
        preds[eps.ids[i]] = steps(pts.tolist())
    path = tmp_path / "up.json"
    path.write_text(json.dumps(preds))
    out_json = tmp_path / "s.json"
    args = ["score", "--task", "r2r-twin", "--split", "val_unseen", "--data-root", str(data_root),
            "--predictions", str(path), "--subset", "--profile", profile, "--json", str(out_json)]  # fmt: skip
    assert main(args) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out_json.read_text())
    assert summary["distance"]["unreachable"]["count"] == 3
    assert summary["metrics"]["SR"] == 0.0 and summary["metrics"]["OSR"] == 0.0
    _check_notes(out, err, summary, {"NE": "unreachable"})
