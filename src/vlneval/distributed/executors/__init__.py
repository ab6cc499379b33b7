"""Executors: where the episodes of a run are rolled out (this process, or Ray actors:
:func:`~vlneval.distributed.executors.ray_executor.run_on_ray`), for graph, street and
continuous runs alike, from one :class:`~vlneval.distributed.executors.workload.Workload`.
Importing this package never imports Ray.
"""

from __future__ import annotations

from vlneval.distributed.executors.workload import ChunkResult, ChunkRunner, Workload

__all__ = ["Workload", "ChunkRunner", "ChunkResult"]
