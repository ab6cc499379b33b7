"""Agents for the shard tests: a slow random agent (to kill a run midway) and one that reads a
checkpoint (the constructor convention ``checkpoint=PATH``)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from vlneval.agents.baselines import RandomAgent


class SlowRandom(RandomAgent):
    """The random agent, 0.15 s per episode."""

    def reset(self, observation: Mapping[str, Any], *, rng: np.random.Generator) -> None:
        time.sleep(0.15)
        super().reset(observation, rng=rng)


class CheckpointRandom(RandomAgent):
    """The random agent whose number of forward moves is the integer in its checkpoint file."""

    def __init__(self, checkpoint: str) -> None:
        with open(checkpoint) as fh:
            self.forward_moves = int(fh.read().strip())
