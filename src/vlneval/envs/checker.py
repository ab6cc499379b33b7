"""A conformance checker for graph environments (in the spirit of Gymnasium's ``check_env``).

``check_env`` runs an environment through its contract and raises :class:`EnvCheckError` listing
every failure: the Gymnasium API shapes, the observation fields, invalid actions, the step limit,
same-seed determinism, the information boundary (no observation or ``info`` holds the goal, the
reference path or distances to the goal; observations do not change when the goal does), the
privileged channel, the protocol fields and, for a registered id, that the vectorised form
executes exactly the same trajectories.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from vlneval.envs.core import PrivilegeError
from vlneval.envs.graph.env import GraphNavEnv
from vlneval.envs.graph.episodes import GroundTruth
from vlneval.envs.graph.observation import BASE_FIELDS
from vlneval.envs.leaks import find_values
from vlneval.envs.registration import make_env
from vlneval.errors import InvalidActionError, VLNEvalError
from vlneval.graph.tables import Candidate

__all__ = ["check_env", "EnvCheckError", "boundary_leaks"]

PROTOCOL_KEYS = ("action_space", "observations", "privileged", "inference_budget", "executed_path")


class EnvCheckError(VLNEvalError):
    """An environment broke its contract; the message lists every failed check."""


def _random_action(
    env: GraphNavEnv, obs: dict[str, Any], rng: np.random.Generator, stop: bool
) -> int:
    valid = env.action_space.valid_actions(obs)
    if not stop and len(valid) > 1:
        valid = valid[1:]
    return int(valid[int(rng.integers(len(valid)))])


def _rollout(env: GraphNavEnv, seed: int, episodes: int, *, stop: bool = True) -> list[Any]:
    """Random episodes from ``reset(seed=seed)``: every observation, info and trajectory."""
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    obs, info = env.reset(seed=seed)
    for k in range(episodes):
        if k:
            obs, info = env.reset()
        out.append((env.episode_id, obs, info))
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(_random_action(env, obs, rng, stop))
            out.append((obs, reward, terminated, truncated, info))
            done = terminated or truncated
        out.append(env.trajectory())
    return out


def boundary_leaks(env: GraphNavEnv, obs: dict[str, Any], info: dict[str, Any]) -> list[str]:
    """Ground truth found in ``obs`` or ``info`` at the environment's current state.

    The goal may appear only where the agent physically is or sees it (``viewpoint`` and the
    candidates' ``viewpoint``, checked to be the current node and its graph neighbours); nothing
    may hold the reference path, or a geodesic distance to the goal.
    """
    problems: list[str] = []
    truth = env._truth  # the checker may look behind the boundary; agents cannot
    i = env._i
    goals, path = truth.goals(i), truth.path(i)
    tables = env._current()
    graph = tables.graph
    node = env._node
    allowed = {graph.ids[node]} | {graph.ids[int(v)] for v in graph.neighbours(node)}
    for k, c in enumerate(obs.get("candidates", ())):
        if c.viewpoint not in allowed:
            problems.append(f"candidates[{k}] is {c.viewpoint}, neither here nor a neighbour")
    dist = env.world.distances(obs["scan"])
    goal_nodes = [graph.index[g] for g in goals if g in graph.index]
    numbers = [
        float(dist[v, g]) for g in goal_nodes for v in [node, *graph.neighbours(node).tolist()]
    ]
    near = any(g == node or g in graph.neighbours(node) for g in goal_nodes)
    skip = ["['viewpoint']"] + [
        f"['candidates'][{k}].viewpoint" for k in range(len(obs.get("candidates", ())))
    ]
    for where, value in (("observation", obs), ("info", info)):
        found = find_values(
            value,
            strings=goals,
            runs=[path],
            numbers=() if near else numbers,
            skip=skip if where == "observation" else (),
        )
        problems += [f"{where}: {f}" for f in found]
    return problems


def _check_api(env: GraphNavEnv, problems: list[str]) -> None:
    for method, keyword in (("reset", ("seed", "options")), ("step", ())):
        sig = inspect.signature(getattr(env, method))
        for name in keyword:
            p = sig.parameters.get(name)
            if p is None or p.kind is not inspect.Parameter.KEYWORD_ONLY or p.default is not None:
                problems.append(f"{method}() must take keyword-only {name}=None")
    result = env.reset(seed=0)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
        problems.append("reset() must return (observation, info dict)")
        return
    obs = result[0]
    _check_observation(obs, problems)
    step = env.step(_random_action(env, obs, np.random.default_rng(0), False))
    if not (isinstance(step, tuple) and len(step) == 5):
        problems.append("step() must return (observation, reward, terminated, truncated, info)")
        return
    _, reward, terminated, truncated, info = step
    if type(reward) is not float or type(terminated) is not bool or type(truncated) is not bool:
        problems.append("step() must return a float reward and bool terminated/truncated")
    if not isinstance(info, dict):
        problems.append("step() info must be a dict")


def _check_observation(obs: Any, problems: list[str]) -> None:
    if not isinstance(obs, dict):
        problems.append(f"an observation must be a dict, got {type(obs).__name__}")
        return
    missing = [k for k in BASE_FIELDS if k not in obs]
    if missing:
        problems.append(f"observation lacks {', '.join(missing)}")
        return
    cands = obs["candidates"]
    if (
        not isinstance(cands, tuple)
        or not cands
        or not all(isinstance(c, Candidate) for c in cands)
    ):
        problems.append("candidates must be a non-empty tuple of Candidate")
        return
    if cands[0].viewpoint != obs["viewpoint"]:
        problems.append("candidates[0] must be the current viewpoint (STOP)")
    if (
        not 0.0 <= obs["heading"] < 2 * math.pi
        or not -math.pi / 2 <= obs["elevation"] <= math.pi / 2
    ):
        problems.append(f"heading/elevation out of range: {obs['heading']}, {obs['elevation']}")
    for k, c in enumerate(cands):
        if not all(math.isfinite(x) for x in (c.rel_heading, c.rel_elevation, c.distance)):
            problems.append(f"candidates[{k}] holds a non-finite number")
        if not -math.pi < c.rel_heading <= math.pi + 1e-12 or not 0 <= c.view_index < 36:
            problems.append(f"candidates[{k}]: relative heading or view index out of range")


def _check_actions(env: GraphNavEnv, problems: list[str]) -> None:
    obs, _ = env.reset(seed=1)
    n = len(obs["candidates"])
    for bad in (n, -5, 1.0, True, "1", None):
        try:
            env.step(bad)  # type: ignore[arg-type]
        except InvalidActionError:
            continue
        except Exception as exc:  # noqa: BLE001 - any other failure is what the check reports
            problems.append(f"step({bad!r}) raised {type(exc).__name__}, not InvalidActionError")
            obs, _ = env.reset(seed=1)
            continue
        problems.append(f"step({bad!r}) was accepted: it is not a valid action")
        obs, _ = env.reset(seed=1)
    env.step(0)
    try:
        env.step(0)
        problems.append("step() after the episode ended was accepted")
    except VLNEvalError:
        pass


def _check_limit(env: GraphNavEnv, problems: list[str]) -> None:
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(2)
    taken, terminated, truncated = 0, False, False
    while not (terminated or truncated) and taken <= env.max_steps:
        obs, _, terminated, truncated, _ = env.step(_random_action(env, obs, rng, stop=False))
        taken += 1
    if not truncated or terminated or taken != env.max_steps:
        problems.append(
            f"an episode without STOP must be truncated after {env.max_steps} steps (got {taken})"
        )
    if len(env.trajectory()) != env.max_steps + 1:
        problems.append(
            "the executed trajectory must hold the start and one entry per move or turn"
        )


def _check_determinism(env: GraphNavEnv, problems: list[str]) -> None:
    a, b = _rollout(env, 7, 4), _rollout(env, 7, 4)
    if repr(a) != repr(b):
        problems.append("two runs with the same seed and actions differ")


def _check_boundary(env: GraphNavEnv, problems: list[str]) -> None:
    rng = np.random.default_rng(3)
    for k in range(min(len(env), 12)):
        obs, info = env.reset(options={"episode": k})
        done = False
        while True:
            problems += [f"episode {env.episode_id}: {p}" for p in boundary_leaks(env, obs, info)]
            if done:
                break
            obs, _, terminated, truncated, info = env.step(_random_action(env, obs, rng, True))
            done = terminated or truncated
    _check_counterfactual(env, problems)


def _check_counterfactual(env: GraphNavEnv, problems: list[str]) -> None:
    """Observations and infos are identical when every episode's goal and path change."""
    truth = env._truth
    first = _rollout(env, 11, 6)
    fake = GroundTruth.__new__(GroundTruth)
    fake._paths = [p[:1] + tuple(reversed(p[1:])) for p in truth._paths]
    fake._goals = [p[:1] for p in truth._paths]
    fake.scorable, fake.source = truth.scorable, truth.source
    env._truth = fake
    try:
        second = _rollout(env, 11, 6)
    finally:
        env._truth = truth
    if repr(first) != repr(second):
        problems.append("observations or infos change when the goal and reference path change")


def _check_privileged(env: GraphNavEnv, problems: list[str]) -> None:
    card = env.protocol()
    missing = [k for k in PROTOCOL_KEYS if k not in card]
    if missing:
        problems.append(f"protocol() lacks {', '.join(missing)}")
    if env._privileged:
        if card.get("privileged") == "none":
            problems.append("a privileged environment's protocol must say so")
        return
    if card.get("privileged") != "none":
        problems.append("a non-privileged environment's protocol must say privileged: none")
    try:
        env.privileged()
        problems.append("privileged() answered although privileged=True was not requested")
    except PrivilegeError:
        pass


def _check_vector(env_id: str, make: Callable[..., Any], problems: list[str]) -> None:
    """The vectorised form executes exactly the single environment's trajectories."""
    single = make(env_id, max_steps=8)
    vector = make(env_id, max_steps=8, num_envs=3)
    rng = np.random.default_rng(5)
    n = min(len(single), 9)
    obs, info = vector.reset(options={"episodes": range(n)})
    actions: dict[int, list[int]] = {i: [] for i in range(n)}
    while obs.active.any():
        acts = np.zeros(vector.num_envs, dtype=np.int32)
        for s in np.flatnonzero(obs.active).tolist():
            acts[s] = _random_action(single, vector.observation(s), rng, True)
            actions[int(info["episode"][s])].append(int(acts[s]))
        obs, _, _, _, info = vector.step(acts)
    for i in range(n):
        single.reset(options={"episode": i})
        for a in actions[i]:
            single.step(a)
        if single.trajectory() != vector.trajectory(i):
            problems.append(
                f"vectorised and single environments differ on episode {single.episode_id}"
            )


def check_env(env: GraphNavEnv | str, **make_kwargs: Any) -> list[str]:
    """Runs every check on a graph environment (an instance, or a registered ``graph-*`` id built
    on the demo task).

    Returns the names of the checks that ran; raises :class:`EnvCheckError` listing failures.

    Example:
        >>> check_env("graph-panoramic-v1")[:3]
        ['api', 'actions', 'step limit']
    """
    env_id = env if isinstance(env, str) else None
    instance = make_env(env, **make_kwargs) if isinstance(env, str) else env
    if not isinstance(instance, GraphNavEnv):
        raise EnvCheckError(
            f"check_env checks graph navigation environments (GraphNavEnv), got "
            f"{type(instance).__name__}"
        )
    checks: list[tuple[str, Callable[[GraphNavEnv, list[str]], None]]] = [
        ("api", _check_api),
        ("actions", _check_actions),
        ("step limit", _check_limit),
        ("determinism", _check_determinism),
        ("information boundary", _check_boundary),
        ("privileged channel and protocol", _check_privileged),
    ]
    problems: list[str] = []
    for name, check in checks:
        before = len(problems)
        try:
            check(instance, problems)
        except Exception as exc:  # noqa: BLE001 - a crash is a failed check, reported as such
            problems.append(f"crashed with {type(exc).__name__}: {exc}")
        problems[before:] = [f"{name}: {p}" for p in problems[before:]]
    ran = [name for name, _ in checks]
    if env_id is not None:
        _check_vector(env_id, lambda i, **kw: make_env(i, **{**make_kwargs, **kw}), problems)
        ran.append("vectorised form")
    if problems:
        raise EnvCheckError("environment check failed:\n" + "\n".join(f"  - {p}" for p in problems))
    return ran
