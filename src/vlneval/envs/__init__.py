"""Environments: navigation graphs behind a strict information boundary.

- :class:`GraphNavEnv`: one agent, Gymnasium's ``reset``/``step`` contract, panoramic or
  egocentric actions (:mod:`vlneval.envs.spaces`), observations without ground truth
  (:mod:`vlneval.envs.observation`), the executed trajectory recorded in the R2R format;
- :class:`VectorGraphNavEnv`: many episodes stepped at once by a compiled loop;
- ``privileged=True`` and ``env.privileged()``: goals and teacher actions, recorded on the card;
- :func:`make_env` / :data:`ENVS`: the registry (``graph-panoramic-v1``, ``graph-egocentric-v1``);
- :func:`check_env`: the conformance checker; :func:`open_features`: TSV / HDF5 features;
  :func:`write_predictions`: executed trajectories to an R2R predictions file.

Everything is imported on first use (numba only by the vectorised form).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
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
    "World",
]

if TYPE_CHECKING:
    from vlneval.envs.batch import BatchObservation
    from vlneval.envs.checker import EnvCheckError, check_env
    from vlneval.envs.episodes import EpisodeInputs
    from vlneval.envs.features import open_features
    from vlneval.envs.graph_env import GraphNavEnv
    from vlneval.envs.loading import load_episodes
    from vlneval.envs.observation import FeatureSensor, Sensor
    from vlneval.envs.privileged import PrivilegeError, Teacher
    from vlneval.envs.recording import write_predictions
    from vlneval.envs.registration import ENVS, make_env
    from vlneval.envs.spaces import (
        LOOK_DOWN,
        LOOK_UP,
        STOP,
        TURN_LEFT,
        TURN_RIGHT,
        ActionSpace,
        InvalidActionError,
    )
    from vlneval.graph.tables import Candidate
    from vlneval.envs.vector import VectorGraphNavEnv
    from vlneval.envs.world import World

_LAZY = {
    "GraphNavEnv": "graph_env",
    "VectorGraphNavEnv": "vector",
    "BatchObservation": "batch",
    "Candidate": "tables",
    "EpisodeInputs": "episodes",
    "Sensor": "observation",
    "FeatureSensor": "observation",
    "Teacher": "privileged",
    "PrivilegeError": "privileged",
    "InvalidActionError": "spaces",
    "ActionSpace": "spaces",
    "STOP": "spaces",
    "TURN_LEFT": "spaces",
    "TURN_RIGHT": "spaces",
    "LOOK_UP": "spaces",
    "LOOK_DOWN": "spaces",
    "ENVS": "registration",
    "make_env": "registration",
    "check_env": "checker",
    "EnvCheckError": "checker",
    "open_features": "features",
    "write_predictions": "recording",
    "load_episodes": "loading",
    "World": "world",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"vlneval.envs.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'vlneval.envs' has no attribute {name!r}")
