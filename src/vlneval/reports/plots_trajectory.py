"""Top-down plot of one episode on its navigation graph, from connectivity poses alone.

The graph is drawn in grey (viewpoints and navigable edges), the reference path as a wide
green band, the executed path with an arrowhead on every move, the start as a white disc, the
stop as a cross (green on a success, red on a failure), and every goal as a black star. The
viewpoints a stop succeeds at, those within geodesic distance δ of a goal (the success rule's
``NE < δ``), are ringed in black on a grey disc: a Euclidean disc of radius δ would take in
viewpoints behind a wall or on another floor. The executed path is blue, the first run colour; in a
comparison it is run B's orange and the baseline A's blue, as in the report's other plots
(:data:`~vlneval.reports.plots_base.RUN_COLORS`), and no run colour is used for anything else.
When the paths span several floors (:func:`vlneval.diagnostics.graph_floors`), each floor they
touch gets its own panel with that floor's graph only; a move to another floor is drawn dashed
and labelled with the floor it goes to.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from vlneval.diagnostics.floors import Floors, graph_floors
from vlneval.graph.distances import distance_table
from vlneval.graph.matterport import NavGraph
from vlneval.reports.plots_base import COLORS, RUN_COLORS, new_figure

__all__ = ["plot_episode"]

_PANEL_INCHES = 4.4
_MARGIN_M = 2.5
_MIN_SPAN_M = 14.0
#: A viewpoint within δ of a goal: a wide grey halo with a thin black rim under the
#: graph's node dot, unlike the start's small white disc with its thick black rim.
_WITHIN: dict[str, Any] = {
    "marker": "o",
    "color": COLORS["goal_fill"],
    "markeredgecolor": COLORS["goal_edge"],
    "markeredgewidth": 0.5,
    "markersize": 13,
    "alpha": 0.8,
}
#: Line width, opacity and drawing order of each path: the reference under the baseline under
#: the executed path.
_PATH_STYLE = {"reference": (7.0, 0.35, 3), "baseline": (1.4, 0.9, 4), "executed": (1.7, 0.95, 5)}
#: A jump, a move between viewpoints that share no graph edge (scored by profiles without the
#: adjacency check): dash-dotted, unlike a graph edge (solid) and a move to another floor (dashed).
_JUMP = (0, (3, 1.5, 1, 1.5))
#: Where each path's labels ("to floor 2", "jump") sit, in points from the viewpoint.
_NOTE_OFFSET = {"reference": (4, 5), "baseline": (4, -19), "executed": (4, -11)}


def plot_episode(
    graph: NavGraph,
    *,
    reference: ArrayLike,
    trajectory: ArrayLike,
    goals: ArrayLike,
    threshold: float,
    success: bool | None = None,
    floors: Floors | None = None,
    title: str | None = None,
    baseline: ArrayLike | None = None,
    labels: tuple[str, str] = ("executed path", "baseline path"),
    compared: bool = False,
) -> Any:
    """A figure of one episode (one panel per floor the paths touch).

    Args:
        graph: the scan's navigation graph.
        reference: node indices of the reference path, start first.
        trajectory: node indices of the executed path, start first.
        goals: node indices of the goal viewpoints.
        threshold: δ, the success radius in metres (geodesic, as the success rule measures).
        success: colours the stop marker (green / red); None for neutral.
        floors: the scan's floors (computed from the graph when None).
        title: the figure's title.
        baseline: node indices of another run's path on the same episode (drawn dashed, without
            arrows, in run A's colour), e.g. the baseline of a comparison.
        labels: legend labels of the executed path and of ``baseline``.
        compared: the executed path is run B of a comparison: it gets B's colour even when
            this episode has no ``baseline`` path (implied by ``baseline``).

    Returns:
        A ``matplotlib.figure.Figure``.

    Example:
        >>> from vlneval.graph.matterport import parse_connectivity
        >>> eye = lambda x, y: [1, 0, 0, x, 0, 1, 0, y, 0, 0, 1, 1.5, 0, 0, 0, 1]
        >>> pts = [(0, 0), (4, 0), (4, 4), (0, 4)]
        >>> recs = [{"image_id": str(k), "pose": eye(*p), "included": True,
        ...          "unobstructed": [abs(j - k) in (1, 3) for j in range(4)]}
        ...         for k, p in enumerate(pts)]
        >>> g = parse_connectivity(recs, scan="sq")
        >>> fig = plot_episode(g, reference=[0, 1, 2], trajectory=[0, 3, 2], goals=[2],
        ...                    threshold=3.0, success=True, title="toy")
        >>> len(fig.axes)
        1
        >>> [t.get_text() for t in fig.legends[0].get_texts()][2:4]
        ['goal', 'within δ = 3 m (geodesic)']
    """
    floors = floors if floors is not None else graph_floors(graph)
    compared = compared or baseline is not None
    colors = {
        "reference": COLORS["reference"],
        "baseline": RUN_COLORS[0],
        "executed": RUN_COLORS[1] if compared else COLORS["executed"],
    }
    ref = np.asarray(reference, dtype=np.int64)
    traj = np.asarray(trajectory, dtype=np.int64)
    goal = np.asarray(goals, dtype=np.int64)
    other = np.asarray(baseline if baseline is not None else [], dtype=np.int64)
    touched = np.concatenate([ref, traj, goal, other])
    shown = sorted({int(f) for f in floors.of_node[touched]}) if touched.size else [0]
    top = 0.35 if title else 0.1
    height = _PANEL_INCHES + 0.55 + top
    fig = new_figure(_PANEL_INCHES * len(shown), height)
    axes = fig.subplots(1, len(shown), squeeze=False)[0]
    fig.subplots_adjust(
        left=0.13 / len(shown),
        right=1 - 0.02 / len(shown),
        bottom=0.9 / height,
        top=1 - (top + 0.25) / height,
        wspace=0.22,
    )
    within = distance_table(graph)[goal].min(axis=0, initial=np.inf) < threshold
    for ax, floor in zip(axes, shown, strict=True):
        on = floors.of_node == floor
        span = _frame(ax, graph, on, touched)
        _draw_graph(ax, graph, on)
        _draw_goals(ax, graph, goal[on[goal]], within & on)
        for kind, path in (("reference", ref), ("baseline", other), ("executed", traj)):
            _draw_path(ax, graph, path, on, floors, kind=kind, span=span, color=colors[kind])
        _draw_ends(ax, graph, traj, on, _stop_color(success, colors["executed"]))
        if floors.count > 1:
            elevation = round(float(floors.elevations[floor]), 1) + 0.0  # no "-0.0"
            ax.set_title(
                f"floor {floor + 1} of {floors.count} (elevation {elevation:+.1f} m)",
                fontsize=8.5,
                color=COLORS["neutral"],
            )
    if title:
        fig.suptitle(title, fontsize=9.5, x=0.02, y=1 - 0.1 / height, ha="left", va="top")
    jumps = any((~graph.adjacency()[m[:, 0], m[:, 1]]).any() for m in map(_moves, (traj, other)))
    shown_labels = labels if baseline is not None else (labels[0], None)
    _legend(fig, threshold, success, shown_labels, colors, jumps=jumps)
    return fig


def _draw_graph(ax: Any, graph: NavGraph, on: np.ndarray) -> None:
    from matplotlib.collections import LineCollection  # deferred: matplotlib

    xy = graph.positions[:, :2]
    e = graph.edges
    keep = on[e[:, 0]] & on[e[:, 1]]
    segments = list(np.stack([xy[e[keep, 0]], xy[e[keep, 1]]], axis=1))
    ax.add_collection(
        LineCollection(segments, colors=COLORS["graph_edge"], linewidths=0.7, zorder=1),
        autolim=False,
    )
    ax.scatter(xy[on, 0], xy[on, 1], s=7, color=COLORS["graph_node"], zorder=2, linewidths=0)


def _draw_goals(ax: Any, graph: NavGraph, goals: np.ndarray, within: np.ndarray) -> None:
    """The goals' stars and the viewpoints ``within`` δ of a goal (on this floor)."""
    xy = graph.positions[within, :2]
    ax.plot(xy[:, 0], xy[:, 1], linestyle="", zorder=1.5, **_WITHIN)
    xy = graph.positions[goals, :2]
    ax.scatter(xy[:, 0], xy[:, 1], marker="*", s=110, color=COLORS["goal_edge"], zorder=6,
               linewidths=0)  # fmt: skip


