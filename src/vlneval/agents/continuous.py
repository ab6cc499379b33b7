"""Baseline agents of the continuous environments, and the rollout that runs them.

- ``stop``: STOP at once (scores 0 wherever the start is outside the success radius);
- ``random``: VLN-CE's ``RandomAgent`` (``vlnce_baselines/nonlearning_agents.py``) in the
  discrete spaces: STOP, FORWARD, TURN_LEFT, TURN_RIGHT drawn with probabilities 0.02, 0.68,
  0.15, 0.15 (the oracle action distribution of the training set); in the velocity and
  waypoint spaces: STOP with probability 0.02, else a uniformly random command;
- ``shortest``: the privileged teacher of :mod:`vlneval.envs.continuous.teacher`.

Every agent draws randomness only from the ``rng`` it is given
(:func:`~vlneval.agents.rollout.episode_rng`), so the same seed gives the same file.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vlneval._version import __version__
from vlneval.agents.base import call_agent
from vlneval.agents.baselines import StopAgent
from vlneval.agents.progress import episode_progress
from vlneval.agents.registry import AGENTS
from vlneval.agents.remote import RemoteAgentError, is_remote, remote_agent_info
from vlneval.agents.rollout import episode_rng
from vlneval.continuous.oracle import GridOracle
from vlneval.envs.continuous.env import r2r_ce_steps
from vlneval.envs.continuous.spaces import FORWARD, STOP, TURN_LEFT, TURN_RIGHT, DiscreteSteps
from vlneval.envs.recording import measured_block
from vlneval.errors import VLNEvalError
from vlneval.tasks import TASKS
from vlneval.tasks.common.protocol import episodes_card, software_fingerprint, with_declared
from vlneval.tasks.profiles import get_profile
from vlneval.tasks.vlnce.format import (
    START_TOLERANCE,
    ContinuousPredictions,
    _ragged,
    habitat_to_world,
    parse_ce_predictions,
)
from vlneval.tasks.vlnce.score import DistanceSource, score_continuous, with_policy

__all__ = [
    "ContinuousStopAgent",
    "ContinuousRandomAgent",
    "ContinuousShortestAgent",
    "make_agent",
    "continuous_agent",
    "run_continuous",
    "run_card",
    "score_run",
    "RunRecord",
    "kept_out_of_gc",
    "given_id",
]

SPACES = ("r2r-ce", "rxr-ce", "velocity", "waypoint")


class ContinuousStopAgent(StopAgent):
    """Never moves: STOP at the first step."""

    action_spaces = SPACES
    protocol = {"agent": "stop: STOP at once"}


class ContinuousRandomAgent:
    """VLN-CE's random agent (discrete spaces) and its analogue for velocities and waypoints.

    Args:
        space: the environment's action space (to draw commands within its limits).
        p_stop: the per-step STOP probability outside the discrete spaces.
    """

    action_spaces = SPACES
    PROBS = (0.02, 0.68, 0.15, 0.15)

    def __init__(self, space: Any = None, *, p_stop: float = 0.02) -> None:
        self.space = space
        self.p_stop = p_stop
        self.protocol = {
            "agent": "random: VLN-CE RandomAgent action distribution "
            f"{dict(zip(('STOP', 'FORWARD', 'TURN_LEFT', 'TURN_RIGHT'), self.PROBS, strict=True))}"
            f"; velocity/waypoint: uniform command, STOP with p={p_stop}"
        }

    def reset(
        self, observation: Mapping[str, Any], *, rng: np.random.Generator, teacher: Any = None
    ) -> None:
        """Keeps the episode's generator."""
        self.rng = rng

    def act(self, observation: Mapping[str, Any]) -> Any:
        """A random action."""
        if self.space is None or isinstance(self.space, DiscreteSteps):
            return int(self.rng.choice([STOP, FORWARD, TURN_LEFT, TURN_RIGHT], p=self.PROBS))
        if self.rng.random() < self.p_stop:
            return STOP
        return self.space.sample(self.rng)


class ContinuousShortestAgent:
    """Follows the geodesic shortest path to the goal (privileged: it reads the teacher)."""

    action_spaces = SPACES
    privileged = True
    protocol = {"agent": "shortest: the environment's teacher actions (privileged)"}

    def reset(
        self, observation: Mapping[str, Any], *, rng: np.random.Generator, teacher: Any = None
    ) -> None:
        """Keeps the privileged channel."""
        if teacher is None:
            raise VLNEvalError(
                "the shortest agent is privileged: build the environment with privileged=True"
            )
        self.teacher = teacher

    def act(self, observation: Mapping[str, Any]) -> Any:
        """The teacher's action."""
        return self.teacher.action()


