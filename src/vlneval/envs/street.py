"""The street environment: Touchdown navigation on the StreetLearn graph, no ground truth leaked.

Gymnasium's contract, as :class:`~vlneval.envs.graph_env.GraphNavEnv`: ``reset(*, seed=None,
options=None) -> (observation, info)``, ``step(action) -> (observation, 0.0, terminated,
truncated, info)``. Actions (:mod:`vlneval.envs.street_moves`): ``0`` STOP, ``1`` FORWARD,
``-1`` TURN_LEFT, ``-2`` TURN_RIGHT. Observations hold:

- ``instruction``: the route's ``navigation_text``;
- ``panorama``: the current panorama id; ``heading``: degrees clockwise from north (0..359);
- ``links``: the outgoing links, :class:`StreetLink` (panorama, heading, relative heading in
  −180..180), sorted by relative heading;
- ``candidates``: ``(here, where FORWARD leads)`` (only ``(here,)`` when FORWARD cannot move),
  so agents written for the graph environment's convention (0 STOP, 1 forward) run unchanged;
- ``step``: actions taken so far.

The route and the goal stay on the scorer's side; ``privileged=True`` builds
:class:`~vlneval.envs.street_teacher.StreetTeacher`. The executed trajectory is the sequence of
panoramas occupied (the start included, a panorama recorded each time the agent moves), the
Touchdown prediction format ``{"route_id": int, "trajectory": [panoid, ...]}``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from vlneval.data.episodes import EpisodeTable
from vlneval.envs.privileged import PrivilegeError
from vlneval.envs.spaces import STOP, InvalidActionError
from vlneval.envs.street_moves import STREET_ACTIONS, link_table, street_transition
from vlneval.envs.street_teacher import StreetTeacher, StreetTeacherState
from vlneval.errors import ProblemCollector, UnknownNameError, VLNEvalError
from vlneval.graph.street import StreetGraph

__all__ = ["StreetNavEnv", "StreetLink", "DEFAULT_STREET_MAX_STEPS", "STREET_CARD"]

#: The step limit when none is given: the teacher needs at most 69 actions (turns included) on
#: the unseen-split dev routes (up to 66 panoramas); 150 leaves the baselines untruncated.
DEFAULT_STREET_MAX_STEPS = 150

STREET_CARD: dict[str, Any] = {
    "name": "street",
    "kind": "street graph, Touchdown's simulator actions (lil-lab/touchdown base_navigator.py)",
    "actions": ["STOP (0)", "FORWARD (1)", "TURN_LEFT (-1)", "TURN_RIGHT (-2)"],
    "forward": "along the outgoing link closest to the heading (the simulator needs an exact "
    "match and otherwise only turns; the two agree after the first action), then face the next "
    "panorama's link closest to that link's heading",
    "turn": "face the next outgoing link counter-clockwise / clockwise",
    "border": "a move onto, or a turn at, a panorama with fewer than 2 outgoing links is refused, as in "
    "the simulator",
    "start_heading": "the route's start_heading, truncated to whole degrees (map2seq)",
}


class StreetLink(NamedTuple):
    """An outgoing link as the agent sees it."""

    panorama: str
    heading: int
    relative_heading: int


def _relative(heading: int, current: int) -> int:
    return (heading - current + 180) % 360 - 180


def _check_routes(graph: StreetGraph, episodes: EpisodeTable) -> list[tuple[int, ...]]:
    pc = ProblemCollector(episodes.source)
    routes: list[tuple[int, ...]] = []
    for eid, path in zip(episodes.ids, episodes.paths, strict=True):
        nodes = tuple(graph.index.get(p, -1) for p in path)
        if -1 in nodes:
            j = nodes.index(-1)
            pc.add(graph.describe_missing(path[j]), episode=f'route_id "{eid}"',
                   field=f"route_panoids[{j}]")  # fmt: skip
        routes.append(nodes)
    pc.raise_if_any()
    return routes


class StreetNavEnv:
    """One agent on the Touchdown street graph, one route at a time.

    Args:
        episodes: the routes (an :class:`EpisodeTable` from
            :func:`~vlneval.data.touchdown.load_touchdown`).
        graphs: the :class:`StreetGraph` (or its folder).
        max_steps: the step limit (default :data:`DEFAULT_STREET_MAX_STEPS`).
        privileged: create the privileged channel (:meth:`privileged`).
        seed: seeds :attr:`np_random`, which picks the route when ``reset`` is not told one.

    Example:
        >>> import numpy as np
        >>> from vlneval.graph.street import parse_street_graph
        >>> g = parse_street_graph([f"{p},0,40,-73" for p in "abc"],
        ...     ["a,90,b", "a,270,c", "b,270,a", "b,90,c", "c,90,a", "c,270,b"])
        >>> t = EpisodeTable("touchdown", "dev", "x", "route_id", ["7"], ["nyc"], [("a", "b")],
        ...                  [("b",)], np.array([0.0]), ["go east"])
        >>> env = StreetNavEnv(t, g)
        >>> obs, info = env.reset(options={"episode": 0})
        >>> obs["panorama"], obs["heading"], [tuple(k) for k in obs["links"]]
        ('a', 0, [('c', 270, -90), ('b', 90, 90)])
        >>> obs, reward, terminated, truncated, info = env.step(-2)  # turn right: face b
        >>> obs["heading"], obs["candidates"]
        (90, ('a', 'b'))
        >>> _ = env.step(1), env.step(0)
        >>> env.prediction()
        {'route_id': 7, 'trajectory': ['a', 'b']}
    """

    metadata: dict[str, Any] = {"render_modes": [], "action_spaces": ("street",)}

    def __init__(
        self,
        episodes: EpisodeTable,
        graphs: StreetGraph | str,
        *,
        max_steps: int | None = None,
        privileged: bool = False,
        seed: int | None = None,
    ) -> None:
        if not isinstance(graphs, StreetGraph):
            from vlneval.graph.street import street_graph

            graphs = street_graph(graphs)
        self.graph = graphs
        self.table = link_table(graphs)
        self.max_steps = _max_steps(max_steps)
        self.task, self.split, self.id_field = episodes.task, episodes.split, episodes.id_field
        self._ids = list(episodes.ids)
        self._index = {k: i for i, k in enumerate(self._ids)}
        self._texts = list(episodes.instructions)
        self._headings = [int(round(math.degrees(float(h)), 6)) % 360 for h in episodes.headings]
        self._routes = _check_routes(graphs, episodes)  # the hidden side: never observed
        if privileged and not episodes.scorable:
            raise PrivilegeError(f"{episodes.source}: this split has no routes to teach from")
        self._privileged = bool(privileged)
        self._teacher: StreetTeacher | None = None
        self.np_random = np.random.default_rng(seed)
        self._i = -1
        self._done = True
        self._node = self._heading = self._steps = 0
        self._path: list[int] = []

    # -- Gymnasium API -------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Starts a route: ``options={"episode": index or route id}``, else one at random."""
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self._i = self._pick((options or {}).get("episode"))
        self._node = self._routes[self._i][0]
        self._heading, self._steps = self._headings[self._i], 0
        self._path = [self._node]
        self._done = False
        return self._observe(), {"steps": 0}

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Takes one action; returns ``(observation, 0.0, terminated, truncated, info)``."""
        if self._done:
            raise VLNEvalError(
                "step() called on an ended episode (or before reset()): call reset() first"
            )
        valid = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
        if not valid or int(action) not in STREET_ACTIONS:
            raise InvalidActionError(
                f"episode {self._ids[self._i]}: step {self._steps}: action {action!r} is not "
                "valid in the street action space: expected 0 (STOP), 1 (FORWARD), "
                "-1 (TURN_LEFT) or -2 (TURN_RIGHT)"
            )
        self._steps += 1
        if int(action) == STOP:
            self._done = True
            return self._observe(), 0.0, True, False, {"steps": self._steps, "stopped": True}
        node, self._heading = street_transition(self.table, self._node, self._heading, int(action))
        if node != self._node:
            self._path.append(node)
        self._node = node
        truncated = self._done = self._steps >= self.max_steps
        info: dict[str, Any] = {"steps": self._steps}
        if truncated:
            info["stopped"] = False
        return self._observe(), 0.0, False, truncated, info

    def close(self) -> None:
        """Nothing to release (Gymnasium API)."""

    # -- recording -----------------------------------------------------------------------
    def trajectory(self) -> list[str]:
        """The panoramas occupied in the current (or last) route, start first."""
        return [self.graph.ids[k] for k in self._path]

    def prediction(self) -> dict[str, Any]:
        """The current (or last) route as a Touchdown prediction record."""
        if self._i < 0:
            raise VLNEvalError("no episode has been run: call reset() first")
        eid = self._ids[self._i]
        return {self.id_field: int(eid) if eid.lstrip("-").isdigit() else eid,
                "trajectory": self.trajectory()}  # fmt: skip

    @property
    def episode_id(self) -> str | None:
        """The id of the current (or last) route."""
        return self._ids[self._i] if self._i >= 0 else None

    def __len__(self) -> int:
        return len(self._ids)

    # -- privileged channel and protocol --------------------------------------------------
    def privileged(self) -> StreetTeacher:
        """The privileged channel (route, goal, teacher actions); needs ``privileged=True``."""
        if not self._privileged:
            raise PrivilegeError(
                "this environment was built without privileged=True: the route and the goal are "
                "hidden (request them at construction; the protocol card will say so)"
            )
        if self._teacher is None:
            self._teacher = StreetTeacher(self._teacher_state)
        return self._teacher

    def protocol(self) -> dict[str, Any]:
        """The protocol card fields this environment determines (spec/protocol.md)."""
        calls = self._teacher.calls if self._teacher else 0
        return {
            "action_space": dict(STREET_CARD),
            "observations": [
                "instruction text (navigation_text)",
                "pose: panorama id, heading (degrees)",
                "outgoing links: panorama id, heading, relative heading",
            ],
            "map": "given: the Touchdown street graph (nodes.txt, links.txt); no map is built",
            "privileged": (
                "route, goal, hop distance and teacher actions through env.privileged(), "
                f"requested at construction ({calls} calls)"
                if self._privileged
                else "none"
            ),
            "inference_budget": {
                "max_steps": self.max_steps,
                "stop_counts_as_step": True,
                "search": "none: one rollout per episode",
                "backtracking": "allowed, and recorded in the executed path",
            },
            "executed_path": "full: every panorama the agent occupied, in order (turns in place "
            "add none), recorded by the environment",
        }

    # -- internals -----------------------------------------------------------------------
    def _pick(self, episode: Any) -> int:
        if episode is None:
            return int(self.np_random.integers(len(self._ids)))
        if isinstance(episode, str):
            if episode not in self._index:
                raise UnknownNameError("route", episode, self._ids if len(self._ids) <= 30 else [])
            return self._index[episode]
        integer = isinstance(episode, (int, np.integer)) and not isinstance(episode, bool)
        if integer and 0 <= int(episode) < len(self._ids):
            return int(episode)
        raise VLNEvalError(
            f"options['episode'] must be a route id or an index in 0..{len(self._ids) - 1}, "
            f"got {episode!r}"
        )

    def _observe(self) -> dict[str, Any]:
        headings, targets = self.table.links(self._node)
        ids = self.graph.ids
        links = sorted(
            (
                StreetLink(ids[t], h, _relative(h, self._heading))
                for h, t in zip(headings, targets, strict=True)
            ),
            key=lambda k: (k.relative_heading, k.heading),
        )
        here = ids[self._node]
        ahead, _ = street_transition(self.table, self._node, self._heading, 1)
        return {
            "instruction": self._texts[self._i],
            "panorama": here,
            "heading": self._heading,
            "links": tuple(links),
            "candidates": (here,) if ahead == self._node else (here, ids[ahead]),
            "step": self._steps,
        }

    def _teacher_state(self) -> StreetTeacherState:
        if self._i < 0:
            raise PrivilegeError("no episode is running: call reset() first")
        return StreetTeacherState(self.table, self._node, self._heading, self._routes[self._i])

    def __repr__(self) -> str:
        return (
            f"StreetNavEnv({self.task} {self.split}, {len(self)} routes, "
            f"max_steps={self.max_steps}, privileged={self._privileged})"
        )


def _max_steps(value: int | None) -> int:
    if value is None:
        return DEFAULT_STREET_MAX_STEPS
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise VLNEvalError(f"max_steps must be a positive integer, got {value!r}")
    return int(value)
