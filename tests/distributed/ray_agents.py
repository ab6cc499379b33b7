"""Agents for the Ray tests: random agents whose process dies on a marked episode."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.agents.baselines import RandomAgent


class DiesOnce(RandomAgent):
    """The random agent; the first process to reach its ``after``-th episode while ``marker``
    does not exist creates it and exits at once (``os._exit``: no cleanup, as a crash)."""

    def __init__(self, marker: str, after: int = 3) -> None:
        self.marker, self.after, self.episodes = Path(marker), after, 0

    def reset(self, observation: Mapping[str, Any], *, rng: np.random.Generator) -> None:
        self.episodes += 1
        if self.episodes == self.after and not self.marker.exists():
            self.marker.write_text(str(os.getpid()))
            os._exit(1)
        super().reset(observation, rng=rng)


class AlwaysDies(RandomAgent):
    """The random agent whose process exits on its first episode, every time."""

    def reset(self, observation: Mapping[str, Any], *, rng: np.random.Generator) -> None:
        os._exit(1)


class WithDevice(RandomAgent):
    """The random agent that keeps the ``device`` it was built with."""

    def __init__(self, device: str = "cpu") -> None:
        self.device = device


class BadAction(RandomAgent):
    """Answers an action outside the egocentric space on the fifth episode it runs."""

    def __init__(self) -> None:
        self.episodes = 0

    def reset(self, observation: Mapping[str, Any], *, rng: np.random.Generator) -> None:
        self.episodes += 1
        super().reset(observation, rng=rng)

    def act(self, observation: Mapping[str, Any]) -> int:
        return 99 if self.episodes == 5 else super().act(observation)
