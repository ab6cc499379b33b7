"""The vectorised environment: same dynamics as the single one, autoreset, arrays, errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.envs.graph.helpers import star
from vlneval.envs import (
    ENVS,
    TURN_RIGHT,
    GraphNavEnv,
    InvalidActionError,
    PrivilegeError,
    VectorGraphNavEnv,
    make_env,
)
from vlneval.envs.loading import load_episodes
from vlneval.errors import UnknownNameError, VLNEvalError
from vlneval.registry import Registry, parse_id


def _random(obs, rng: np.random.Generator, camera: bool) -> np.ndarray:  # type: ignore[no-untyped-def]
    n = np.maximum(obs.num_candidates, 1)
    k = (rng.random(len(n)) * (n + (4 if camera else 0))).astype(np.int32)
    return np.where(k < n, k, n - 1 - k).astype(np.int32)


@pytest.mark.parametrize("space", ["panoramic", "egocentric"])
@pytest.mark.parametrize("batch", [1, 4, 64])
def test_same_trajectories_as_the_single_environment(space: str, batch: int) -> None:
    episodes, graphs = load_episodes("demo")
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=batch, action_space=space, max_steps=9)
    single = GraphNavEnv(episodes, graphs, action_space=space, max_steps=9)
    rng = np.random.default_rng(batch)
    obs, info = venv.reset(options={"episodes": range(len(episodes))})
    taken: dict[int, list[int]] = {i: [] for i in range(len(episodes))}
    while obs.active.any():
        acts = _random(obs, rng, space == "egocentric")
        for s in np.flatnonzero(obs.active).tolist():
            taken[int(info["episode"][s])].append(int(acts[s]))
        obs, *_, info = venv.step(acts)
    for i, actions in taken.items():
        single.reset(options={"episode": i})
        for a in actions:
            single.step(a)
        assert single.trajectory() == venv.trajectory(i)
    assert set(venv.finished().tolist()) == set(range(len(episodes)))


@pytest.mark.parametrize("space", ["panoramic", "egocentric"])
def test_batch_arrays_match_dict_observations(space: str) -> None:
    episodes, graphs = load_episodes("demo")
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=6, action_space=space)
    rng = np.random.default_rng(0)
    obs, _ = venv.reset(options={"episodes": range(len(episodes))})
    for _ in range(6):
        for s in range(venv.num_envs):
            d = venv.observation(s)
            n = int(obs.num_candidates[s])
            assert n == len(d["candidates"])
            assert venv.viewpoint_ids[obs.viewpoint[s]] == d["viewpoint"]
            assert venv.scans[obs.scan[s]] == d["scan"] and obs.instruction[s] == d["instruction"]
            assert (obs.heading[s], obs.elevation[s], obs.view_index[s], obs.step[s]) == (
                d["heading"],
                d["elevation"],
                d["view_index"],
                d["step"],
            )
            for k, c in enumerate(d["candidates"]):
                assert venv.viewpoint_ids[obs.cand_viewpoint[s, k]] == c.viewpoint
                assert obs.cand_view_index[s, k] == c.view_index
                assert (
                    obs.cand_rel_heading[s, k],
                    obs.cand_rel_elevation[s, k],
                    obs.cand_distance[s, k],
                ) == (c.rel_heading, c.rel_elevation, c.distance)
            assert (obs.cand_viewpoint[s, n:] == -1).all()
        acts = _random(obs, rng, space == "egocentric")
        acts[acts == 0] = TURN_RIGHT if space == "egocentric" else 1  # never STOP here
        obs, *_ = venv.step(acts)


def test_autoreset_idle_slots_and_final_observation(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=3)
    obs, info = venv.reset(options={"episodes": [0, 1, 2, 3]})
    assert info["episode"].tolist() == [0, 1, 2] and obs.active.all()
    obs, rewards, terminated, truncated, info = venv.step(np.array([0, 1, 1], np.int32))
    assert terminated.tolist() == [True, False, False] and not truncated.any()
    assert rewards.tolist() == [0.0, 0.0, 0.0]
    assert info["episode"].tolist() == [3, 1, 2]  # slot 0 took the next episode at once
    assert obs.step.tolist() == [0, 1, 1] and obs.instruction[0] == "go to F"
    obs, _, terminated, _, info = venv.step(np.array([0, 0, 0], np.int32))
    assert terminated.all() and info["episode"].tolist() == [-1, -1, -1] and not obs.active.any()
    assert (obs.num_candidates == 0).all() and obs.instruction == ("", "", "")
    final = venv.final_observation(1)
    assert final["viewpoint"] == venv.trajectory(1)[-1][0] and final["step"] == 2
    assert [r["instr_id"] for r in venv.predictions()] == ["1_0", "2_0", "2_1", "3_0"]
    assert venv.prediction(0)["trajectory"] == [["C", 0.0, 0.0]]


def test_truncation_in_batches(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=2, action_space="egocentric", max_steps=2)
    venv.reset(options={"episodes": [0, 1]})
    venv.step(np.full(2, TURN_RIGHT, np.int32))
    _, _, terminated, truncated, _ = venv.step(np.full(2, TURN_RIGHT, np.int32))
    assert truncated.all() and not terminated.any()
    assert venv.truncated_episodes().tolist() == [0, 1] and len(venv.trajectory(0)) == 3


def test_bad_actions(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=2)
    with pytest.raises(VLNEvalError, match="before reset"):
        venv.step([0, 0])
    venv.reset(options={"episodes": [0, 1]})
    with pytest.raises(InvalidActionError, match="episode 2_0: step 0: action 5 is not valid"):
        venv.step(np.array([1, 5], np.int32))
    with pytest.raises(VLNEvalError, match="integers"):
        venv.step(np.array([1.0, 0.0]))
    with pytest.raises(VLNEvalError, match="expected 2 actions"):
        venv.step([1, 1, 1])
    obs, *_ = venv.step([1, 1])  # nothing moved before: the valid step still works
    assert obs.step.tolist() == [1, 1]
    with pytest.raises(VLNEvalError, match="episode indices"):
        venv.reset(options={"episodes": [7]})
    with pytest.raises(VLNEvalError, match="num_envs"):
        VectorGraphNavEnv(episodes, graphs, num_envs=0)


@pytest.mark.parametrize(
    "actions",
    [[1, 2**32 + 1], np.array([1, 2**40]), np.array([1, -(2**32) + 1]), [1, 2**70],
     np.array([1, 2**64 - 1], np.uint64)],
)  # fmt: skip
def test_actions_outside_int32_are_refused_not_wrapped(tmp_path: Path, actions: object) -> None:
    episodes, graphs = star(tmp_path)
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=2)
    venv.reset(options={"episodes": [0, 1]})
    shown = int(np.asarray(actions, dtype=object)[1])  # 2**32 + 1 would wrap to the valid 1
    with pytest.raises(InvalidActionError) as caught:
        venv.step(actions)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"episode 2_0: step 0: action {shown} is not valid in the panoramic action space: "
        "expected 0 (STOP), 1..2 (a candidate)"
    )
    obs, *_ = venv.step([1, 1])  # nothing moved
    assert obs.step.tolist() == [1, 1]


def test_vector_privileged_channel(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    with pytest.raises(PrivilegeError):
        VectorGraphNavEnv(episodes, graphs, num_envs=2).privileged(0)
    venv = VectorGraphNavEnv(episodes, graphs, num_envs=2, privileged=True)
    venv.reset(options={"episodes": [0, 3]})
    assert venv.privileged(0).goals() == ("G",)
    while True:
        acts = venv.teacher_actions()
        obs, _, terminated, _, info = venv.step(acts)
        if not obs.active.any():
            break
    assert venv.trajectory(0)[-1][0] == "G" and venv.trajectory(3)[-1][0] == "F"
    assert "calls" in venv.protocol()["privileged"]


def test_registry_versions_and_did_you_mean() -> None:
    assert {"graph-egocentric-v1", "graph-panoramic-v1"} <= set(ENVS.ids())
    assert ENVS.spec("graph-panoramic").id == "graph-panoramic-v1"
    with pytest.raises(UnknownNameError, match="did you mean 'graph-panoramic'"):
        ENVS.spec("graph-panoramc-v1")
    with pytest.raises(VLNEvalError, match="no version v3; known: graph-panoramic-v1"):
        ENVS.spec("graph-panoramic-v3")
    reg: Registry[dict] = Registry("thing", versioned=True)
    reg.register("a-v1", dict)
    with pytest.raises(VLNEvalError, match="already registered"):
        reg.register("a-v1", dict)
    with pytest.raises(VLNEvalError, match="versioned id"):
        reg.register("b", dict)
    assert parse_id("x-y-v12") == ("x-y", 12)


def test_make_env_single_and_vectorised() -> None:
    env = make_env("graph-egocentric-v1", max_steps=7)
    assert (
        isinstance(env, GraphNavEnv)
        and env.max_steps == 7
        and env.action_space.name == "egocentric"
    )
    venv = make_env("graph-panoramic", num_envs=4)
    assert isinstance(venv, VectorGraphNavEnv) and venv.num_envs == 4
