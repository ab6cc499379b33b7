"""The privileged channel of the street environment: the route, the goal and teacher actions.

The teacher is Touchdown's gold-path teacher (``_get_gt_action`` of map2seq's ``vln/env.py``, as
in VLN-Transformer): on the reference route it heads for the route's next panorama (FORWARD when
FORWARD takes its link, which with the heading on a link means facing it exactly, else the
shorter turn: RIGHT when the link is less than 180° clockwise, otherwise LEFT) and stops at the route's end; off the route it takes a shortest path along
outgoing links to the goal. Following it reproduces the route, so TC = 1 and SED = 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vlneval.envs.core import PrivilegeError
from vlneval.envs.spaces import STOP, TURN_LEFT, TURN_RIGHT
from vlneval.envs.street.moves import FORWARD, LinkTable, nearest_heading

__all__ = ["StreetTeacher", "StreetTeacherState", "street_teacher_action"]


@dataclass(frozen=True)
class StreetTeacherState:
    """Where the agent is, with its route (built on demand, never observed)."""

    table: LinkTable
    node: int
    heading: int
    route: tuple[int, ...]


def _directed_hops_to(table: LinkTable, goal: int) -> np.ndarray:
    """Hops from every node to ``goal`` along outgoing links (``inf`` when it cannot)."""
    from scipy.sparse import csr_matrix  # deferred: scipy
    from scipy.sparse.csgraph import shortest_path  # deferred: scipy

    n = table.graph.n
    src = np.repeat(np.arange(n), np.diff(table.ptr))
    reverse = csr_matrix((np.ones(len(src)), (table.dst, src)), shape=(n, n))
    return np.asarray(shortest_path(reverse, indices=goal, unweighted=True))


def _next_node(s: StreetTeacherState, cache: dict[int, np.ndarray]) -> int:
    """The next panorama to head for, or −1 at the goal."""
    route = s.route
    if s.node in route:
        k = route.index(s.node)
        return -1 if k == len(route) - 1 else route[k + 1]
    goal = route[-1]
    if goal not in cache:
        cache[goal] = _directed_hops_to(s.table, goal)
    hops = cache[goal]
    _, targets = s.table.links(s.node)
    reachable = [t for t in targets if math.isfinite(hops[t])]
    if not reachable:
        raise PrivilegeError(
            f"the goal {s.table.graph.ids[goal]} cannot be reached from panorama "
            f"{s.table.graph.ids[s.node]} along street-graph links"
        )
    return min(reachable, key=lambda t: hops[t])


def street_teacher_action(s: StreetTeacherState, cache: dict[int, np.ndarray]) -> int:
    """The teacher's action at ``s`` (module docstring).

    Example:
        >>> from vlneval.graph.street import parse_street_graph
        >>> from vlneval.envs.street.moves import link_table
        >>> g = parse_street_graph([f"{p},0,40,-73" for p in "abc"],
        ...                        ["a,90,b", "a,270,c", "b,270,a", "b,90,c", "c,90,a", "c,270,b"])
        >>> t = link_table(g)
        >>> [street_teacher_action(StreetTeacherState(t, 0, h, (0, 1)), {}) for h in (90, 80, 300, 200)]
        [1, 1, -2, -1]
        >>> street_teacher_action(StreetTeacherState(t, 1, 90, (0, 1)), {})
        0
    """
    nxt = _next_node(s, cache)
    if nxt < 0:
        return STOP
    headings, targets = s.table.links(s.node)
    if nxt not in targets:
        raise PrivilegeError(
            f"the route goes from panorama {s.table.graph.ids[s.node]} to "
            f"{s.table.graph.ids[nxt]}, which no street-graph link joins"
        )
    k = targets.index(nxt)
    if nearest_heading(headings, s.heading) == k:
        return FORWARD
    delta = (headings[k] - s.heading) % 360
    return TURN_RIGHT if delta < 180 else TURN_LEFT


class StreetTeacher:
    """The privileged channel of one street episode; every call is counted (``calls``)."""

    def __init__(self, state: Callable[[], StreetTeacherState]) -> None:
        self._state = state
        self._cache: dict[int, np.ndarray] = {}
        self.calls = 0

    def goals(self) -> tuple[str, ...]:
        """The goal panorama (the route's last)."""
        self.calls += 1
        s = self._state()
        return (s.table.graph.ids[s.route[-1]],)

    def reference_path(self) -> tuple[str, ...]:
        """The route's panoramas."""
        self.calls += 1
        s = self._state()
        return tuple(s.table.graph.ids[k] for k in s.route)

    def distance_to_goal(self) -> float:
        """Hops to the goal on the undirected street graph (SPD's distance), read from the
        goal's cached row of hop counts: one search per goal, not one per step."""
        self.calls += 1
        s = self._state()
        return float(s.table.graph.hops_from(s.route[-1])[s.node])

    def next_viewpoint(self) -> str | None:
        """The next panorama the teacher heads for (None at the goal)."""
        self.calls += 1
        s = self._state()
        nxt = _next_node(s, self._cache)
        return None if nxt < 0 else s.table.graph.ids[nxt]

    def action(self) -> int:
        """The teacher's action."""
        self.calls += 1
        return street_teacher_action(self._state(), self._cache)