@dataclass
class RunRecord:
    """A finished run: predictions (``r2r-ce`` form, the episodes' frame) and per-episode
    measurements (integrated path length, simulated time, steps, collisions...)."""

    predictions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    episodes: list[dict[str, Any]] = field(default_factory=list)
    env_card: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    #: episode index -> (positions written, stopped): the predictions as arrays, for scoring
    tracks: dict[int, tuple[np.ndarray, bool]] = field(default_factory=dict)


def make_agent(name: str, space: Any) -> Any:
    """A continuous baseline agent by name (``stop``, ``random``, ``shortest``, or the
    registry id ``continuous-random``...) for an environment with action space ``space``.

    Example:
        >>> type(make_agent("stop", None)).__name__
        'ContinuousStopAgent'
    """
    cls = AGENTS.get(name if name.startswith("continuous-") else f"continuous-{name}")
    return cls(space) if cls is ContinuousRandomAgent else cls()


def continuous_agent(spec: str, space: Any) -> Any:
    """The agent of a continuous run: a baseline by name (``stop``, ``random``, ``shortest``;
    :func:`make_agent`) or, for a URL, the remote agent served there
    (:mod:`vlneval.agents.remote`), which must serve ``space``'s action space.

    Raises:
        RemoteAgentError: the server is unreachable or serves other action spaces.
    """
    if not is_remote(spec):
        return make_agent(spec, space)
    info = remote_agent_info(spec)
    if space.name not in info.action_spaces:
        raise RemoteAgentError(
            f"remote agent {spec}: it serves the {', '.join(info.action_spaces)} action "
            f"space(s), not this environment's {space.name}"
        )
    return info.factory()


def given_id(agent: Any, spec: str) -> str:
    """The id of the agent the user gave as ``spec`` (``--agent``): a remote agent's URL as it
    names itself, else ``spec`` (a baseline's name).

    Example:
        >>> given_id(make_agent("stop", None), "stop")
        'stop'
    """
    return str(getattr(agent, "id", spec))


def run_continuous(
    env: Any,
    agent: Any,
    *,
    indices: Sequence[int] | None = None,
    seed: int = 0,
    progress: bool = False,
    on_record: Callable[[int, dict[str, Any], dict[str, Any]], Any] | None = None,
    agent_id: str | None = None,
) -> RunRecord:
    """Runs ``agent`` on every episode (or ``indices``) of ``env``; one rollout each. With
    ``on_record``, each episode's prediction and measurements go to ``on_record(i,
    predictions, measurements)`` as it ends (a shard writes it to disk then). An exception of
    the agent names it ``agent_id`` (:func:`given_id`; by default its class, ``module:Class``)."""
    name = agent_id or f"{type(agent).__module__}:{type(agent).__qualname__}"
    teacher = env.privileged() if getattr(agent, "privileged", False) else None
    out = RunRecord()
    order = list(range(len(env))) if indices is None else list(indices)
    label = f"running {getattr(env, 'task', env.action_space.name)}"  # the task given: r2r-twin
    with (
        kept_out_of_gc() as keep,
        episode_progress(len(order), enabled=progress, label=label) as advance,
    ):
        for i in order:
            _rollout(env, agent, name, int(i), seed, teacher)
            _collect(env, out)
            if on_record is not None:
                eid = out.episodes[-1]["episode_id"]
                on_record(int(i), {eid: out.predictions[eid]}, out.episodes[-1])
            keep()
            advance(1)
    out.env_card = env.protocol()
    return out


@contextmanager
def kept_out_of_gc() -> Iterator[Callable[[], None]]:
    """Yields ``keep()``, which moves every object alive to the collector's permanent
    generation (``gc.freeze``) until the block ends: the finished episodes' step records
    (millions of small objects, no cycles) are not walked again by every collection, which
    otherwise takes most of the time of building them. Nothing is done when something else
    froze objects already (the block would thaw them)."""
    if not gc.isenabled() or gc.get_freeze_count():
        yield lambda: None
        return
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def _rollout(env: Any, agent: Any, name: str, i: int, seed: int, teacher: Any) -> None:
    obs, _ = env.reset(options={"episode": i})
    eid = env.record.episode_id
    call_agent(name, "reset()", agent.reset, obs, eid, rng=episode_rng(seed, i), teacher=teacher)
    done = False
    while not done:
        obs, _, terminated, truncated, _ = env.step(call_agent(name, "act()", agent.act, obs, eid))
        done = terminated or truncated


