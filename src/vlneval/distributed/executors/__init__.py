"""Executors: where the episodes of a run are rolled out.

- local: this process (``vlneval run``; :func:`vlneval.agents.rollout.run_agent`);
- Ray: :func:`~vlneval.distributed.executors.ray_executor.run_on_ray`, one actor per agent
  replica (``vlneval run --executor ray``; ``pip install "vlneval[ray]"``), for graph, street
  and continuous runs alike.

Both run a :class:`~vlneval.distributed.executors.workload.Workload` on global episode indices
and write the same shard records and manifests, so ``vlneval merge`` and ``vlneval score`` read
their output alike. Importing this package never imports Ray.
"""

from __future__ import annotations

from vlneval.distributed.executors.workload import ChunkResult, ChunkRunner, Workload

__all__ = ["Workload", "ChunkRunner", "ChunkResult"]
