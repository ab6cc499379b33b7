"""Baseline agents, the agent protocol, the registry and check_agent."""

from __future__ import annotations

import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vlneval.agents import (
    AGENTS,
    RandomAgent,
    RandomWalkAgent,
    ShortestAgent,
    StopAgent,
    check_agent,
    get_agent,
)
from vlneval.agents.checker import AgentCheckError
from vlneval.envs import STOP, TURN_RIGHT, PrivilegeError
from vlneval.errors import UnknownNameError, VLNEvalError


def obs_with(n: int, **extra: Any) -> dict[str, Any]:
    return {"candidates": tuple(range(n)), **extra}


@pytest.mark.parametrize("turns", range(12))
def test_random_agent_turns_then_walks_five_steps(turns: int) -> None:
    agent = RandomAgent()
    agent.reset(obs_with(3), rng=np.random.default_rng(0))
    agent.steps = -turns
    actions = [agent.act(obs_with(3)) for _ in range(turns + 7)]
    assert actions == [TURN_RIGHT] * turns + [1] * 5 + [STOP] * 2


def test_random_agent_turns_right_while_nothing_is_in_view() -> None:
    agent = RandomAgent()
    agent.reset(obs_with(1), rng=np.random.default_rng(0))
    agent.steps = 0
    assert [agent.act(obs_with(1)) for _ in range(3)] == [TURN_RIGHT] * 3
    assert agent.act(obs_with(2)) == 1


def test_random_agent_takes_at_most_30_actions() -> None:
    agent = RandomAgent()
    agent.reset(obs_with(1), rng=np.random.default_rng(0))
    actions = [agent.act(obs_with(1)) for _ in range(40)]
    assert actions[:30] == [TURN_RIGHT] * 30 and set(actions[30:]) == {STOP}


def test_random_agent_direction_is_uniform_over_twelve_turns() -> None:
    counts = Counter()
    for seed in range(2400):
        agent = RandomAgent()
        agent.reset(obs_with(2), rng=np.random.default_rng(seed))
        counts[-agent.steps] += 1
    assert sorted(counts) == list(range(12))
    assert min(counts.values()) > 140  # 200 expected each


def test_random_walk_never_draws_the_last_candidate() -> None:
    first = Counter()
    for seed in range(3000):
        agent = RandomWalkAgent()
        agent.reset(obs_with(4), rng=np.random.default_rng(seed))
        first[agent.act(obs_with(4))] += 1
    assert sorted(first) == [0, 1, 2]  # index 3 (the last) never; 0 (STOP) a third of the time
    assert min(first.values()) > 900


@pytest.mark.parametrize("seed", range(6))
def test_random_walk_goes_straight_for_nine_actions(seed: int) -> None:
    agent = RandomWalkAgent()
    agent.reset(obs_with(3), rng=np.random.default_rng(seed))
    actions = [agent.act(obs_with(3)) for _ in range(11)]
    assert actions in ([STOP] * 11, [1] * 9 + [STOP] * 2)


def test_random_walk_picks_a_visible_object() -> None:
    agent = RandomWalkAgent()
    agent.reset(obs_with(2), rng=np.random.default_rng(1))
    assert agent.finish(obs_with(2)) is None  # the task gives no objects: no field
    assert agent.finish(obs_with(2, objects=())) == {"predObjId": None}
    picked = {
        agent.finish(obs_with(2, objects=({"id": "7"}, {"id": "9"})))["predObjId"]
        for _ in range(30)
    }
    assert picked == {"7", "9"}
    assert agent.finish(obs_with(2, objects=["3"])) == {"predObjId": "3"}


def test_stop_and_shortest() -> None:
    assert StopAgent().act(obs_with(5)) == STOP
    with pytest.raises(PrivilegeError):
        ShortestAgent().reset(obs_with(2), rng=np.random.default_rng(0))
    assert ShortestAgent.privileged and not getattr(StopAgent, "privileged", False)


def test_registry_ids_and_did_you_mean() -> None:
    assert {"random-v1", "random-walk-v1", "shortest-v1", "stop-v1"} <= set(AGENTS.ids())
    assert get_agent("random").action_spaces == ("egocentric",)
    assert get_agent("random-walk-v1").action_spaces == ("panoramic",)
    with pytest.raises(UnknownNameError, match="did you mean 'shortest'"):
        get_agent("shortes")
    with pytest.raises(VLNEvalError, match="no version v2"):
        get_agent("stop-v2")
    with pytest.raises(VLNEvalError, match="acts in the egocentric action space, not panoramic"):
        get_agent("random").space("panoramic")