def _moves(path: np.ndarray) -> np.ndarray:
    """Consecutive pairs of a path with a change of viewpoint (turns in place are dropped)."""
    if path.size < 2:
        return np.zeros((0, 2), dtype=np.int64)
    pairs = np.stack([path[:-1], path[1:]], axis=1)
    return pairs[pairs[:, 0] != pairs[:, 1]]


def _draw_path(
    ax: Any,
    graph: NavGraph,
    path: np.ndarray,
    on: np.ndarray,
    floors: Floors,
    *,
    kind: str,
    span: float,
    color: str,
) -> None:
    """One path's moves on this floor: graph edges solid (the baseline dashed), moves to another
    floor dashed and labelled, jumps (between viewpoints that share no edge) dash-dotted and
    labelled; the baseline's stop as a cross on the floor of its last viewpoint."""
    from matplotlib.collections import LineCollection  # deferred: matplotlib

    xy = graph.positions[:, :2]
    moves = _moves(path)
    a, b = on[moves[:, 0]], on[moves[:, 1]]
    jump = ~graph.adjacency()[moves[:, 0], moves[:, 1]]
    width, alpha, zorder = _PATH_STYLE[kind]
    style: dict[str, Any] = {"colors": color, "linewidths": width, "alpha": alpha, "zorder": zorder}
    edge = "solid" if kind != "baseline" else (0, (4, 2))
    for keep, dashes in ((a & b & ~jump, edge), ((a != b) & ~jump, "--"), ((a | b) & jump, _JUMP)):
        if not keep.any():
            continue
        segments = list(np.stack([xy[moves[keep, 0]], xy[moves[keep, 1]]], axis=1))
        ax.add_collection(
            LineCollection(segments, capstyle="round", linestyles=dashes, **style), autolim=False
        )
    for (i, j), hop in zip(moves[a != b].tolist(), jump[a != b].tolist(), strict=True):
        other = j if on[i] else i
        text = f"{'jump ' if hop else ''}to floor {int(floors.of_node[other]) + 1}"
        _note(ax, xy[other], text, kind, color)
    for i, j in moves[a & b & jump].tolist():
        _note(ax, (xy[i] + xy[j]) / 2, "jump", kind, color)
    if kind == "baseline" and path.size and on[int(path[-1])]:
        # above the start disc (8), so that a baseline that never moved shows its stop there
        ax.scatter(*xy[int(path[-1])], s=40, marker="X", color=color, zorder=8.5, linewidths=0)
    if kind == "executed" and (a & b).any():
        _arrows(ax, xy, moves[a & b], size=0.035 * span, color=color)


