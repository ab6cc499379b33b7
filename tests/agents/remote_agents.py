"""Agents for the remote-agent tests: one that records what it sees, one slow, two that fail."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from vlneval.agents.baselines import RandomAgent
from vlneval.agents.continuous import ContinuousStopAgent

SEEN: list[dict[str, Any]] = []


class Recording(RandomAgent):
    """The random agent, appending every observation it is given to :data:`SEEN`."""

    def reset(self, observation: Mapping[str, Any], *, rng: np.random.Generator) -> None:
        SEEN.append(dict(observation))
        super().reset(observation, rng=rng)

    def act(self, observation: Mapping[str, Any]) -> int:
        SEEN.append(dict(observation))
        return super().act(observation)

    def finish(self, observation: Mapping[str, Any]) -> None:
        SEEN.append(dict(observation))


class Slow(RandomAgent):
    """Takes a second to act."""

    def act(self, observation: Mapping[str, Any]) -> int:
        time.sleep(1.0)
        return super().act(observation)


class Broken(RandomAgent):
    """Raises on its first action."""

    def act(self, observation: Mapping[str, Any]) -> int:
        raise ValueError("boom at step 0")


class BrokenContinuous(ContinuousStopAgent):
    """A continuous agent that raises on its first action."""

    def act(self, observation: Mapping[str, Any]) -> int:
        raise ValueError("boom at step 0")
