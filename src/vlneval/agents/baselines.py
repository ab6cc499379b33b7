"""Baseline agents (spec/protocol.md): they check the whole pipeline and anchor results.

- :class:`StopAgent` (``stop``): never moves.
- :class:`RandomAgent` (``random``): the R2R paper's random agent (Matterport3DSimulator
  ``tasks/R2R/agent.py`` ``RandomAgent``), in the simulator's egocentric space.
- :class:`RandomWalkAgent` (``random-walk``): the REVERIE baseline (``tasks/REVERIE/follower.py``
  ``RandomAgent``) on the panoramic candidate list, its off-by-one included.
- :class:`ShortestAgent` (``shortest``): follows the teacher to the goal; privileged.

Randomness comes only from the per-episode ``rng`` the runner passes to ``reset``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from vlneval.envs.core import PrivilegeError
from vlneval.envs.graph.privileged import Teacher
from vlneval.envs.spaces import STOP, TURN_RIGHT

__all__ = ["StopAgent", "RandomAgent", "RandomWalkAgent", "ShortestAgent"]

_RULE_BASED = {"checkpoint_selection": "not applicable: a rule-based baseline, no checkpoint"}


class StopAgent:
    """Stops at once: the trajectory is the start viewpoint alone.

    Example:
        >>> StopAgent().act({"candidates": ["here", "there"]})
        0
    """

    action_spaces: tuple[str, ...] = ("panoramic", "egocentric")
    protocol: Mapping[str, Any] = {**_RULE_BASED, "model": "stop: never moves"}

    def reset(
        self, observation: Mapping[str, Any], *, rng: np.random.Generator, teacher: Any = None
    ) -> None:
        """Nothing to prepare."""

    def act(self, observation: Mapping[str, Any]) -> int:
        """STOP."""
        return STOP


class RandomAgent:
    """The R2R paper's random agent, with the simulator's actions.

    Turns right a random number of 30° steps (0–11, uniformly), then moves to the navigable
    viewpoint nearest the view centre (``candidates[1]``, the R2R "forward") five times, turning
    right whenever nothing is in view; it takes at most 30 actions. As in the original, the
    direction-choosing turns are drawn as ``steps ∈ {−11, ..., 0}``.

    Example (this seed turns right once; ``-2`` is TURN_RIGHT, ``1`` forward, ``0`` STOP):
        >>> agent = RandomAgent()
        >>> agent.reset({}, rng=np.random.default_rng(0))
        >>> [agent.act({"candidates": ["here", "there"]}) for _ in range(7)]
        [-2, 1, 1, 1, 1, 1, 0]
    """

    action_spaces = ("egocentric",)
    max_actions = 30
    forward_moves = 5
    protocol = {
        **_RULE_BASED,
        "model": "random: R2R paper random agent (Matterport3DSimulator tasks/R2R/agent.py)",
    }

    def reset(self, observation: Mapping[str, Any], *, rng: np.random.Generator) -> None:
        """Draws the number of right turns."""
        self.steps = int(rng.integers(-11, 1))
        self.actions = 0

    def act(self, observation: Mapping[str, Any]) -> int:
        """The next action of the original rollout loop."""
        if self.steps >= self.forward_moves or self.actions >= self.max_actions:
            return STOP
        self.actions += 1
        if self.steps < 0:
            self.steps += 1
            return TURN_RIGHT
        if len(observation["candidates"]) > 1:
            self.steps += 1
            return 1
        return TURN_RIGHT


class RandomWalkAgent:
    """The REVERIE random baseline on the panoramic candidate list.

    Its first action is drawn uniformly from ``0 .. len(candidates) − 2``: 0 is STOP, which ends
    the episode at once, and the last candidate is never drawn (the original's
    ``np.random.randint(len(adj_loc_list) - 1)``, reproduced). Then it takes candidate 1 (the one
    nearest straight ahead) at every step, 9 actions at most. When the task gives objects
    (``objects``: ids, or mappings with an ``id``), it picks one of those visible at the stop at
    random as ``predObjId`` (None when none is visible).

    Example:
        >>> agent = RandomWalkAgent()
        >>> agent.reset({}, rng=np.random.default_rng(0))
        >>> agent.act({"candidates": ["here", "a", "b"]}) in (0, 1)  # never 2, the last
        True
    """

    action_spaces = ("panoramic",)
    max_actions = 9
    protocol = {
        **_RULE_BASED,
        "model": "random-walk: REVERIE baseline (YuankaiQi/REVERIE tasks/REVERIE/follower.py RandomAgent)",
    }

    def reset(self, observation: Mapping[str, Any], *, rng: np.random.Generator) -> None:
        """Keeps the episode's generator."""
        self.rng = rng
        self.actions = 0

    def act(self, observation: Mapping[str, Any]) -> int:
        """A random first choice, then straight ahead."""
        n = len(observation["candidates"])
        if self.actions >= self.max_actions or n < 2:
            return STOP
        self.actions += 1
        if self.actions == 1:
            first = int(self.rng.integers(n - 1))
            if first == STOP:
                self.actions = self.max_actions  # the episode is over
            return first
        return 1

    def finish(self, observation: Mapping[str, Any]) -> dict[str, Any] | None:
        """A random visible object as the grounding answer, when the task gives objects."""
        if "objects" not in observation:
            return None
        objects = observation["objects"]
        if not objects:
            return {"predObjId": None}  # nothing visible: no answer, said explicitly
        chosen = objects[int(self.rng.integers(len(objects)))]
        return {"predObjId": chosen.get("id") if isinstance(chosen, Mapping) else chosen}


class ShortestAgent:
    """Follows the teacher's actions to the goal and stops there; privileged.

    In the egocentric space these are the R2R environment's shortest-path actions (turn, tilt,
    then move), which reproduce the original simulator's shortest-agent trajectories.
    """

    action_spaces = ("panoramic", "egocentric")
    privileged = True
    protocol = {**_RULE_BASED, "model": "shortest: follows the shortest path to the goal (oracle)"}

    def reset(
        self,
        observation: Mapping[str, Any],
        *,
        rng: np.random.Generator,
        teacher: Teacher | None = None,
    ) -> None:
        """Keeps the privileged channel."""
        if teacher is None:
            raise PrivilegeError("the shortest agent needs the privileged channel (teacher=)")
        self.teacher = teacher

    def act(self, observation: Mapping[str, Any]) -> int:
        """The teacher's action."""
        return self.teacher.action()
