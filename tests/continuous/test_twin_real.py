"""The continuous twin of R2R val_unseen on the real Matterport3D layouts (a seeded sample; the
full split runs in benchmarks/bench_continuous.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vlneval.agents.continuous import make_agent, run_continuous
from vlneval.continuous.oracle import GridOracle
from vlneval.envs.continuous.env import ContinuousNavEnv
from vlneval.tasks import get_task
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.vlnce.format import parse_ce_predictions
from vlneval.tasks.vlnce.score import load_twin_split, score_continuous, twin_source

SAMPLE = 24


@pytest.fixture(scope="module")
def twin(data_root: Path):  # type: ignore[no-untyped-def]
    return load_twin_split(get_task("r2r-twin"), "val_unseen", root=data_root)


def test_every_episode_has_a_reachable_twin(twin) -> None:  # type: ignore[no-untyped-def]
    eps, worlds = twin
    assert len(eps) == 2349
    unreachable = []
    for i in range(0, len(eps), 3):  # three instructions share a path
        d = GridOracle(worlds(eps.scans[i])).distance(eps.starts[i], eps.goals[i])
        if not math.isfinite(d):
            unreachable.append(eps.ids[i])
    assert unreachable == []


@pytest.mark.parametrize("space", ["r2r-ce", "rxr-ce", "velocity", "waypoint"])
def test_shortest_succeeds_and_stop_scores_zero(twin, space: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    eps, worlds = twin
    sample = np.sort(np.random.default_rng(2026).choice(len(eps), SAMPLE, replace=False)).tolist()
    out = {}
    for agent in ("shortest", "stop"):
        env = ContinuousNavEnv(eps, worlds, action_space=space, privileged=agent == "shortest")
        run = run_continuous(env, make_agent(agent, env.action_space), indices=sample, seed=0)
        path = tmp_path / f"{agent}.json"
        path.write_text(json.dumps(run.predictions))
        preds = parse_ce_predictions(path, eps)
        ev = score_continuous(
            eps,
            preds,
            get_profile("vlnce-exact"),
            twin_source(eps, worlds),
            subset=True,
            show_progress=False,
        )
        out[agent] = ev.to_dict()
    shortest, stop = out["shortest"], out["stop"]
    assert shortest["distance"]["unreachable"]["count"] == 0
    assert shortest["metrics"]["SR"] >= 0.99
    assert shortest["metrics"]["SPL"] > 0.9
    assert (
        stop["metrics"]["SR"] == 0.0
        and stop["metrics"]["TL"] == 0.0
        and stop["metrics"]["SPL"] == 0.0
    )
    assert (
        stop["protocol"]["episodes"],
        stop["protocol"]["n_expected"],
        stop["protocol"]["partial"],
    ) == (SAMPLE, 2349, True)
