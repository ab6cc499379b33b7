"""Touchdown's street actions on a :class:`~vlneval.graph.street.StreetGraph`.

The state is ``(panorama, heading)``, the heading in whole degrees clockwise from north, as the
Touchdown simulator keeps it (``base_navigator.py`` of lil-lab/touchdown, unchanged in
VLN-Transformer and map2seq). Actions:

- ``FORWARD`` (1): move along the outgoing link whose heading is closest to the current heading
  (the simulator requires an exact match and otherwise stays put, turning to the closest link;
  both agree whenever the heading is a link's, which it is after any action), then face the
  next panorama's outgoing link closest to that link's heading;
- ``TURN_LEFT`` (−1) / ``TURN_RIGHT`` (−2): stay, and face the next outgoing link
  counter-clockwise / clockwise (the current heading itself excluded);
- ``STOP`` (0).

As in the simulator, a move or turn that would leave the agent on a panorama with fewer than
two outgoing links (the graph's border) is refused: the state does not change.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from vlneval.envs.spaces import STOP, TURN_LEFT, TURN_RIGHT
from vlneval.graph.street import StreetGraph

__all__ = [
    "FORWARD",
    "STREET_ACTIONS",
    "LinkTable",
    "link_table",
    "street_transition",
    "angle",
    "nearest_heading",
]

FORWARD = 1
STREET_ACTIONS = (STOP, FORWARD, TURN_LEFT, TURN_RIGHT)


def angle(a: int, b: int) -> int:
    """Unsigned angle between two headings in degrees, in 0..180.

    Example:
        >>> angle(350, 10), angle(90, 270), angle(0, 0)
        (20, 180, 0)
    """
    return 180 - abs(abs(a - b) % 360 - 180)


@dataclass(frozen=True)
class LinkTable:
    """The outgoing links of every panorama, in ``links.txt`` order (CSR).

    Attributes:
        ptr: ``(n + 1,)`` offsets; links of node ``i`` are ``ptr[i]:ptr[i + 1]``.
        dst: target node of each link.
        heading: heading of each link in degrees (0..359).
    """

    graph: StreetGraph
    ptr: np.ndarray
    dst: np.ndarray
    heading: np.ndarray

    def links(self, node: int) -> tuple[list[int], list[int]]:
        """``(headings, targets)`` of ``node``'s outgoing links, file order."""
        a, b = int(self.ptr[node]), int(self.ptr[node + 1])
        return self.heading[a:b].tolist(), self.dst[a:b].tolist()

    def out_degree(self, node: int) -> int:
        """Number of outgoing links of ``node``."""
        return int(self.ptr[node + 1] - self.ptr[node])


_TABLES: weakref.WeakKeyDictionary[StreetGraph, LinkTable] = weakref.WeakKeyDictionary()


def link_table(graph: StreetGraph) -> LinkTable:
    """The :class:`LinkTable` of ``graph``, built once per graph object.

    Example:
        >>> from vlneval.graph.street import parse_street_graph
        >>> g = parse_street_graph(["a,0,40,-73", "b,0,40,-73"], ["b,180,a", "a,0,b"])
        >>> link_table(g).links(0), link_table(g).links(1)
        (([0], [1]), ([180], [0]))
    """
    hit = _TABLES.get(graph)
    if hit is None:
        order = np.argsort(graph.link_src, kind="stable")
        ptr = np.zeros(graph.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(graph.link_src, minlength=graph.n), out=ptr[1:])
        hit = LinkTable(
            graph,
            ptr,
            graph.link_dst[order].astype(np.int64),
            graph.link_heading[order].astype(np.int64) % 360,
        )
        _TABLES[graph] = hit
    return hit


def nearest_heading(headings: list[int], target: int) -> int:
    """Index of the heading closest to ``target`` (the first on ties, as the simulator).

    Example:
        >>> nearest_heading([90, 270, 350], 0), nearest_heading([90, 270], 180)
        (2, 0)
    """
    best, best_diff = -1, 1000
    for k, h in enumerate(headings):
        d = angle(h, target)
        if d < best_diff:
            best, best_diff = k, d
    return best


def _turn(headings: list[int], current: int, right: bool) -> int:
    best, best_diff = current, 1000
    for h in headings:
        if h == current:
            continue
        d = (h - current) % 360 if right else (current - h) % 360
        if d < best_diff:
            best, best_diff = h, d
    return best


def street_transition(table: LinkTable, node: int, heading: int, action: int) -> tuple[int, int]:
    """The state after the non-STOP ``action`` (module docstring).

    Example (a crossing ``c`` with links north, east and south; ``n`` and ``s`` continue):
        >>> from vlneval.graph.street import parse_street_graph
        >>> g = parse_street_graph([f"{p},0,40,-73" for p in "cnesx"],
        ...     ["c,0,n", "c,90,e", "c,180,s", "n,180,c", "n,10,x", "e,270,c", "e,95,x",
        ...      "s,0,c", "s,190,x", "x,0,c"])
        >>> t = link_table(g)
        >>> street_transition(t, 0, 80, FORWARD)  # the 90 link is closest; face e's link nearest 90
        (2, 95)
        >>> street_transition(t, 0, 90, TURN_LEFT), street_transition(t, 0, 90, TURN_RIGHT)
        ((0, 0), (0, 180))
        >>> street_transition(t, 0, 0, FORWARD), street_transition(t, 2, 95, FORWARD)  # x: border
        ((1, 10), (2, 95))
    """
    headings, targets = table.links(node)
    if action == FORWARD:
        if not headings:
            return node, heading
        k = nearest_heading(headings, heading)
        nxt = targets[k]
        if table.out_degree(nxt) < 2:
            return node, heading
        onward, _ = table.links(nxt)
        return nxt, onward[nearest_heading(onward, headings[k])]
    if action in (TURN_LEFT, TURN_RIGHT):
        if len(headings) < 2:
            return node, heading
        return node, _turn(headings, heading, action == TURN_RIGHT)
    raise ValueError(f"not a street move: {action}")
