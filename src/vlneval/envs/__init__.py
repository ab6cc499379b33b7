"""Environments: three families on one contract, behind a strict information boundary.

- :mod:`vlneval.envs.core`: the :class:`Env` protocol (Gymnasium's ``reset``/``step``, the
  executed trajectory recorded by the environment, ground truth only through ``privileged()``)
  and the episode bookkeeping the families share;
- :mod:`vlneval.envs.graph`: :class:`GraphNavEnv` on Matterport3D navigation graphs, panoramic
  or egocentric actions (:mod:`vlneval.envs.spaces`), observations without ground truth, and
  :class:`VectorGraphNavEnv`, many episodes stepped at once by a compiled loop;
- :mod:`vlneval.envs.street`: Touchdown's street graph; :mod:`vlneval.envs.continuous`:
  continuous worlds (discrete steps, velocities, waypoints);
- :func:`make_env` / :data:`ENVS`: the registry (``graph-panoramic-v1``, ``street-v1``,
  ``continuous-waypoint-v1``...); :func:`check_env`: the conformance checker;
  :func:`load_episodes`: a task's split; :func:`write_predictions`: executed trajectories to a
  predictions file.

Environments import the data, graph and task layers only; agents and their rollouts live in
:mod:`vlneval.agents`. Everything here is imported on first use (numba only by the vectorised
form).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlneval._lazy import lazy_attributes

__all__ = [
    "Env",
    "GraphNavEnv",
    "VectorGraphNavEnv",
    "BatchObservation",
    "Candidate",
    "EpisodeInputs",
    "Sensor",
    "FeatureSensor",
    "Teacher",
    "PrivilegeError",
    "InvalidActionError",
    "ActionSpace",
    "STOP",
    "TURN_LEFT",
    "TURN_RIGHT",
    "LOOK_UP",
    "LOOK_DOWN",
    "ENVS",
    "make_env",
    "check_env",
    "EnvCheckError",
    "open_features",
    "write_predictions",
    "load_episodes",
    "GraphWorld",
]

if TYPE_CHECKING:
    from vlneval.envs.checker import EnvCheckError, check_env
    from vlneval.envs.core import Env, PrivilegeError
    from vlneval.envs.graph.batch import BatchObservation
    from vlneval.envs.graph.env import GraphNavEnv
    from vlneval.envs.graph.episodes import EpisodeInputs
    from vlneval.envs.graph.features import open_features
    from vlneval.envs.graph.observation import FeatureSensor, Sensor
    from vlneval.envs.graph.privileged import Teacher
    from vlneval.envs.graph.vector import VectorGraphNavEnv
    from vlneval.envs.graph.world import GraphWorld
    from vlneval.envs.loading import load_episodes
    from vlneval.envs.recording import write_predictions
    from vlneval.envs.registration import ENVS, make_env
    from vlneval.envs.spaces import LOOK_DOWN, LOOK_UP, STOP, TURN_LEFT, TURN_RIGHT, ActionSpace
    from vlneval.errors import InvalidActionError
    from vlneval.graph.tables import Candidate

__getattr__ = lazy_attributes(
    __name__,
    {
        "Env": "vlneval.envs.core",
        "PrivilegeError": "vlneval.envs.core",
        "GraphNavEnv": "vlneval.envs.graph.env",
        "VectorGraphNavEnv": "vlneval.envs.graph.vector",
        "BatchObservation": "vlneval.envs.graph.batch",
        "Candidate": "vlneval.graph.tables",
        "EpisodeInputs": "vlneval.envs.graph.episodes",
        "Sensor": "vlneval.envs.graph.observation",
        "FeatureSensor": "vlneval.envs.graph.observation",
        "Teacher": "vlneval.envs.graph.privileged",
        "InvalidActionError": "vlneval.errors",
        "ActionSpace": "vlneval.envs.spaces",
        "STOP": "vlneval.envs.spaces",
        "TURN_LEFT": "vlneval.envs.spaces",
        "TURN_RIGHT": "vlneval.envs.spaces",
        "LOOK_UP": "vlneval.envs.spaces",
        "LOOK_DOWN": "vlneval.envs.spaces",
        "ENVS": "vlneval.envs.registration",
        "make_env": "vlneval.envs.registration",
        "check_env": "vlneval.envs.checker",
        "EnvCheckError": "vlneval.envs.checker",
        "open_features": "vlneval.envs.graph.features",
        "write_predictions": "vlneval.envs.recording",
        "load_episodes": "vlneval.envs.loading",
        "GraphWorld": "vlneval.envs.graph.world",
    },
)
