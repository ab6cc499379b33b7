"""Observations: the base fields every graph environment gives, and sensors that add more.

An observation is a plain dict. The base fields are:

- ``instruction``: the instruction text;
- ``scan``, ``viewpoint``: where the agent is;
- ``heading``, ``elevation``: the camera's angles in radians (heading clockwise from +y, in
  [0, 2π); elevation positive up), ``view_index``: the discrete view 0..35;
- ``step``: actions taken so far in this episode;
- ``candidates``: a tuple of :class:`~vlneval.graph.tables.Candidate`, entry 0 the current
  viewpoint (the STOP action), then the action space's candidates.

Sensors add fields (``features`` from a features file; REVERIE object boxes or a CVDN dialog
history in other tasks). A sensor sees the observation built so far and the episode's
:class:`~vlneval.envs.graph.episodes.EpisodeInputs`, never the ground truth, so no sensor can leak it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from vlneval.envs.graph.episodes import EpisodeInputs
from vlneval.envs.graph.features import FeatureStore
from vlneval.graph.tables import Candidate, elevation_of, heading_of

__all__ = [
    "Observation",
    "Sensor",
    "FeatureSensor",
    "BASE_FIELDS",
    "observations_card",
    "observation",
]

Observation = dict[str, Any]

BASE_FIELDS = (
    "instruction",
    "scan",
    "viewpoint",
    "heading",
    "elevation",
    "view_index",
    "step",
    "candidates",
)

_HEADINGS = tuple(heading_of(h) for h in range(12))
_ELEVATIONS = tuple(elevation_of(e) for e in range(3))

_BASE_CARD = [
    "instruction text",
    "pose: scan, viewpoint id, heading, elevation, view index",
    "candidates: viewpoint id, relative heading, relative elevation, distance, view index",
]


@runtime_checkable
class Sensor(Protocol):
    """Adds one field to every observation.

    Attributes:
        key: the observation field it fills.
        description: what it gives, for the protocol card's ``observations``.
    """

    key: str
    description: str

    def observe(self, observation: Mapping[str, Any], inputs: EpisodeInputs) -> Any:
        """The field's value, from the base observation and the episode's task inputs."""
        ...


class FeatureSensor:
    """``features``: the ``(36, D)`` pre-extracted features of the current panorama.

    Rows are in absolute view-index order (``12 · elevation index + heading index``); a
    candidate's ``view_index`` picks its row.
    """

    key = "features"

    def __init__(self, store: FeatureStore) -> None:
        self.store = store
        self.description = store.describe()

    def observe(self, observation: Mapping[str, Any], inputs: EpisodeInputs) -> Any:
        """The current panorama's features (read-only float32)."""
        return self.store.get(observation["scan"], observation["viewpoint"])


def observations_card(sensors: Sequence[Sensor]) -> list[str]:
    """The protocol card's ``observations`` entry for the base fields plus ``sensors``.

    Example:
        >>> observations_card([])[0]
        'instruction text'
    """
    return list(_BASE_CARD) + [s.description for s in sensors]


def observation(
    inputs: EpisodeInputs,
    candidates: tuple[Candidate, ...],
    h: int,
    e: int,
    step: int,
    sensors: Sequence[Sensor],
) -> Observation:
    """The observation at heading index ``h`` and elevation index ``e`` after ``step`` actions
    (``candidates[0]`` is the current viewpoint), with every sensor's field."""
    obs: Observation = {
        "instruction": inputs.instruction,
        "scan": inputs.scan,
        "viewpoint": candidates[0].viewpoint,
        "heading": _HEADINGS[h],
        "elevation": _ELEVATIONS[e],
        "view_index": 12 * e + h,
        "step": step,
        "candidates": candidates,
    }
    for sensor in sensors:
        obs[sensor.key] = sensor.observe(obs, inputs)
    return obs
