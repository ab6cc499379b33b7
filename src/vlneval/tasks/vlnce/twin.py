"""Continuous twins of graph episodes (R2R): the same start, heading, goal and reference
route, as positions in the twin world of the building (:mod:`vlneval.continuous.twin`)."""

from __future__ import annotations

import math

import numpy as np

from vlneval.continuous.navgraph import floor_points
from vlneval.continuous.twin import DENSE_SPACING, densify
from vlneval.graph.store import GraphStore
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.vlnce.format import ContinuousEpisodes, _ragged

__all__ = ["twin_episodes"]


def twin_episodes(
    episodes: EpisodeTable,
    store: GraphStore,
    *,
    spacing: float = DENSE_SPACING,
    task: str | None = None,
) -> ContinuousEpisodes:
    """The continuous twins of graph episodes, in the world frame.

    Start and goal are the floor points of the first and last viewpoint of the reference path
    (the goal is the last of the episode's goals); the dense reference interpolates the
    reference viewpoints every ``spacing`` metres. ``shortest`` is left NaN: the scorer takes
    the start-goal distance from the twin world.
    """
    ids, scans, starts, goals, refs, dense = [], [], [], [], [], []
    for i in range(len(episodes)):
        g = store.graph(episodes.scans[i])
        fp = floor_points(g)
        pts = fp[[g.index[v] for v in episodes.paths[i]]]
        ids.append(episodes.ids[i])
        scans.append(episodes.scans[i])
        starts.append(pts[0])
        goals.append(fp[g.index[episodes.goals[i][-1]]])
        refs.append(pts)
        dense.append(densify(pts, spacing))
    ref, ref_off = _ragged(refs)
    den, den_off = _ragged(dense)
    n = len(ids)
    return ContinuousEpisodes(
        task or f"{episodes.task}-twin",
        episodes.split,
        episodes.source,
        episodes.id_field,
        "world",
        ids,
        list(ids),
        scans,
        list(episodes.instructions),
        np.asarray(starts).reshape(-1, 3),
        np.asarray(episodes.headings, float) % (2 * math.pi),
        np.asarray(goals).reshape(-1, 3),
        np.full(n, 3.0),
        np.full(n, np.nan),
        ref,
        ref_off,
        den,
        den_off,
    )