def _note(ax: Any, at: np.ndarray, text: str, kind: str, color: str) -> None:
    """A small label beside a move, placed per path so two paths' labels do not overlap, and
    to the left of a point in the right half so that it stays inside the figure."""
    dx, dy = _NOTE_OFFSET[kind]
    left = at[0] > sum(ax.get_xlim()) / 2
    ax.annotate(text, at, xytext=(-dx if left else dx, dy), textcoords="offset points",
                ha="right" if left else "left", fontsize=7, color=color, zorder=7)  # fmt: skip


def _arrows(ax: Any, xy: np.ndarray, moves: np.ndarray, *, size: float, color: str) -> None:
    """An arrowhead of ``size`` metres at the middle of every move, pointing forward."""
    start, end = xy[moves[:, 0]], xy[moves[:, 1]]
    delta = end - start
    length = np.linalg.norm(delta, axis=1, keepdims=True)
    unit = delta / np.where(length > 0, length, 1.0)
    mid = (start + end) / 2 - unit * size / 2
    ax.quiver(
        mid[:, 0],
        mid[:, 1],
        unit[:, 0] * size,
        unit[:, 1] * size,
        angles="xy",
        scale_units="xy",
        scale=1,
        color=color,
        width=0.005,
        headwidth=5,
        headlength=6,
        headaxislength=5.5,
        zorder=6,
    )


