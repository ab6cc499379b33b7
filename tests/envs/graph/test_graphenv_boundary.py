"""The information boundary: nothing an agent receives holds the goal or the reference path.

A probe agent searches every observation and ``info`` (recursively: dict keys and values,
tuples, named tuples, object attributes and slots, numpy array contents) for the goal viewpoint
ids, the reference path (as a sequence, or joined in a string) and geodesic distances to the
goal. Only the agent's own viewpoint and its candidates' viewpoint ids are exempt (they are what
it sees), and those are checked to be exactly the current node and its graph neighbours.
The counterfactual test changes every goal and reference path and requires identical streams.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vlneval.envs import ENVS, GraphNavEnv, VectorGraphNavEnv, check_env
from vlneval.envs.checker import EnvCheckError, boundary_leaks
from vlneval.envs.leaks import find_values
from vlneval.envs.loading import load_episodes
from vlneval.graph.store import GraphStore
from vlneval.tasks.common.episodes import EpisodeTable


class LeakProbe:
    """An agent that searches everything it is given, then acts at random."""

    def __init__(
        self, goals: tuple[str, ...], path: tuple[str, ...], distances: list[float]
    ) -> None:
        self.goals, self.path, self.distances = goals, path, distances
        self.found: list[str] = []

    def inspect(self, obs: dict[str, Any], info: dict[str, Any], near_goal: bool) -> None:
        skip = ["['viewpoint']"] + [
            f"['candidates'][{k}].viewpoint" for k in range(len(obs["candidates"]))
        ]
        numbers = () if near_goal else self.distances
        self.found += find_values(
            obs, strings=self.goals, runs=[self.path], numbers=numbers, skip=skip
        )
        self.found += find_values(
            info, strings=self.goals, runs=[self.path], numbers=self.distances
        )


def _probe_split(episodes: EpisodeTable, graphs: GraphStore, space: str, n: int) -> list[str]:
    env = GraphNavEnv(episodes, graphs, action_space=space, max_steps=12)
    rng = np.random.default_rng(0)
    found: list[str] = []
    for i in range(min(n, len(episodes))):
        graph = graphs.graph(episodes.scans[i])
        dist = graphs.distances(episodes.scans[i])
        goals = [graph.index[g] for g in episodes.goals[i]]
        obs, info = env.reset(options={"episode": i})
        probe = None
        while True:
            node = graph.index[obs["viewpoint"]]
            near = {node, *graph.neighbours(node).tolist()}
            assert {c.viewpoint for c in obs["candidates"]} <= {graph.ids[v] for v in near}
            d = [float(dist[v, g]) for v in near for g in goals]
            probe = LeakProbe(episodes.goals[i], episodes.paths[i], d)
            probe.inspect(obs, info, near_goal=bool(near & set(goals)))
            found += [f"{episodes.ids[i]}: {f}" for f in probe.found]
            if info.get("stopped") is not None:
                break
            obs, _, _, _, info = env.step(env.action_space.sample(obs, rng))
    return found


@pytest.mark.parametrize("space", ["panoramic", "egocentric"])
def test_probe_finds_nothing_on_the_demo(space: str) -> None:
    episodes, graphs = load_episodes("demo")
    assert _probe_split(episodes, graphs, space, len(episodes)) == []


@pytest.mark.parametrize("space", ["panoramic", "egocentric"])
def test_probe_finds_nothing_on_r2r(data_root: Path, space: str) -> None:
    episodes, graphs = load_episodes("r2r", "val_unseen", root=data_root)
    assert _probe_split(episodes, graphs, space, 300) == []


def test_probe_would_find_a_leak() -> None:
    obs = {"candidates": (), "viewpoint": "v", "hint": {"target": np.array(["x", "goal"])}}
    probe = LeakProbe(("goal",), ("a", "b", "goal"), [4.25])
    probe.inspect(obs, {"debug": SimpleThing(["a", "b", "goal"], 4.25)}, near_goal=False)
    assert probe.found == [
        "['hint']['target'] holds 'goal'",
        "['debug'].route holds the reference path",
        "['debug'].route[2] holds 'goal'",
        "['debug'].remaining holds the number 4.25",
    ]


@dataclasses.dataclass
class SimpleThing:
    route: list[str]
    remaining: float


def _moved_goals(episodes: EpisodeTable) -> EpisodeTable:
    """The same episodes with every goal moved to the start and every path reversed."""
    other = dataclasses.replace(episodes)
    other.paths = [p[:1] + tuple(reversed(p[1:])) for p in episodes.paths]
    other.goals = [p[:1] for p in episodes.paths]
    return other


def _stream(env: GraphNavEnv, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(len(env)):
        obs, info = env.reset(options={"episode": i})
        out.append(repr((obs, info)))
        done = False
        while not done:
            obs, r, terminated, truncated, info = env.step(env.action_space.sample(obs, rng))
            out.append(repr((obs, r, terminated, truncated, info)))
            done = terminated or truncated
    return out


@pytest.mark.parametrize("space", ["panoramic", "egocentric"])
def test_observations_do_not_depend_on_the_goal(space: str) -> None:
    episodes, graphs = load_episodes("demo")
    a = GraphNavEnv(episodes, graphs, action_space=space, max_steps=15)
    b = GraphNavEnv(_moved_goals(episodes), graphs, action_space=space, max_steps=15)
    assert _stream(a, 3) == _stream(b, 3)


def _vector_stream(venv: VectorGraphNavEnv, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    obs, info = venv.reset(options={"episodes": range(len(venv))})
    out: list[Any] = []
    while obs.active.any():
        out.append(
            [
                obs.pose.copy(),
                obs.cand_ids.copy(),
                obs.cand_geometry.copy(),
                obs.instruction,
                info["episode"].copy(),
            ]
        )
        acts = (rng.random(venv.num_envs) * np.maximum(obs.num_candidates, 1)).astype(np.int32)
        obs, rewards, terminated, truncated, info = venv.step(acts)
        out.append([rewards, terminated, truncated])
    return out


def test_batched_observations_do_not_depend_on_the_goal() -> None:
    episodes, graphs = load_episodes("demo")
    a = _vector_stream(VectorGraphNavEnv(episodes, graphs, num_envs=5), 1)
    b = _vector_stream(VectorGraphNavEnv(_moved_goals(episodes), graphs, num_envs=5), 1)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            assert np.array_equal(u, v) if isinstance(u, np.ndarray) else u == v


GRAPH_ENVS = [
    i for i in ENVS.ids() if i.startswith("graph-")
]  # continuous ones have their own checks


def test_both_graph_environments_are_registered() -> None:
    assert GRAPH_ENVS == ["graph-egocentric-v1", "graph-panoramic-v1"]


@pytest.mark.parametrize("env_id", GRAPH_ENVS)
@pytest.mark.parametrize("privileged", [False, True])
def test_every_registered_environment_passes_check_env(env_id: str, privileged: bool) -> None:
    assert "information boundary" in check_env(env_id, privileged=privileged)


class LeakyEnv(GraphNavEnv):
    """Puts the goal in ``info``: what check_env must catch."""

    def step(self, action: int) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info["goal"] = self._truth.goals(self._i)
        return obs, reward, terminated, truncated, info


class DistanceLeakEnv(GraphNavEnv):
    """Adds the distance to the goal to the observation (as a progress hint)."""

    def _observe(self) -> dict[str, Any]:
        obs = super()._observe()
        scan = obs["scan"]
        graph = self.world.store.graph(scan)
        goal = graph.index[self._truth.goals(self._i)[0]]
        obs["progress"] = np.array([float(self.world.distances(scan)[self._node, goal])])
        return obs


@pytest.mark.parametrize("cls", [LeakyEnv, DistanceLeakEnv])
def test_check_env_catches_leaks(cls: type[GraphNavEnv]) -> None:
    episodes, graphs = load_episodes("demo")
    env = cls(episodes, graphs)
    with pytest.raises(EnvCheckError, match="information boundary"):
        check_env(env)


def test_boundary_leaks_is_clean_on_a_fresh_environment() -> None:
    episodes, graphs = load_episodes("demo")
    env = GraphNavEnv(episodes, graphs)
    obs, info = env.reset(options={"episode": 0})
    assert boundary_leaks(env, obs, info) == []
