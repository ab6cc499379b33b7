"""Baselines on the real R2R splits, scored with the official r2r profile.

The R2R paper's simple agents (Anderson et al. 2018, table of baselines): random val_seen
SR 15.9 %, NE 9.45 m; val_unseen SR 16.3 %, NE 9.23 m; shortest SR 100 %, NE 0. Our random agent
(egocentric, the simulator's rules) averaged over 5 seeds must land within 2 points of SR and
0.5 m of NE (one seed varies by about ±1.2 points: ~1,000-2,300 episodes).
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean
from typing import Any

import pytest

from vlneval.agents import get_agent, run_agent
from vlneval.envs.loading import load_episodes
from vlneval.evaluation import evaluate

PAPER = {"val_seen": (0.159, 9.45), "val_unseen": (0.163, 9.23)}


def _score(root: Path, split: str, result: Any, tmp: Path) -> dict[str, Any]:
    path = tmp / f"{result.agent}_{split}.json"
    path.write_text(json.dumps(result.records))
    summary = evaluate("r2r", split, path, root=root, run=result.protocol).to_dict()
    assert summary["protocol"]["executed_path"].startswith("full")
    return summary


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
@pytest.mark.parametrize("space", ["panoramic", "egocentric"])
def test_shortest_is_perfect(data_root: Path, tmp_path: Path, split: str, space: str) -> None:
    episodes, graphs = load_episodes("r2r", split, root=data_root)
    result = run_agent(get_agent("shortest"), episodes, graphs, action_space=space, batch_size=64)
    summary = _score(data_root, split, result, tmp_path)
    assert summary["metrics"]["SR"] == 1.0 and summary["metrics"]["NE"] == 0.0
    assert summary["metrics"]["SPL"] == 1.0
    assert summary["protocol"]["privileged"].startswith("goals, reference path")


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_stop_never_succeeds(data_root: Path, tmp_path: Path, split: str) -> None:
    episodes, graphs = load_episodes("r2r", split, root=data_root)
    summary = _score(
        data_root, split, run_agent(get_agent("stop"), episodes, graphs, batch_size=64), tmp_path
    )
    assert summary["metrics"]["SR"] == 0.0 and summary["metrics"]["TL"] == 0.0
    assert summary["protocol"]["privileged"] == "none"


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_random_matches_the_r2r_paper(data_root: Path, tmp_path: Path, split: str) -> None:
    episodes, graphs = load_episodes("r2r", split, root=data_root)
    agent = get_agent("random")
    runs = [
        _score(
            data_root, split, run_agent(agent, episodes, graphs, seed=s, batch_size=64), tmp_path
        )
        for s in range(5)
    ]
    sr = mean(r["metrics"]["SR"] for r in runs)
    ne = mean(r["metrics"]["NE"] for r in runs)
    paper_sr, paper_ne = PAPER[split]
    assert abs(sr - paper_sr) <= 0.02, sr
    assert abs(ne - paper_ne) <= 0.5, ne
    assert runs[0]["protocol"]["action_space"]["name"] == "egocentric"
    assert runs[0]["protocol"]["seeds"] == [0]
