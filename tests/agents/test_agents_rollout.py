"""Running agents: seeds, batch-size independence, limits, protocol fields, finish() fields."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.envs.graph.helpers import star
from vlneval.agents import get_agent, run_agent
from vlneval.agents.base import describe_agent
from vlneval.agents.rollout import episode_rng
from vlneval.envs import PrivilegeError
from vlneval.envs.loading import load_episodes
from vlneval.errors import VLNEvalError


@pytest.fixture(scope="module")
def demo() -> tuple[Any, Any]:
    return load_episodes("demo")


@pytest.mark.parametrize("agent", ["random", "random-walk"])
def test_predictions_depend_on_the_seed_only(demo: tuple[Any, Any], agent: str) -> None:
    info = get_agent(agent)
    runs = [run_agent(info, *demo, seed=3, batch_size=b).records for b in (1, 5, 64)]
    assert runs[0] == runs[1] == runs[2]
    assert run_agent(info, *demo, seed=4).records != runs[0]
    limited = run_agent(info, *demo, seed=3, limit=7)
    assert limited.records == runs[0][:7] and limited.partial and limited.n_expected == 36


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_a_seed_numpy_cannot_take_is_one_clear_error(demo: tuple[Any, Any], seed: Any) -> None:
    with pytest.raises(VLNEvalError, match=f"seed must be a non-negative integer, got {seed!r}"):
        run_agent(get_agent("random"), *demo, seed=seed, limit=1)


def test_records_follow_the_split_order_and_r2r_format(demo: tuple[Any, Any]) -> None:
    episodes, graphs = demo
    result = run_agent(get_agent("random"), episodes, graphs, seed=0, batch_size=4)
    assert [r["instr_id"] for r in result.records] == episodes.ids
    for rec, path in zip(result.records, episodes.paths, strict=True):
        assert set(rec) == {"instr_id", "trajectory"}
        assert rec["trajectory"][0][0] == path[0]
        assert all(len(step) == 3 and isinstance(step[1], float) for step in rec["trajectory"])
    assert result.steps > len(episodes) and not result.partial


def test_protocol_fields_of_a_run(demo: tuple[Any, Any]) -> None:
    result = run_agent(get_agent("random"), *demo, seed=2, max_steps=40)
    card = result.protocol
    assert card["action_space"]["name"] == "egocentric" and card["privileged"] == "none"
    assert card["inference_budget"]["max_steps"] == 40 and card["seeds"] == [2]
    assert card["n_runs"] == 1 and card["executed_path"].startswith("full")
    assert card["agent"] == {
        "id": "random-v1",
        "entry_point": "vlneval.agents.baselines:RandomAgent",
        "privileged": False,
    }
    assert card["model"].startswith("random: R2R paper random agent")
    shortest = run_agent(get_agent("shortest"), *demo).protocol
    assert (
        shortest["privileged"].startswith("goals, reference path")
        and shortest["agent"]["privileged"]
    )


def test_an_agent_cannot_declare_over_what_the_run_measured(demo: tuple[Any, Any]) -> None:
    # A teacher-using agent that declares itself unprivileged, another seed and another
    # agent: the card keeps what the run measured; the claims are kept apart, as claims.
    claims = {
        "privileged": "none",
        "seeds": [99],
        "agent": {"id": "random-v1", "privileged": False},
        "model": "my planner",
    }
    liar = dataclasses.replace(get_agent("shortest"), protocol=claims)
    card = run_agent(liar, *demo, seed=0).protocol
    assert card["privileged"].startswith("goals, reference path") and card["seeds"] == [0]
    assert card["agent"]["id"] == "shortest-v1" and card["agent"]["privileged"] is True
    assert card["model"] == "my planner"
    assert card["declared_differently"] == {
        "privileged": "none",
        "seeds": [99],
        "agent": {"id": "random-v1", "privileged": False},
    }
    honest = run_agent(get_agent("shortest"), *demo, seed=0).protocol
    assert "declared_differently" not in honest


def test_shortest_reaches_every_goal_in_both_spaces(demo: tuple[Any, Any]) -> None:
    episodes, graphs = demo
    for space in ("panoramic", "egocentric"):
        result = run_agent(
            get_agent("shortest"), episodes, graphs, action_space=space, batch_size=3
        )
        ends = [r["trajectory"][-1][0] for r in result.records]
        assert ends == [g[-1] for g in episodes.goals] and result.truncated == 0


def test_step_limit_is_counted(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    result = run_agent(get_agent("random"), episodes, graphs, max_steps=2)
    assert result.truncated == len(episodes)
    assert all(len(r["trajectory"]) == 3 for r in result.records)


class Finisher:
    """Stops at once and reports the number of candidates it saw at the end."""

    action_spaces = ("panoramic",)

    def reset(self, observation: dict[str, Any], *, rng: np.random.Generator) -> None:
        self.first = observation["viewpoint"]

    def act(self, observation: dict[str, Any]) -> int:
        return 1 if observation["step"] == 0 else 0

    def finish(self, observation: dict[str, Any]) -> dict[str, Any]:
        return {
            "seen": len(observation["candidates"]),
            "moved": observation["viewpoint"] != self.first,
        }


def test_finish_fields_join_the_records(tmp_path: Path) -> None:
    episodes, graphs = star(tmp_path)
    result = run_agent(describe_agent("finisher", Finisher), episodes, graphs, batch_size=2)
    assert [r["moved"] for r in result.records] == [True] * 4
    assert result.records[0]["seen"] == 3  # at G: STOP, C, A


def test_run_errors(demo: tuple[Any, Any], tmp_path: Path) -> None:
    with pytest.raises(VLNEvalError, match="limit"):
        run_agent(get_agent("stop"), *demo, limit=0)
    with pytest.raises(VLNEvalError, match="batch size"):
        run_agent(get_agent("stop"), *demo, batch_size=0)
    with pytest.raises(VLNEvalError, match="not panoramic"):
        run_agent(get_agent("random"), *demo, action_space="panoramic")
    from tests.envs.graph.helpers import star_root
    from vlneval.tasks.r2r.format import load_r2r

    root = star_root(
        tmp_path,
        [
            {
                "path_id": 5,
                "scan": "star",
                "path": ["C"],
                "heading": 0.0,
                "instructions": ["hidden goal"],
            }
        ],
    )
    test_split = load_r2r(root / "r2r" / "R2R_val.json")
    with pytest.raises(PrivilegeError, match="no goals"):
        run_agent(get_agent("shortest"), test_split, root / "matterport3d" / "connectivity")
    assert run_agent(
        get_agent("random-walk"), test_split, root / "matterport3d" / "connectivity"
    ).records


def test_episode_generators_are_independent() -> None:
    a = [int(episode_rng(0, i).integers(1 << 30)) for i in range(50)]
    assert len(set(a)) == 50 and a == [int(episode_rng(0, i).integers(1 << 30)) for i in range(50)]


def test_the_first_episode_s_set_up_is_not_in_the_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """36 s to build twin worlds before episode 1 ends, then 10 episodes in 30 s: the rate is
    0.3 episodes/s (not 11 in 66 s), with no estimate until a second episode ends."""
    import io

    from vlneval.agents import progress

    clock = iter([0.0, 36.0, 66.0, 70.0, 70.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    log = io.StringIO()
    with progress.episode_progress(12, enabled=True, label="running r2r-twin", stream=log) as adv:
        adv(1)  # 36 s: the set-up and the first episode (a line: 30 s passed)
        adv(10)  # 66 s: ten more (a line)
        adv(1)  # 70 s: the last one
    assert log.getvalue().splitlines() == [
        "running r2r-twin: 0/12 episodes (0%), 0.0 episodes/s, 0:00 elapsed, ? left",
        "running r2r-twin: 1/12 episodes (8%), 0.0 episodes/s, 0:36 elapsed, ? left",
        "running r2r-twin: 11/12 episodes (91%), 0.3 episodes/s, 1:06 elapsed, 0:03 left",
        "running r2r-twin: 12/12 episodes (100%), 0.3 episodes/s, 1:10 elapsed, 0:00 left",
    ]
