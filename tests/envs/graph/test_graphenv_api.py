"""The single graph environment: Gymnasium's contract, recording, limits and bad input."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.envs.graph.helpers import star
from vlneval.envs import (
    LOOK_DOWN,
    LOOK_UP,
    STOP,
    TURN_LEFT,
    TURN_RIGHT,
    GraphNavEnv,
    InvalidActionError,
    PrivilegeError,
)
from vlneval.envs.graph.env import DEFAULT_MAX_STEPS
from vlneval.errors import InvalidInputError, UnknownNameError, VLNEvalError
from vlneval.graph.store import GraphStore
from vlneval.tasks.common.episodes import EpisodeTable

STEP = math.pi / 6


@pytest.fixture
def data(tmp_path: Path) -> tuple[EpisodeTable, GraphStore]:
    return star(tmp_path)


def test_reset_returns_observation_and_info(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data)
    obs, info = env.reset(options={"episode": "1_0"})
    assert info == {"steps": 0}
    assert obs["instruction"] == "go to G" and obs["scan"] == "star" and obs["viewpoint"] == "C"
    assert (obs["heading"], obs["elevation"], obs["view_index"], obs["step"]) == (0.0, 0.0, 12, 0)
    assert [c.viewpoint for c in obs["candidates"]] == ["C", "G", "A", "E", "B", "D", "F"]


def test_start_heading_is_snapped_as_the_simulator_snaps(
    data: tuple[EpisodeTable, GraphStore],
) -> None:
    env = GraphNavEnv(*data)
    obs, _ = env.reset(options={"episode": "3_0"})  # 0.3 rad = 17.2° -> 30°
    assert obs["heading"] == STEP and obs["view_index"] == 13
    obs, _ = env.reset(options={"episode": 1})  # π -> 180°
    assert obs["heading"] == 6 * STEP


def test_panoramic_move_turns_to_the_candidates_view(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data, action_space="panoramic")
    env.reset(options={"episode": "1_0"})
    obs, reward, terminated, truncated, info = env.step(1)  # G, seen looking up at column 0
    assert (obs["viewpoint"], obs["heading"], obs["elevation"], obs["view_index"]) == (
        "G",
        0.0,
        STEP,
        24,
    )
    assert (reward, terminated, truncated, info) == (0.0, False, False, {"steps": 1})
    obs, _, terminated, _, info = env.step(STOP)
    assert terminated and info == {"steps": 2, "stopped": True} and obs["step"] == 2
    assert env.trajectory() == [("C", 0.0, 0.0), ("G", 0.0, STEP)]
    assert env.prediction() == {
        "instr_id": "1_0",
        "trajectory": [["C", 0.0, 0.0], ["G", 0.0, STEP]],
    }


def test_egocentric_turns_looks_and_moves(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data, action_space="egocentric")
    obs, _ = env.reset(options={"episode": "1_0"})
    assert [c.viewpoint for c in obs["candidates"]] == ["C", "A", "G", "E", "B"]
    obs, *_ = env.step(TURN_RIGHT)
    assert obs["heading"] == STEP and [c.viewpoint for c in obs["candidates"]] == [
        "C",
        "B",
        "D",
        "A",
        "G",
    ]
    obs, *_ = env.step(TURN_LEFT)
    obs, *_ = env.step(TURN_LEFT)
    assert obs["heading"] == 11 * STEP
    env.step(TURN_RIGHT)
    obs, *_ = env.step(LOOK_UP)
    obs, *_ = env.step(LOOK_UP)  # stays at +30°
    assert obs["elevation"] == STEP and obs["view_index"] == 24
    assert [c.viewpoint for c in obs["candidates"]] == ["C", "G", "A", "E", "B"]
    obs, *_ = env.step(1)  # G; the camera keeps its heading and elevation
    assert (obs["viewpoint"], obs["heading"], obs["elevation"]) == ("G", 0.0, STEP)
    for _ in range(3):
        obs, *_ = env.step(LOOK_DOWN)
    assert obs["elevation"] == -STEP
    assert len(env.trajectory()) == 11  # the start + 10 actions, turns included


def test_step_limit_truncates(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data, action_space="egocentric", max_steps=3)
    env.reset(options={"episode": 0})
    assert env.step(TURN_RIGHT)[3] is False
    assert env.step(TURN_RIGHT)[3] is False
    obs, _, terminated, truncated, info = env.step(TURN_RIGHT)
    assert (terminated, truncated, info) == (False, True, {"steps": 3, "stopped": False})
    with pytest.raises(VLNEvalError, match="call reset"):
        env.step(STOP)
    assert len(env.trajectory()) == 4


def test_default_step_limits(data: tuple[EpisodeTable, GraphStore]) -> None:
    assert GraphNavEnv(*data).max_steps == DEFAULT_MAX_STEPS["panoramic"] == 35
    assert GraphNavEnv(*data, action_space="egocentric").max_steps == 100


@pytest.mark.parametrize("bad", [7, -1, 1.0, True, "1", None])
def test_invalid_panoramic_actions_name_the_episode_and_step(
    data: tuple[EpisodeTable, GraphStore], bad: object
) -> None:
    env = GraphNavEnv(*data)
    env.reset(options={"episode": "2_1"})
    with pytest.raises(InvalidActionError) as err:
        env.step(bad)  # type: ignore[arg-type]
    msg = str(err.value)
    assert "episode 2_1: step 0" in msg and "panoramic" in msg and "expected 0 (STOP), 1..2" in msg
    # the environment was left untouched: from F facing 180°, E (161° off) comes before C (180°)
    assert env.step(1)[0]["viewpoint"] == "E"


def test_invalid_egocentric_action(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data, action_space="egocentric")
    env.reset(options={"episode": "1_0"})
    with pytest.raises(InvalidActionError, match=r"-1\.\.-4 \(turn left"):
        env.step(-5)
    env.step(np.int64(1))  # numpy integers are accepted


def test_step_before_reset_and_bad_episode_options(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data)
    with pytest.raises(VLNEvalError, match="reset"):
        env.step(0)
    with pytest.raises(VLNEvalError, match="0..3"):
        env.reset(options={"episode": 9})
    with pytest.raises(UnknownNameError, match="did you mean '1_0'"):
        env.reset(options={"episode": "1_9"})


def test_bad_configuration(data: tuple[EpisodeTable, GraphStore]) -> None:
    with pytest.raises(UnknownNameError, match="action space"):
        GraphNavEnv(*data, action_space="panoramc")
    with pytest.raises(VLNEvalError, match="max_steps"):
        GraphNavEnv(*data, max_steps=0)


def test_episodes_off_the_graph_are_all_reported(tmp_path: Path) -> None:
    from tests.envs.graph.helpers import star_root
    from vlneval.tasks.r2r.format import load_r2r

    root = star_root(
        tmp_path,
        [
            {
                "path_id": 1,
                "scan": "star",
                "path": ["Q", "C"],
                "heading": 0.0,
                "instructions": ["x"],
            },
            {
                "path_id": 2,
                "scan": "nowhere",
                "path": ["C", "A"],
                "heading": 0.0,
                "instructions": ["y"],
            },
        ],
    )
    episodes = load_r2r(root / "r2r" / "R2R_val.json")
    with pytest.raises(InvalidInputError) as err:
        GraphNavEnv(episodes, root / "matterport3d" / "connectivity")
    text = str(err.value)
    assert "1_0: path[0]: start: viewpoint Q is not in scan star" in text
    assert "2_0: scan: scan nowhere has no connectivity file" in text


def test_random_episode_choice_is_seeded(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data)
    picks = []
    for _ in range(2):
        env.reset(seed=5)
        picks.append([env.episode_id] + [env.reset()[0] and env.episode_id for _ in range(6)])
    assert picks[0] == picks[1]


def test_privileged_channel_must_be_requested(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data)
    with pytest.raises(PrivilegeError, match="privileged=True"):
        env.privileged()
    assert env.protocol()["privileged"] == "none"


def test_privileged_channel(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data, privileged=True)
    teacher = env.privileged()
    env.reset(options={"episode": "1_0"})  # C -> A -> G; the straight C-G edge is shorter
    assert teacher.goals() == ("G",) and teacher.reference_path() == ("C", "A", "G")
    assert teacher.distance_to_goal() == pytest.approx(math.sqrt(5.0))
    assert teacher.next_viewpoint() == "G" and teacher.action() == 1
    env.step(1)
    assert teacher.action() == STOP and teacher.next_viewpoint() is None
    assert "requested at construction (7 calls)" in env.protocol()["privileged"]


def test_egocentric_teacher_turns_then_moves(data: tuple[EpisodeTable, GraphStore]) -> None:
    env = GraphNavEnv(*data, action_space="egocentric", privileged=True)
    teacher = env.privileged()
    env.reset(options={"episode": "2_0"})  # F facing 180°, goal B via C
    # C lies due north of F, behind the agent: the teacher turns until C is within 30° of the
    # view centre, moves, then turns towards B and moves again
    actions = []
    while True:
        a = teacher.action()
        actions.append(a)
        _, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            break
    assert env.trajectory()[-1][0] == "B" and actions[-1] == STOP
    assert actions.count(1) == 2 and set(actions) <= {STOP, 1, TURN_LEFT, TURN_RIGHT}


def test_no_privileged_runs_on_splits_without_goals(tmp_path: Path) -> None:
    from tests.envs.graph.helpers import star_root
    from vlneval.tasks.r2r.format import load_r2r

    root = star_root(
        tmp_path,
        [
            {
                "path_id": 9,
                "scan": "star",
                "path": ["C"],
                "heading": 0.0,
                "instructions": ["a test episode"],
            }
        ],
    )
    episodes = load_r2r(root / "r2r" / "R2R_val.json")
    assert not episodes.scorable
    graphs = root / "matterport3d" / "connectivity"
    GraphNavEnv(episodes, graphs)  # agents can run on a test split
    with pytest.raises(PrivilegeError, match="no goals"):
        GraphNavEnv(episodes, graphs, privileged=True)


def test_protocol_fields(data: tuple[EpisodeTable, GraphStore]) -> None:
    card = GraphNavEnv(*data, action_space="egocentric", max_steps=50).protocol()
    assert card["action_space"]["name"] == "egocentric"
    assert card["action_space"]["turn_angle_deg"] == 30
    assert card["inference_budget"]["max_steps"] == 50
    assert card["executed_path"].startswith("full")
    assert card["observations"][:3] == [
        "instruction text",
        "pose: scan, viewpoint id, heading, elevation, view index",
        "candidates: viewpoint id, relative heading, relative elevation, distance, view index",
    ]
