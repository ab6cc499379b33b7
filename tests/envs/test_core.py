"""The contract of vlneval.envs.core, kept by one environment of each family."""

from __future__ import annotations

from typing import Any

import pytest

from vlneval.envs.core import Env, EpisodeEnv, PrivilegeError
from vlneval.envs.registration import ENVS, make_env
from vlneval.errors import InvalidActionError, UnknownNameError, VLNEvalError


class Counter(EpisodeEnv):
    noun = "route"

    def __init__(self, *, privileged: bool = False, scorable: bool = True) -> None:
        self._setup(["a", "b", "c"], max_steps=2, default_steps=9, privileged=privileged,
                    scorable=scorable, source="routes.json", seed=0)  # fmt: skip


def test_bookkeeping_counts_steps_and_ends_episodes() -> None:
    env = Counter()
    assert env.episode_id is None and len(env) == 3 and env.episode_ids == ["a", "b", "c"]
    with pytest.raises(VLNEvalError, match="before reset"):
        env._check_running()
    assert env._begin(None, {"episode": 2}) == 2 and env.episode_id == "c"
    assert env._count_step(False) == (False, False, {"steps": 1})
    assert env._count_step(False) == (False, True, {"steps": 2, "stopped": False})
    with pytest.raises(VLNEvalError, match="ended episode"):
        env._check_running()
    env._begin(None, {"episode": "a"})
    assert env._count_step(True) == (True, False, {"steps": 1, "stopped": True})


def test_bookkeeping_messages() -> None:
    env = Counter()
    with pytest.raises(UnknownNameError, match="unknown route 'bb'; did you mean 'b'"):
        env._begin(None, {"episode": "bb"})
    with pytest.raises(VLNEvalError, match=r"an index in 0\.\.2, got 3"):
        env._begin(None, {"episode": 3})
    with pytest.raises(PrivilegeError, match="built without privileged=True"):
        env._check_privileged()
    with pytest.raises(PrivilegeError, match="routes.json: this split has no goals"):
        Counter(privileged=True, scorable=False)


def test_the_same_seed_draws_the_same_episodes() -> None:
    def draws(seed: int) -> list[int]:
        env = Counter()
        return [env._begin(seed if k == 0 else None, None) for k in range(8)]

    assert draws(4) == draws(4)


@pytest.mark.parametrize("env_id", ["graph-panoramic", "graph-egocentric", "continuous-r2r-ce"])
def test_registered_environments_keep_the_contract(env_id: str) -> None:
    env: Any = make_env(env_id, privileged=True)  # the demo task
    assert isinstance(env, Env)
    obs, info = env.reset(options={"episode": 0})
    assert info["steps"] == 0
    with pytest.raises(InvalidActionError):
        env.step("north")
    obs, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated, info["stopped"]) == (0.0, True, False, True)
    assert env.prediction() and env.protocol()["inference_budget"]["stop_counts_as_step"]
    assert "requested at construction (0 calls)" in env.protocol()["privileged"]


def test_every_registered_environment_has_an_importable_entry_point() -> None:
    assert all(callable(spec.load()) for spec in ENVS.latest())
