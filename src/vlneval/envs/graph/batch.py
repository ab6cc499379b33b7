"""Array forms for the vectorised environment: flat candidate tables and batch observations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vlneval.envs.graph.world import GraphWorld

__all__ = ["FlatTables", "BatchObservation"]


@dataclass
class FlatTables:
    """The candidate tables of several scans with global node ids (``offsets[s] + local``)."""

    scans: list[str]
    offsets: np.ndarray
    ids: list[str]
    count: np.ndarray
    node: np.ndarray
    view: np.ndarray
    rel_heading: np.ndarray
    elevation: np.ndarray
    distance: np.ndarray

    @classmethod
    def build(cls, world: GraphWorld, scans: Sequence[str], panoramic: bool) -> FlatTables:
        """Concatenates the tables of ``scans`` (panoramic or egocentric lists)."""
        tables = [world.tables(s) for s in scans]
        width = max(t.width for t in tables)
        sizes = [t.graph.n for t in tables]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        columns: list[list[np.ndarray]] = [[] for _ in range(6)]
        for t, off in zip(tables, offsets[:-1], strict=False):
            if panoramic:
                c, n, v = t.pano_count, t.pano_node, t.pano_view
                h, e, d = t.pano_rel_heading, t.pano_elevation, t.pano_distance
            else:
                c, n, v = t.ego_count, t.ego_node, np.zeros_like(t.ego_node)
                h, e, d = t.ego_rel_heading, t.ego_rel_elevation, t.ego_distance
            pad = ((0, 0), (0, 0), (0, width - n.shape[2]))
            columns[0].append(c)
            columns[1].append(np.pad(np.where(n >= 0, n + off, -1), pad, constant_values=-1))
            for k, array in enumerate((v, h, e, d), start=2):
                columns[k].append(np.pad(array, pad))
        c, n, v, h, e, d = (np.ascontiguousarray(np.concatenate(col)) for col in columns)
        ids = [vp for t in tables for vp in t.graph.ids]
        c, n, v = (a.astype(np.int32) for a in (c, n, v))
        return cls(list(scans), offsets, ids, c, n, v, h, e, d)


class BatchObservation:
    """Observations of every slot as arrays (``B`` slots, ``K`` candidate columns).

    Node ids are global: ``env.viewpoint_ids[node]`` is the viewpoint id. Idle slots (the queue
    ran out) have ``active`` False, ``num_candidates`` 0 and −1 ids. Every step returns fresh
    arrays: an agent may keep them.

    Attributes:
        pose: ``(B, 9)`` int32 with the columns of ``kernels.POSE_COLUMNS``; the properties below
            are views of it.
        cand_ids: ``(B, 2, K)`` int32: candidate node ids, then the view each is seen in.
        cand_geometry: ``(B, 3, K)`` float: relative heading, relative elevation, distance.
        instruction: one string per slot ("" when idle).
        features: ``(B, 36, D)`` float32 when a features file was given.
        extra: the fields of further sensors, one list entry per slot (None when idle).
    """

    __slots__ = ("pose", "cand_ids", "cand_geometry", "instruction", "features", "extra")

    def __init__(
        self,
        pose: np.ndarray,
        cand_ids: np.ndarray,
        cand_geometry: np.ndarray,
        instruction: tuple[str, ...],
        features: np.ndarray | None = None,
        extra: dict[str, list[Any]] | None = None,
    ) -> None:
        self.pose = pose
        self.cand_ids = cand_ids
        self.cand_geometry = cand_geometry
        self.instruction = instruction
        self.features = features
        self.extra = extra or {}

    @property
    def active(self) -> np.ndarray:
        """``(B,)`` whether the slot runs an episode."""
        return self.pose[:, 0] == 1

    @property
    def scan(self) -> np.ndarray:
        """``(B,)`` index into ``env.scans`` (−1 idle)."""
        return self.pose[:, 1]

    @property
    def viewpoint(self) -> np.ndarray:
        """``(B,)`` global node id of the current viewpoint (−1 idle)."""
        return self.pose[:, 2]

    @property
    def heading_index(self) -> np.ndarray:
        """``(B,)`` heading index 0..11."""
        return self.pose[:, 3]

    @property
    def elevation_index(self) -> np.ndarray:
        """``(B,)`` elevation index 0..2 (0: −30°)."""
        return self.pose[:, 4]

    @property
    def view_index(self) -> np.ndarray:
        """``(B,)`` discrete view 0..35."""
        return self.pose[:, 5]

    @property
    def step(self) -> np.ndarray:
        """``(B,)`` actions taken in the current episode."""
        return self.pose[:, 6]

    @property
    def num_candidates(self) -> np.ndarray:
        """``(B,)`` candidate list lengths (entry 0 is the current viewpoint: STOP)."""
        return self.pose[:, 8]

    @property
    def heading(self) -> np.ndarray:
        """``(B,)`` heading in radians."""
        return _HEADINGS[np.maximum(self.pose[:, 3], 0)]

    @property
    def elevation(self) -> np.ndarray:
        """``(B,)`` elevation in radians."""
        return _ELEVATIONS[np.maximum(self.pose[:, 4], 0)]

    @property
    def cand_viewpoint(self) -> np.ndarray:
        """``(B, K)`` candidate global node ids (−1 padding)."""
        return self.cand_ids[:, 0]

    @property
    def cand_view_index(self) -> np.ndarray:
        """``(B, K)`` the view each candidate is seen in."""
        return self.cand_ids[:, 1]

    @property
    def cand_rel_heading(self) -> np.ndarray:
        """``(B, K)`` heading relative to the agent's, radians."""
        return self.cand_geometry[:, 0]

    @property
    def cand_rel_elevation(self) -> np.ndarray:
        """``(B, K)`` elevation relative to the agent's, radians."""
        return self.cand_geometry[:, 1]

    @property
    def cand_distance(self) -> np.ndarray:
        """``(B, K)`` straight-line distance, metres."""
        return self.cand_geometry[:, 2]


_HEADINGS = np.arange(12) * (np.pi * 2.0 / 12)
_ELEVATIONS = (np.arange(3) - 1) * (np.pi / 6.0)
