"""The egocentric environment against the original Matterport3D simulator, on real data.

The shared data holds trajectories written by the original simulator (R2R ``eval.py``'s simple
agents, run by sadanand1120/Matterport3DSimulator, and the shortest-agent file of
peteanderson80/Matterport3DSimulator's web app). Replaying them in vlneval's egocentric
environment must give the same viewpoints, headings and elevations, step by step: this checks
the field-of-view rule, the navigable-list order, heading snapping and the R2R teacher.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from vlneval.agents.baselines import RandomAgent
from vlneval.envs.graph.env import GraphNavEnv
from vlneval.envs.loading import load_episodes

SIMPLE = "predictions/r2r/simple_agents_sadanand1120"


def _records(root: Path, name: str) -> list[dict]:
    return json.loads(gzip.decompress((root / f"{name}.json.gz").read_bytes()))


def _env(root: Path, split: str, privileged: bool = False) -> GraphNavEnv:
    episodes, graphs = load_episodes("r2r", split, root=root)
    return GraphNavEnv(episodes, graphs, action_space="egocentric", privileged=privileged)


def _replay_random(env: GraphNavEnv, rec: dict) -> bool:
    """Whether some number of initial right turns (0..11) makes RandomAgent write ``rec``."""
    for turns in range(12):
        obs, _ = env.reset(options={"episode": rec["instr_id"]})
        agent = RandomAgent()
        agent.reset(obs, rng=np.random.default_rng(0))
        agent.steps = -turns
        done = False
        while not done:
            obs, _, terminated, truncated, _ = env.step(agent.act(obs))
            done = terminated or truncated
        if [list(s) for s in env.trajectory()] == rec["trajectory"]:
            return True
    return False


@pytest.mark.parametrize("split", ["val_seen", "val_unseen"])
def test_original_random_agent_trajectories_replay_exactly(data_root: Path, split: str) -> None:
    env = _env(data_root, split)
    records = _records(data_root, f"{SIMPLE}/{split}_random_agent")
    assert len(records) in (1021, 2349)
    failed = [r["instr_id"] for r in records if not _replay_random(env, r)]
    assert failed == []


@pytest.mark.parametrize(
    ("split", "name"),
    [
        ("val_seen", f"{SIMPLE}/val_seen_shortest_agent"),
        ("val_unseen", f"{SIMPLE}/val_unseen_shortest_agent"),
        ("val_unseen", "predictions/r2r/matterport3dsimulator_web/val_unseen_shortest_agent"),
    ],
)
def test_original_shortest_agent_trajectories_replay_exactly(
    data_root: Path, split: str, name: str
) -> None:
    env = _env(data_root, split, privileged=True)
    teacher = env.privileged()
    differ = []
    for rec in _records(data_root, name):
        env.reset(options={"episode": rec["instr_id"]})
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(teacher.action())
            done = terminated or truncated
        if [list(s) for s in env.trajectory()] != rec["trajectory"]:
            differ.append(rec["instr_id"])
    assert differ == []
