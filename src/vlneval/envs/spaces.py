"""Action spaces of the graph environment (spec/protocol.md).

Both spaces use integer actions read against the current observation's ``candidates`` list,
whose entry 0 is the current viewpoint:

- panoramic: ``0`` is STOP; ``k >= 1`` moves to ``candidates[k]`` (turning first to the view it
  is seen in, as the Speaker-Follower environment does);
- egocentric (the original R2R simulator): ``0`` is STOP; ``k >= 1`` moves to ``candidates[k]``
  (only neighbours in the field of view are listed; ``1`` is the R2R "forward"); and the four
  camera actions :data:`TURN_LEFT`, :data:`TURN_RIGHT`, :data:`LOOK_UP`, :data:`LOOK_DOWN`
  (negative numbers) turn by 30°. Elevation stays within −30°..+30°, as the simulator's
  discretised views keep it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlneval.errors import InvalidActionError, UnknownNameError

__all__ = [
    "STOP",
    "TURN_LEFT",
    "TURN_RIGHT",
    "LOOK_UP",
    "LOOK_DOWN",
    "CAMERA_ACTIONS",
    "ActionSpace",
    "PANORAMIC",
    "EGOCENTRIC",
    "action_space",
    "SPACES",
    "invalid_action",
]

STOP = 0
TURN_LEFT = -1
TURN_RIGHT = -2
LOOK_UP = -3
LOOK_DOWN = -4
CAMERA_ACTIONS = (TURN_LEFT, TURN_RIGHT, LOOK_UP, LOOK_DOWN)
_NAMES = {
    STOP: "STOP",
    TURN_LEFT: "TURN_LEFT",
    TURN_RIGHT: "TURN_RIGHT",
    LOOK_UP: "LOOK_UP",
    LOOK_DOWN: "LOOK_DOWN",
}


@dataclass(frozen=True)
class ActionSpace:
    """An action space: which integers are valid given an observation, and its protocol entry.

    Attributes:
        name: ``panoramic`` or ``egocentric``.
        camera: whether the camera actions (turn left/right, look up/down) exist.
        card: the protocol card's ``action_space`` entry.
    """

    name: str
    camera: bool
    card: Mapping[str, Any]

    def valid_actions(self, observation: Mapping[str, Any]) -> list[int]:
        """Every valid action at ``observation``, STOP first.

        Example:
            >>> obs = {"candidates": ["here", "there"]}
            >>> PANORAMIC.valid_actions(obs), EGOCENTRIC.valid_actions(obs)
            ([0, 1], [0, 1, -1, -2, -3, -4])
        """
        moves = list(range(len(observation["candidates"])))
        return moves + (list(CAMERA_ACTIONS) if self.camera else [])

    def contains(self, action: Any, n_candidates: int) -> bool:
        """Whether ``action`` is valid when the list has ``n_candidates`` entries."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            return False
        a = int(action)
        return 0 <= a < n_candidates or (self.camera and a in CAMERA_ACTIONS)

    def sample(self, observation: Mapping[str, Any], rng: np.random.Generator) -> int:
        """A uniformly random valid action."""
        valid = self.valid_actions(observation)
        return valid[int(rng.integers(len(valid)))]

    def describe(self, action: int) -> str:
        """A readable name for ``action``.

        Example:
            >>> EGOCENTRIC.describe(-2), EGOCENTRIC.describe(3)
            ('TURN_RIGHT', 'move to candidate 3')
        """
        return _NAMES.get(action, f"move to candidate {action}")

    def expected(self, n_candidates: int) -> str:
        """What a valid action is, for error messages."""
        moves = (
            f"1..{n_candidates - 1} (a candidate)" if n_candidates > 1 else "no move (no candidate)"
        )
        camera = ", or -1..-4 (turn left, turn right, look up, look down)" if self.camera else ""
        return f"0 (STOP), {moves}{camera}"


_FOV = {
    "vertical_deg": 60,
    "image": [640, 480],
    "horizontal_half_angle_deg": 40,
    "rule": "cos(horizontal angle to the neighbour) >= cos(vfov * width / height / 2), as the "
    "simulator computes it",
}

PANORAMIC = ActionSpace(
    "panoramic",
    False,
    {
        "kind": "graph, panoramic (choose a neighbouring viewpoint or STOP)",
        "candidates": "every neighbour visible in one of the 36 discrete views, kept in its "
        "closest view, sorted by |relative heading| (Speaker-Follower / REVERIE convention)",
        "move": "turn to the candidate's view (heading, elevation), then move",
        "views": "12 headings x 3 elevations, 30 degrees apart",
        "field_of_view": _FOV,
    },
)

EGOCENTRIC = ActionSpace(
    "egocentric",
    True,
    {
        "kind": "graph, egocentric (the R2R simulator's actions)",
        "actions": [
            "STOP",
            "turn left 30",
            "turn right 30",
            "look up 30",
            "look down 30",
            "move to a navigable viewpoint in view",
        ],
        "turn_angle_deg": 30,
        "elevation_step_deg": 30,
        "elevation_range_deg": [-30, 30],
        "navigable": "neighbours in the field of view, sorted by angular offset from the view "
        "centre (index 1 is 'forward'); headings snapped to 30 degrees as the simulator's "
        "discretised views do",
        "field_of_view": _FOV,
    },
)

SPACES = {s.name: s for s in (PANORAMIC, EGOCENTRIC)}


def action_space(name: str | ActionSpace) -> ActionSpace:
    """The action space called ``name`` (``panoramic`` or ``egocentric``).

    Example:
        >>> action_space("egocentric").camera
        True
    """
    if isinstance(name, ActionSpace):
        return name
    try:
        return SPACES[name]
    except KeyError:
        raise UnknownNameError("action space", name, SPACES) from None


def invalid_action(
    space: ActionSpace, action: Any, n_candidates: int, *, episode: str, step: int
) -> InvalidActionError:
    """The error for ``action`` at step ``step`` of ``episode``, saying what was expected."""
    shown = int(action) if isinstance(action, np.integer) else action
    return InvalidActionError(
        f"episode {episode}: step {step}: action {shown!r} is not valid in the {space.name} "
        f"action space: expected {space.expected(n_candidates)}"
    )
