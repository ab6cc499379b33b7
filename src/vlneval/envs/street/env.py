"""The street environment: Touchdown navigation on the StreetLearn graph, no ground truth leaked.

The contract of :mod:`vlneval.envs.core`. Actions (:mod:`vlneval.envs.street.moves`): ``0`` STOP, ``1`` FORWARD,
``-1`` TURN_LEFT, ``-2`` TURN_RIGHT. Observations hold:

- ``instruction``: the route's ``navigation_text``;
- ``panorama``: the current panorama id; ``heading``: degrees clockwise from north (0..359);
- ``links``: the outgoing links, :class:`StreetLink` (panorama, heading, relative heading in
  −180..180), sorted by relative heading;
- ``candidates``: ``(here, where FORWARD leads)`` (only ``(here,)`` when FORWARD cannot move),
  so agents written for the graph environment's convention (0 STOP, 1 forward) run unchanged;
- ``step``: actions taken so far.

The route and the goal stay on the scorer's side; ``privileged=True`` builds
:class:`~vlneval.envs.street.teacher.StreetTeacher`. The executed trajectory is the sequence of
panoramas occupied (the start included, a panorama recorded each time the agent moves), the
Touchdown prediction format ``{"route_id": int, "trajectory": [panoid, ...]}``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from vlneval.envs.core import EpisodeEnv, PrivilegeError, budget_card
from vlneval.envs.spaces import STOP
from vlneval.envs.street.moves import STREET_ACTIONS, link_table, street_transition
from vlneval.envs.street.teacher import StreetTeacher, StreetTeacherState
from vlneval.errors import InvalidActionError, ProblemCollector
from vlneval.graph.street import StreetGraph, street_graph
from vlneval.tasks.common.episodes import EpisodeTable

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
    for i, path in enumerate(episodes.paths):
        nodes = tuple(graph.index.get(p, -1) for p in path)
        if -1 in nodes:
            j = nodes.index(-1)
            pc.add(graph.describe_missing(path[j]), episode=episodes.label(i),
                   field=f"route_panoids[{j}]")  # fmt: skip
        routes.append(nodes)
    pc.raise_if_any()
    return routes


class StreetNavEnv(EpisodeEnv[StreetTeacher]):
    """One agent on the Touchdown street graph, one route at a time.

    Args:
        episodes: the routes (an :class:`EpisodeTable` from
            :func:`~vlneval.tasks.touchdown.format.load_touchdown`).
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
    noun = "route"
    hidden = "the route and the goal are hidden"
    gives = "route, goal, hop distance and teacher actions"

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
            graphs = street_graph(graphs)
        self.graph = graphs
        self.table = link_table(graphs)
        self.task, self.split, self.id_field = episodes.task, episodes.split, episodes.id_field
        self._texts = list(episodes.instructions)
        self._headings = [int(round(math.degrees(float(h)), 6)) % 360 for h in episodes.headings]
        self._routes = _check_routes(graphs, episodes)  # the hidden side: never observed
        self._setup(
            episodes.ids,
            max_steps=max_steps,
            default_steps=DEFAULT_STREET_MAX_STEPS,
            privileged=privileged,
            scorable=episodes.scorable,
            source=episodes.source,
            seed=seed,
        )
        self._node = self._heading = 0
        self._path: list[int] = []

    # -- Gymnasium API -------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Starts a route: ``options={"episode": index or route id}``, else one at random."""
        i = self._begin(seed, options)
        self._node, self._heading = self._routes[i][0], self._headings[i]
        self._path = [self._node]
        return self._observe(), {"steps": 0}

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Takes one action; returns ``(observation, 0.0, terminated, truncated, info)``."""
        self._check_running()
        valid = isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_))
        if not valid or int(action) not in STREET_ACTIONS:
            raise InvalidActionError(
                f"episode {self._ids[self._i]}: step {self._steps}: action {action!r} is not "
                "valid in the street action space: expected 0 (STOP), 1 (FORWARD), "
                "-1 (TURN_LEFT) or -2 (TURN_RIGHT)"
            )
        if int(action) != STOP:
            node, self._heading = street_transition(
                self.table, self._node, self._heading, int(action)
            )
            if node != self._node:
                self._path.append(node)
            self._node = node
        terminated, truncated, info = self._count_step(stopped=int(action) == STOP)
        return self._observe(), 0.0, terminated, truncated, info

    # -- recording -----------------------------------------------------------------------
    def trajectory(self) -> list[str]:
        """The panoramas occupied in the current (or last) route, start first."""
        return [self.graph.ids[k] for k in self._path]

    def prediction(self) -> dict[str, Any]:
        """The current (or last) route as a Touchdown prediction record."""
        self._check_ran()
        eid = self._ids[self._i]
        return {self.id_field: int(eid) if eid.lstrip("-").isdigit() else eid,
                "trajectory": self.trajectory()}  # fmt: skip

    # -- privileged channel and protocol --------------------------------------------------
    def _make_teacher(self) -> StreetTeacher:
        return StreetTeacher(self._teacher_state)

    def protocol(self) -> dict[str, Any]:
        """The protocol card fields this environment determines (spec/protocol.md)."""
        return {
            "action_space": dict(STREET_CARD),
            "observations": [
                "instruction text (navigation_text)",
                "pose: panorama id, heading (degrees)",
                "outgoing links: panorama id, heading, relative heading",
            ],
            "map": "given: the Touchdown street graph (nodes.txt, links.txt); no map is built",
            "privileged": self._privileged_card(),
            "inference_budget": budget_card(
                self.max_steps, backtracking="allowed, and recorded in the executed path"
            ),
            "executed_path": "full: every panorama the agent occupied, in order (turns in place "
            "add none), recorded by the environment",
        }

    # -- internals -----------------------------------------------------------------------
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