def _draw_ends(ax: Any, graph: NavGraph, traj: np.ndarray, on: np.ndarray, stop: str) -> None:
    if traj.size == 0:
        return
    xy = graph.positions[:, :2]
    first, last = int(traj[0]), int(traj[-1])
    if on[first]:
        ax.scatter(
            *xy[first], s=55, color=COLORS["start"], edgecolors="#212529", linewidths=1.4, zorder=8
        )
    if on[last]:
        ax.scatter(
            *xy[last], s=75, marker="X", color=stop, edgecolors="white", linewidths=0.8, zorder=9
        )


def _stop_color(success: bool | None, path: str) -> str:
    """Green on a success, red on a failure, the path's colour when unknown."""
    return {True: COLORS["success"], False: COLORS["fail"], None: path}[success]


def _frame(ax: Any, graph: NavGraph, on: np.ndarray, touched: np.ndarray) -> float:
    """A square window around the paths and goals on this floor; returns its span (m)."""
    nodes = touched[on[touched]] if touched.size else np.flatnonzero(on)
    if nodes.size == 0:
        nodes = np.flatnonzero(on)
    xy = graph.positions[nodes, :2]
    lo, hi = xy.min(axis=0) - _MARGIN_M, xy.max(axis=0) + _MARGIN_M
    centre, half = (lo + hi) / 2, max((hi - lo).max(), _MIN_SPAN_M) / 2
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_aspect("equal")
    ax.tick_params(length=2, colors="#868e96")
    ax.set_xlabel("x (m)", color="#868e96", fontsize=7.5)
    ax.set_ylabel("y (m)", color="#868e96", fontsize=7.5)
    return float(2 * half)


def _legend(
    fig: Any,
    threshold: float,
    success: bool | None,
    labels: tuple[str, str | None],
    colors: dict[str, str],
    *,
    jumps: bool,
) -> None:
    from matplotlib.lines import Line2D  # deferred: matplotlib

    handles = [
        Line2D([], [], color=COLORS["reference"], linewidth=7, alpha=0.35, label="reference path"),
        Line2D([], [], color=colors["executed"], linewidth=1.7, label=labels[0]),
        Line2D([], [], marker="*", linestyle="", color=COLORS["goal_edge"], markersize=9,
               label="goal"),
        Line2D([], [], linestyle="", label=f"within δ = {threshold:g} m (geodesic)",
               **_WITHIN),
        Line2D([], [], marker="o", linestyle="", markerfacecolor="white",
               markeredgecolor="#212529", label="start"),
        Line2D([], [], marker="X", linestyle="", color=_stop_color(success, colors["executed"]),
               label="stop"),
    ]  # fmt: skip
    if labels[1] is not None:
        handles.insert(2, Line2D([], [], color=colors["baseline"], linewidth=1.4, linestyle="--",
                                 marker="X", markersize=5, label=labels[1]))  # fmt: skip
    if jumps:
        handles.append(Line2D([], [], color=COLORS["neutral"], linewidth=1.4, linestyle=_JUMP,
                              label="jump (no edge)"))  # fmt: skip
    fig.legend(handles=handles, loc="lower center", ncols=3, fontsize=7, handlelength=1.6)