def _collect(env: Any, out: RunRecord) -> None:
    rec = env.record
    out.steps += rec.steps
    pts, headings = env.executed()
    out.predictions[rec.episode_id] = r2r_ce_steps(pts, headings, rec.stopped)
    out.tracks[env.episode_index] = (pts, rec.stopped)
    out.episodes.append(
        {
            "episode_id": rec.episode_id,
            "path_length_integrated": rec.path_length,
            "time_s": rec.time,
            "steps": rec.steps,
            "stopped": rec.stopped,
            "collisions": rec.collisions,
            "clipped": rec.clipped,
            "waypoints": dict(rec.statuses),
        }
    )


def run_card(
    env: Any, env_id: str, agent: Any, run: RunRecord, *, split: str, seed: int
) -> dict[str, Any]:
    """The protocol card of a continuous run: the environment and its action space, the agent,
    the seed, the episodes run and the environment's own measurements."""
    n, eps = len(run.predictions), run.episodes
    measured = {
        "vlneval_version": __version__,
        "task": env.task,
        "split": split,
        "data_version": getattr(env.episodes, "data_version", None),
        "environment": env_id,
        **episodes_card(n, len(env)),
        **run.env_card,
        "seeds": [seed],
        "n_runs": 1,
        "measured": measured_block(eps),
        "software": software_fingerprint(),
    }
    return with_declared(measured, getattr(agent, "protocol", {}))


def score_run(
    env: Any,
    run: RunRecord,
    card: Mapping[str, Any],
    predictions: Any,
    *,
    profile: str | None = None,
    subset: bool = False,
    progress: bool = False,
    unreachable: str | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Scores a run's predictions file on the twin grid of the worlds the agent ran in (no
    second load): the summary (with the card's ``measured`` block) and the per-episode rows,
    each joined by the environment's own measurements (integrated length, simulated time).

    The file is the one just written from ``run``: its trajectories are taken from the run's
    arrays (the same floats as the file's; reading the JSON back would only repeat them),
    unless a start is too far from its episode's, when the file is read for the reader's error.
    ``unreachable`` (``failure`` or ``exclude``, checked by the task) replaces the profile's
    policy for unreachable goals, as ``vlneval score --unreachable`` does.
    """
    eps, worlds = env.episodes, env._worlds
    transform = None if eps.frame == "world" else habitat_to_world
    source = DistanceSource(
        "twin",
        "grid geodesic on the twin worlds the agent ran in",
        lambda i: GridOracle(worlds(eps.scans[i]), transform=transform, snap=0.5),
    )
    preds = _run_predictions(run, eps, str(predictions))
    if preds is None:
        preds = parse_ce_predictions(predictions, eps)
    prof = with_policy(
        get_profile(profile or _default_profile(env.task)), {"unreachable": unreachable}
    )
    result = score_continuous(
        eps, preds, prof, source, subset=subset,
        run=dict(card), show_progress=progress,
    )  # fmt: skip
    measured = {e["episode_id"]: e for e in run.episodes}
    rows = [{**r, **_measured(measured[r[eps.id_field]])} for r in result.rows()]
    summary = result.to_dict()
    summary["measured"] = card["measured"]
    return summary, rows


def _default_profile(task: str) -> str:
    """``task``'s default profile; ``vlnce-exact`` for a twin with no task of its own (r4r-twin)."""
    return TASKS.get(task).default_profile if task in TASKS else "vlnce-exact"


def _run_predictions(run: RunRecord, eps: Any, source: str) -> Any:
    """What ``parse_ce_predictions`` reads from the file ``run.predictions`` was written to,
    built from ``run.tracks``; None when the reader would refuse it (a start too far off) or
    the tracks are not the predictions'."""
    order = sorted(run.tracks)
    if not order or len(order) != len(run.predictions):
        return None
    idx = np.array(order, dtype=np.int64)
    pos, offsets = _ragged([run.tracks[i][0] for i in order])
    firsts = pos[offsets[:-1]]
    for k, i in enumerate(order):  # the reader's test, float for float
        if float(np.linalg.norm(firsts[k] - eps.starts[i])) > START_TOLERANCE:
            return None
    stopped = np.array([run.tracks[i][1] for i in order], dtype=np.bool_)
    have = set(order)
    missing = [eps.ids[i] for i in range(len(eps)) if i not in have]
    return ContinuousPredictions(source, "r2r-ce", idx, pos, offsets, stopped, None, [], missing)


def _measured(e: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("path_length_integrated", "time_s", "collisions", "clipped")
    return {k: e[k] for k in keys}
