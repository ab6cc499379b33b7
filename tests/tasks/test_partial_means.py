"""Means over fewer episodes than scored (an infinite NE or TL) say so: ``averaged_over`` in the
summary, ``(k of n)`` in the table, and the reason when none is left."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, preds, write_json
from vlneval.cli.main import main
from vlneval.evaluation import evaluate
from vlneval.reports.terminal import metric_cell


def _episode(path_id: int, path: list[str]) -> dict[str, object]:
    return {"path_id": path_id, "scan": "sq", "path": path, "heading": 0.0, "instructions": ["go"]}


def _score(tmp: Path, goals: list[str], entries: dict[str, list[str]], profile: str = "r2r"):  # type: ignore[no-untyped-def]
    """The square graph and a second component U1-U2 (no path from the square)."""
    root = tmp / "root"
    graph = {**SQUARE, "U1": (50.0, 0.0, 0.0), "U2": (54.0, 0.0, 0.0)}
    edges = [*SQUARE_EDGES, ("U1", "U2")]
    write_json(root / "matterport3d/connectivity/sq_connectivity.json", connectivity(graph, edges))
    write_json(root / "r2r/R2R_val.json", [_episode(k + 1, ["S", g]) for k, g in enumerate(goals)])
    return evaluate(
        "r2r", "val", write_json(tmp / "p.json", preds(entries)), profile=profile, root=root
    )


def test_graph_ne_over_reachable_episodes_is_reported(tmp_path: Path) -> None:
    """Episode 2's goal U2 is in another component: NE averages episode 1 only, and says so."""
    r = _score(tmp_path, ["G", "U2"], {"1_0": ["S", "G"], "2_0": ["S", "G"]})
    summary = r.to_dict()
    assert summary["averaged_over"] == {"NE": 1}
    assert metric_cell(summary, "NE") == "0.00 (1 of 2)"
    assert metric_cell(summary, "SR") == "50.00"
    assert all(c["holds"] for c in summary["checks"])  # its nDTW 0 is no violation


def test_graph_averaged_over_is_empty_when_every_value_is_finite(tmp_path: Path) -> None:
    r = _score(tmp_path, ["G", "A"], {"1_0": ["S", "G"], "2_0": ["S", "A"]})
    assert r.to_dict()["averaged_over"] == {}


def test_duet_tl_over_episodes_without_a_jump_between_components(tmp_path: Path) -> None:
    r = _score(tmp_path, ["G", "A"], {"1_0": ["S", "G"], "2_0": ["S", "U1"]}, profile="r2r-duet")
    assert r.to_dict()["averaged_over"] == {"TL": 1, "NE": 1}  # it also ends in U1
    assert metric_cell(r.to_dict(), "TL") == "4.00 (1 of 2)"


def test_every_value_infinite_says_so_not_no_scored_episodes(tmp_path: Path) -> None:
    r = _score(tmp_path, ["U2", "U2"], {"1_0": ["S", "G"], "2_0": ["S", "A"]})
    assert r.metrics["NE"] is None
    assert (
        r.unavailable["NE"]
        == "all 2 episodes have an infinite NE (a viewpoint of the trajectory has no path to the goal)"
    )
    assert not any(w.startswith("NE:") for w in r.warnings)  # the reason says it once


JUMP = (
    "1 episode(s) jump between viewpoints with no path between them (first: 2_0): their TL is "
    "infinite; an official script that scores jumps by their shortest distance (VLN-DUET's, say) "
    "fails on such a file (its distances hold reachable pairs only)"
)


def test_duet_jump_into_another_component_is_named_and_validate_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """VLN-DUET's eval looks every step up among the reachable pairs: KeyError on S -> U1."""
    r = _score(tmp_path, ["G", "A"], {"1_0": ["S", "G"], "2_0": ["S", "U1"]}, profile="r2r-duet")
    assert JUMP in r.warnings
    argv = ["validate", "--task", "r2r", "--split", "val", "--data-root", str(tmp_path / "root"),
            "--predictions", str(tmp_path / "p.json"), "--profile", "r2r-duet"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {tmp_path / 'p.json'}: not a valid submission: episode 2_0's TL is infinite (a "
        "jump between viewpoints with no path between them); the official script fails on it"
    )
