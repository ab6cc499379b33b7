"""Continuous worlds: occupancy grids in metres, geodesic distance oracles, motion models.

Submodules (imported on use, so that ``import vlneval`` stays light):

- :mod:`~vlneval.continuous.world`: :class:`World`, a multi-level occupancy grid with grid
  geodesics (scipy csgraph);
- :mod:`~vlneval.continuous.navgraph`: the continuous twin of a Matterport3D building;
- :mod:`~vlneval.continuous.oracle`: the distance-oracle protocol and its implementations;
- :mod:`~vlneval.continuous.motion`: collision-checked motion (steps, sliding, unicycle);
- :mod:`~vlneval.continuous.twin`: continuous twins of R2R episodes;
- :mod:`~vlneval.tasks.vlnce.profiles`: the scoring rules of continuous profiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlneval._lazy import lazy_attributes

__all__ = ["World", "GridOracle", "CarriedDistances", "DistanceOracle", "world_from_navgraph"]

if TYPE_CHECKING:
    from vlneval.continuous.navgraph import world_from_navgraph
    from vlneval.continuous.oracle import CarriedDistances, DistanceOracle, GridOracle
    from vlneval.continuous.world import World

__getattr__ = lazy_attributes(
    __name__,
    {
        "World": "vlneval.continuous.world",
        "GridOracle": "vlneval.continuous.oracle",
        "CarriedDistances": "vlneval.continuous.oracle",
        "DistanceOracle": "vlneval.continuous.oracle",
        "world_from_navgraph": "vlneval.continuous.navgraph",
    },
)
