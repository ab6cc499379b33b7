"""The three continuous action spaces (spec/protocol.md), each with its protocol-card entry.

- :class:`DiscreteSteps`: integer actions as Habitat numbers them (``STOP`` 0, ``FORWARD`` 1,
  ``TURN_LEFT`` 2, ``TURN_RIGHT`` 3, ``LOOK_UP`` 4, ``LOOK_DOWN`` 5). ``R2R_CE``: 0.25 m,
  15° turns, a blocked step slides; ``RXR_CE``: 0.25 m, 30° turns, 30° look up/down, no sliding.
- :class:`Velocity`: ``(linear m/s, angular rad/s)`` held for one control period, clipped to
  the limits (clipping is counted), integrated with a unicycle model; ``STOP`` (0) ends.
- :class:`Waypoint`: ``(distance m, relative heading rad[, relative height m])``, a target in
  the agent's frame (positive angles turn clockwise, right), at most ``max_range`` away; where
  floors overlap, the height picks the floor (without it: the floor reachable soonest). A
  planner finds a path on the map and a controller drives it, reporting ``reached`` or
  ``blocked``.

Headings are clockwise from +y, so turning right increases the heading.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from vlneval.errors import InvalidActionError, UnknownNameError
from vlneval.io import brief

__all__ = [
    "STOP",
    "FORWARD",
    "TURN_LEFT",
    "TURN_RIGHT",
    "LOOK_UP",
    "LOOK_DOWN",
    "DiscreteSteps",
    "Velocity",
    "Waypoint",
    "R2R_CE",
    "RXR_CE",
    "VELOCITY",
    "WAYPOINT",
    "CONTINUOUS_SPACES",
    "continuous_space",
]

STOP, FORWARD, TURN_LEFT, TURN_RIGHT, LOOK_UP, LOOK_DOWN = range(6)
_NAMES = ("STOP", "FORWARD", "TURN_LEFT", "TURN_RIGHT", "LOOK_UP", "LOOK_DOWN")


def _integer(action: Any) -> bool:
    return isinstance(action, (int, np.integer)) and not isinstance(action, bool)


@dataclass(frozen=True)
class DiscreteSteps:
    """Forward steps and turns (VLN-CE's discrete action spaces).

    Attributes:
        name: ``r2r-ce`` or ``rxr-ce``.
        forward_m, turn_deg: the step length and turn angle.
        look_deg: the camera tilt of LOOK_UP/LOOK_DOWN (0: those actions do not exist).
        elevation_limit_deg: the tilt range is ± this.
        sliding: a blocked forward step slides along the obstacle (Habitat ``ALLOW_SLIDING``);
            without it a blocked step does not move at all.
        linear_speed, angular_speed_deg: nominal speeds that turn actions into simulated time.
        max_steps: the episode's action limit (STOP counts).
    """

    name: str
    forward_m: float
    turn_deg: float
    look_deg: float
    sliding: bool
    elevation_limit_deg: float = 30.0
    linear_speed: float = 0.5
    angular_speed_deg: float = 30.0
    max_steps: int = 500

    def card(self) -> dict[str, Any]:
        """The protocol card's ``action_space`` entry."""
        actions = ["STOP", "FORWARD", "TURN_LEFT", "TURN_RIGHT"] + (
            ["LOOK_UP", "LOOK_DOWN"] if self.look_deg else []
        )
        return {
            "name": self.name,
            "kind": "continuous, discrete steps",
            "actions": actions,
            **asdict(self),
            "time": "forward_m / linear_speed per step, turn_deg / angular_speed_deg per turn",
        }

    def n(self) -> int:
        """Number of actions."""
        return 6 if self.look_deg else 4

    def contains(self, action: Any) -> bool:
        """Whether ``action`` is one of this space's integers."""
        return _integer(action) and 0 <= int(action) < self.n()

    def sample(self, rng: np.random.Generator) -> int:
        """A uniformly random action (every continuous space has one)."""
        return int(rng.integers(self.n()))

    def expected(self) -> str:
        """What a valid action is, for errors."""
        return ", ".join(f"{k} ({_NAMES[k]})" for k in range(self.n()))


@dataclass(frozen=True)
class Velocity:
    """Velocity commands held for a control period, integrated with a unicycle model.

    Attributes:
        linear_min, linear_max: m/s limits; angular_max: |rad/s| limit.
        period_s: how long each command is held.
        max_steps: the episode's limit in control periods.
    """

    name: str = "velocity"
    linear_min: float = 0.0
    linear_max: float = 0.5
    angular_max: float = math.pi / 2
    period_s: float = 0.25
    max_steps: int = 1000

    def card(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "continuous velocities (linear m/s, angular rad/s)",
            "units": {"linear": "m/s", "angular": "rad/s, positive = clockwise (turn right)"},
            "rate_hz": 1.0 / self.period_s,
            "limits": "out-of-range commands are clipped and counted",
            "integration": "unicycle model, sub-steps of at most half a cell; collisions stop translation",
            **asdict(self),
        }

    def parse(self, action: Any) -> tuple[float, float, bool]:
        """``(v, w, clipped)``; raises :class:`InvalidActionError` for a malformed command."""
        try:
            v, w = (float(a) for a in action)
        except (TypeError, ValueError):
            raise InvalidActionError(
                f"expected STOP (0) or (linear m/s, angular rad/s), got {brief(action, 60)}"
            ) from None
        if not (math.isfinite(v) and math.isfinite(w)):
            raise InvalidActionError(f"velocity command must be finite, got ({v}, {w})")
        cv = min(max(v, self.linear_min), self.linear_max)
        cw = min(max(w, -self.angular_max), self.angular_max)
        return cv, cw, (cv, cw) != (v, w)

    def sample(self, rng: np.random.Generator) -> tuple[float, float]:
        """A uniformly random command within the limits."""
        return (
            float(rng.uniform(self.linear_min, self.linear_max)),
            float(rng.uniform(-self.angular_max, self.angular_max)),
        )


@dataclass(frozen=True)
class Waypoint:
    """A relative target position executed by a planner and a path-following controller.

    Attributes:
        max_range: farthest target (straight line, metres).
        speed, angular_max, rate_hz: the controller's limits and rate.
        tolerance: the target counts as reached within this distance.
        snap: a target off the free space moves to the nearest free cell within this distance.
        max_steps: the episode's limit in waypoints.
    """

    name: str = "waypoint"
    max_range: float = 3.0
    speed: float = 0.5
    angular_max: float = math.pi / 2
    rate_hz: float = 10.0
    tolerance: float = 0.15
    snap: float = 0.3
    max_steps: int = 100

    def card(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "waypoints (distance m, relative heading rad)",
            "executor": "grid shortest path (scipy csgraph Dijkstra) to the target, followed by a "
            "pure-pursuit unicycle controller; reports reached or blocked (unreachable, "
            "off the free space, or stalled)",
            **asdict(self),
        }

    def parse(self, action: Any) -> tuple[float, float, float | None]:
        """``(distance, relative heading, relative height or None)``; raises
        :class:`InvalidActionError`."""
        try:
            values = [float(x) for x in action]
        except (TypeError, ValueError):
            values = []
        if len(values) not in (2, 3):
            raise InvalidActionError(
                f"expected STOP (0) or (distance m, relative heading rad[, relative height m]), got {brief(action, 60)}"
            )
        r, a = values[0], values[1]
        dz = values[2] if len(values) == 3 else None
        if not all(math.isfinite(v) for v in values) or r < 0 or r > self.max_range + 1e-9:
            raise InvalidActionError(
                f"waypoint distance must be in [0, {self.max_range}] m and finite, got {tuple(values)}"
            )
        return r, a, dz

    def sample(self, rng: np.random.Generator) -> tuple[float, float]:
        """A uniformly random waypoint within range."""
        return float(rng.uniform(0, self.max_range)), float(rng.uniform(-math.pi, math.pi))


R2R_CE = DiscreteSteps("r2r-ce", 0.25, 15.0, 0.0, True)
RXR_CE = DiscreteSteps("rxr-ce", 0.25, 30.0, 30.0, False)
VELOCITY = Velocity()
WAYPOINT = Waypoint()
CONTINUOUS_SPACES: dict[str, Any] = {s.name: s for s in (R2R_CE, RXR_CE, VELOCITY, WAYPOINT)}


def continuous_space(name: Any) -> Any:
    """The continuous action space called ``name`` (or ``name`` itself if it is a space).

    Example:
        >>> continuous_space("rxr-ce").turn_deg, continuous_space("r2r-ce").sliding
        (30.0, True)
    """
    if isinstance(name, (DiscreteSteps, Velocity, Waypoint)):
        return name
    if name not in CONTINUOUS_SPACES:
        raise UnknownNameError("continuous action space", str(name), CONTINUOUS_SPACES)
    return CONTINUOUS_SPACES[name]


def is_stop(action: Any) -> bool:
    """Whether ``action`` is STOP (the integer 0) in any continuous space."""
    return _integer(action) and int(action) == STOP
