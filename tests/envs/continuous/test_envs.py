"""Continuous environments: each action space by hand, the information boundary, agents."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from vlneval.agents.continuous import make_agent, run_continuous
from vlneval.continuous.oracle import GridOracle
from vlneval.continuous.world import World
from vlneval.envs.continuous.env import OBSERVATION_FIELDS, ContinuousNavEnv
from vlneval.envs.continuous.spaces import (
    FORWARD,
    LOOK_UP,
    STOP,
    TURN_LEFT,
    TURN_RIGHT,
)
from vlneval.errors import InvalidActionError, VLNEvalError
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.vlnce.format import episodes_from_arrays, parse_ce_predictions
from vlneval.tasks.vlnce.score import DistanceSource, score_continuous

SPACES = ("r2r-ce", "rxr-ce", "velocity", "waypoint")


def l_world() -> World:
    """An L-shaped corridor 0.6 m wide: along +y from (0, 0) to (0, 6), then +x to (6, 6)."""
    free = np.zeros((70, 70), bool)
    free[:66, :6] = True  # x 0..0.5, y 0..6.5
    free[60:66, :66] = True  # y 6..6.5, x 0..6.5
    return World.from_array(free, resolution=0.1, name="L")


def episodes(n: int = 2):  # type: ignore[no-untyped-def]
    starts = [[0.2, 0.2, 0.0]] * n
    goals = [[6.2, 6.2, 0.0]] * n
    refs = [[[0.2, 0.2, 0], [0.2, 6.2, 0], [6.2, 6.2, 0]]] * n
    dense = [
        np.array(
            [[0.2, 0.2 + 0.25 * k, 0] for k in range(25)]
            + [[0.2 + 0.25 * k, 6.2, 0] for k in range(1, 25)]
        )
    ] * n
    return episodes_from_arrays(
        [f"e{k}" for k in range(n)],
        ["L"] * n,
        starts,
        [0.0] * n,
        goals,
        refs,
        instructions=["go up, then right"] * n,
        dense=dense,
        task="toy",
        split="val",
    )


def test_observations_hold_no_ground_truth() -> None:
    env = ContinuousNavEnv(episodes(), l_world())
    obs, info = env.reset(options={"episode": 0})
    assert tuple(obs) == OBSERVATION_FIELDS
    assert obs["position"].tolist() == pytest.approx([0.2, 0.2, 0.0])
    assert "goal" not in info and "distance" not in " ".join(info)
    with pytest.raises(VLNEvalError, match="without privileged=True"):
        env.privileged()
    assert env.protocol()["privileged"] == "none"


def test_r2r_ce_steps_turns_time_and_length() -> None:
    env = ContinuousNavEnv(episodes(), l_world(), action_space="r2r-ce")
    env.reset(options={"episode": "e0"})
    obs, _, term, trunc, info = env.step(FORWARD)
    assert obs["position"][:2].tolist() == pytest.approx([0.2, 0.45])
    obs, *_ = env.step(TURN_RIGHT)
    assert obs["heading"] == pytest.approx(math.radians(15))
    obs, *_ = env.step(TURN_LEFT)
    assert info["path_length"] == pytest.approx(0.25)
    assert obs["time"] == pytest.approx(0.5 + 0.5 + 0.5)  # 0.25 m at 0.5 m/s, 15° at 30°/s twice
    with pytest.raises(InvalidActionError, match="expected 0 \\(STOP\\), 1 \\(FORWARD\\)"):
        env.step(LOOK_UP)  # R2R-CE has no camera tilt
    obs, _, term, trunc, info = env.step(STOP)
    assert term and not trunc and info["stopped"]
    steps = env.trajectory()
    # Reset, then one pose per action but STOP (the last pose carries the STOP flag).
    assert [s["stop"] for s in steps] == [False, False, False, True]
    assert steps[1]["position"] == steps[2]["position"]  # turning in place repeats the position
    with pytest.raises(VLNEvalError, match="ended episode"):
        env.step(FORWARD)


def test_sliding_versus_blocking() -> None:
    # Facing 45° into the corridor's right wall at x = 0.55: R2R-CE slides up, RxR-CE stops.
    for space, moves in (("r2r-ce", True), ("rxr-ce", False)):
        env = ContinuousNavEnv(episodes(), l_world(), action_space=space)
        env.reset(options={"episode": 0})
        start = env.record.poses[0]
        env._pose = start.__class__(0.5, 1.0, 0, 0.0, math.radians(45))  # test-only placement
        obs, *_ = env.step(FORWARD)
        assert obs["collided"]
        moved = obs["position"][1] - 1.0
        assert (moved > 0.1) if moves else moved == pytest.approx(0.0)


def test_rxr_ce_camera_is_clamped() -> None:
    env = ContinuousNavEnv(episodes(), l_world(), action_space="rxr-ce")
    env.reset(options={"episode": 0})
    for _ in range(3):
        obs, *_ = env.step(LOOK_UP)
    assert obs["elevation"] == pytest.approx(math.radians(30))


def test_velocity_limits_and_truncation() -> None:
    env = ContinuousNavEnv(episodes(), l_world(), action_space="velocity", max_steps=4)
    env.reset(options={"episode": 0})
    obs, *_ = env.step((2.0, 0.0))  # clipped to 0.5 m/s for 0.25 s
    assert obs["position"][1] == pytest.approx(0.2 + 0.125)
    assert env.record.clipped == 1
    for _ in range(2):
        env.step((0.5, 0.0))
    obs, _, term, trunc, info = env.step((0.0, 0.0))
    assert trunc and not term and info["stopped"] is False
    assert info["time"] == pytest.approx(1.0) and info["path_length"] == pytest.approx(0.375)
    with pytest.raises(InvalidActionError, match="finite"):
        env.reset(options={"episode": 0})
        env.step((math.nan, 0.0))


def test_waypoint_reached_and_blocked() -> None:
    env = ContinuousNavEnv(episodes(), l_world(), action_space="waypoint")
    env.reset(options={"episode": 0})
    obs, _, _, _, info = env.step((2.0, 0.0))
    assert info["status"] == "reached"
    assert obs["position"][:2] == pytest.approx([0.2, 2.2], abs=0.16)
    obs, _, _, _, info = env.step((2.0, math.pi / 2))  # 2 m to the right: inside the wall
    assert info["status"] == "blocked" and obs["collided"]
    assert env.record.statuses == {
        "reached": 1,
        "blocked (target off the free space or unreachable)": 1,
    }
    with pytest.raises(InvalidActionError, match="waypoint distance"):
        env.step((5.0, 0.0))


@pytest.mark.parametrize("space", SPACES)
def test_baseline_agents(space: str, tmp_path: Path) -> None:
    eps = episodes()
    world = l_world()
    source = DistanceSource("grid", "toy", lambda i: GridOracle(world))
    results = {}
    for name in ("stop", "random", "shortest"):
        env = ContinuousNavEnv(eps, world, action_space=space, privileged=name == "shortest")
        run = run_continuous(env, make_agent(name, env.action_space), seed=1)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(run.predictions))
        ev = score_continuous(
            eps,
            parse_ce_predictions(path, eps),
            get_profile("vlnce-exact"),
            source,
            show_progress=False,
        )
        results[name] = (ev.metrics, run)
    assert results["stop"][0]["SR"] == 0.0 and results["stop"][0]["TL"] == 0.0
    assert results["shortest"][0]["SR"] == 1.0
    shortest = results["shortest"][1].episodes[0]
    # At least the geodesic (less the teacher's 0.5 m stopping distance), at most 15 % more.
    geodesic = world.distance(eps.starts[0], eps.goals[0])
    assert geodesic - 0.6 < shortest["path_length_integrated"] < 1.15 * geodesic
    assert shortest["time_s"] > 0
    assert "privileged" in results["shortest"][1].env_card["privileged"]


@pytest.mark.parametrize("space", SPACES)
def test_same_seed_same_file(space: str) -> None:
    def once() -> dict:  # type: ignore[type-arg]
        env = ContinuousNavEnv(episodes(), l_world(), action_space=space, max_steps=40)
        return run_continuous(env, make_agent("random", env.action_space), seed=7).predictions

    assert once() == once()


@pytest.mark.parametrize("name", ["r2r-ce", "rxr-ce", "velocity", "waypoint"])
def test_every_continuous_space_samples_actions_it_contains(name: str) -> None:
    """A space-agnostic agent can call ``sample(rng)`` on any continuous space."""
    from vlneval.envs.continuous.spaces import continuous_space

    space = continuous_space(name)
    rng = np.random.default_rng(0)
    actions = [space.sample(rng) for _ in range(50)]
    if name.endswith("-ce"):
        assert all(isinstance(a, int) and space.contains(a) for a in actions)
    else:
        assert all(len(a) == 2 and all(isinstance(x, float) for x in a) for a in actions)
