"""The leaderboard's refusals of a scored file (``vlneval validate``'s rules), in the library."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.fixtures import SQUARE, SQUARE_EDGES, connectivity, preds, write_json
from vlneval.evaluation import evaluate
from vlneval.tasks.common.blind import BlindCheck
from vlneval.tasks.common.verdict import blind_refusal, blind_warnings, scored_refusal


def _score(tmp: Path, entries: dict[str, list[str]], profile: str):  # type: ignore[no-untyped-def]
    """The square graph and a second component U1-U2 (no path from the square)."""
    root = tmp / "root"
    graph = {**SQUARE, "U1": (50.0, 0.0, 0.0), "U2": (54.0, 0.0, 0.0)}
    write_json(
        root / "matterport3d/connectivity/sq_connectivity.json",
        connectivity(graph, [*SQUARE_EDGES, ("U1", "U2")]),
    )
    episodes = [
        {"path_id": k + 1, "scan": "sq", "path": ["S", g], "heading": 0.0, "instructions": ["go"]}
        for k, g in enumerate(["G", "A"])
    ]
    write_json(root / "r2r/R2R_val.json", episodes)
    return evaluate(
        "r2r", "val", write_json(tmp / "p.json", preds(entries)), profile=profile, root=root
    )


def test_a_clean_file_is_taken(tmp_path: Path) -> None:
    result = _score(tmp_path, {"1_0": ["S", "G"], "2_0": ["S", "A"]}, "r2r")
    assert scored_refusal(result, "SPL") is None


def test_an_infinite_tl_is_refused_naming_the_episode(tmp_path: Path) -> None:
    result = _score(tmp_path, {"1_0": ["S", "G"], "2_0": ["S", "U1"]}, "r2r-duet")
    assert scored_refusal(result, "SPL") == (
        f"{tmp_path / 'p.json'}: not a valid submission: episode 2_0's TL is infinite (a "
        "jump between viewpoints with no path between them); the official script fails on it"
    )


def test_an_unavailable_ranking_metric_is_refused_first(tmp_path: Path) -> None:
    result = _score(tmp_path, {"1_0": ["S", "G"], "2_0": ["S", "U1"]}, "r2r-duet")
    assert "TL" not in result.unavailable  # averaged over the finite one: TL itself is there
    result = dataclasses.replace(  # as a REVERIE file without object ids
        result, unavailable={**result.unavailable, "RGSPL": "no predicted objects"}
    )
    assert scored_refusal(result, "RGSPL") == (
        f"{tmp_path / 'p.json'}: not a valid submission: a leaderboard ranks r2r by RGSPL: "
        "no predicted objects"
    )


def test_a_blind_check_refuses_only_for_its_ranking_metric() -> None:
    check = BlindCheck("p.json", "reverie", "test", 2, [],
                       ["RGSPL will be n/a: no predObjId", "2 ids ignored"])  # fmt: skip
    assert blind_refusal(check, "RGSPL") == (
        "p.json: not a valid submission: a leaderboard ranks reverie by RGSPL: no predObjId"
    )
    assert blind_warnings(check, "RGSPL") == ["2 ids ignored"]
    assert blind_refusal(check, "SPL") is None
    assert blind_warnings(check, "SPL") == check.warnings