def _graph_agent(agent_id: str) -> bool:
    spaces = getattr(AGENTS.spec(agent_id).load(), "action_spaces", ("panoramic",))
    return set(spaces) <= {"panoramic", "egocentric"}


GRAPH_AGENTS = [i for i in AGENTS.ids() if _graph_agent(i)]  # continuous agents: their own checks


@pytest.mark.parametrize("agent_id", GRAPH_AGENTS)
def test_every_registered_agent_passes_check_agent(agent_id: str) -> None:
    report = check_agent(agent_id)
    assert report["agent"] == agent_id and report["episodes"] == 8


def _user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> str:
    name = f"user_agents_{abs(hash(body)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return name


def test_user_agent_by_import_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _user_module(
        tmp_path,
        monkeypatch,
        """
        class Nearest:
            action_spaces = ("panoramic",)
            protocol = {"model": "nearest candidate twice"}
            def reset(self, observation, *, rng):
                self.n = 0
            def act(self, observation):
                self.n += 1
                cands = observation["candidates"]
                if self.n > 2 or len(cands) == 1:
                    return 0
                return min(range(1, len(cands)), key=lambda k: cands[k].distance)
        """,
    )
    info = get_agent(f"{module}:Nearest")
    assert info.id == f"{module}:Nearest" and info.protocol == {"model": "nearest candidate twice"}
    assert check_agent(info)["action_spaces"] == ["panoramic"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("class A:\n    def act(self, o):\n        return 0\n", "has no reset"),
        (
            "class A:\n    action_spaces = ('flying',)\n    def reset(self, o, *, rng): pass\n"
            "    def act(self, o): return 0\n",
            "action_spaces must name",
        ),
        (
            "class A:\n    def reset(self, o, *, rng): pass\n    def act(self, o): return 99\n",
            "action 99 is not valid",
        ),
        (
            "class A:\n    def reset(self, o, *, rng): pass\n    def act(self, o): return 'left'\n",
            "act\\(\\) must return an integer action",
        ),
        (
            "import random\nclass A:\n    action_spaces = ('panoramic',)\n"
            "    def reset(self, o, *, rng): pass\n"
            "    def act(self, o): return random.randrange(len(o['candidates']))\n",
            "same seed gave different predictions",
        ),
        (
            "class A:\n    def reset(self, o, *, rng): pass\n    def act(self, o): return 0\n"
            "    def finish(self, o): return {'trajectory': []}\n",
            "may not set trajectory",
        ),
        (
            "class A:\n    def reset(self, o, *, rng): raise RuntimeError('boom')\n"
            "    def act(self, o): return 0\n",
            "crashed: RuntimeError: boom",
        ),
    ],
)
def test_check_agent_reports_protocol_breaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, message: str
) -> None:
    module = _user_module(tmp_path, monkeypatch, body)
    with pytest.raises(AgentCheckError, match=message):
        check_agent(f"{module}:A")


def test_check_agent_blames_a_failing_factory_and_refuses_a_non_callable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _user_module(
        tmp_path, monkeypatch, "def A():\n    raise RuntimeError('factory failed')\n"
    )
    with pytest.raises(AgentCheckError) as failed:
        check_agent(f"{module}:A")
    assert str(failed.value) == (
        f"agent check failed:\n  - agent {module}:A: its constructor raised RuntimeError: "
        "factory failed"
    )
    for target, kind in (("math:pi", "float"), ("os:path", "module")):
        with pytest.raises(AgentCheckError) as refused:
            check_agent(target)
        assert str(refused.value) == (
            f"agent check failed:\n  - agent {target} is a {kind}, not a class or a function "
            "returning an agent"
        )


def test_a_factory_is_called_once_per_agent_not_once_more_to_describe_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _user_module(
        tmp_path,
        monkeypatch,
        """
        made = []
        class Ok:
            action_spaces = ("egocentric",)
            def reset(self, o, *, rng): pass
            def act(self, o): return 0
        def make():
            made.append(Ok())
            return made[-1]
        """,
    )
    info = get_agent(f"{module}:make")
    made = sys.modules[module].made
    assert info.action_spaces == ("egocentric",) and len(made) == 1
    assert info.make() is made[0] and len(made) == 1  # the describing instance, not a new one
    assert info.make() is made[1] and len(made) == 2


def test_bad_import_paths() -> None:
    with pytest.raises(VLNEvalError, match="cannot import module 'no_such_pkg.agents'"):
        get_agent("no_such_pkg.agents:Agent")
    with pytest.raises(VLNEvalError, match="has no attribute 'Nope'"):
        get_agent("vlneval.agents.baselines:Nope")
