"""Sharded runs with a verified merge: plans, launcher detection, merge, gather, sweeps.

- :func:`plan` splits a split's episodes over ``n`` shards (exact cover, deterministic);
- :func:`detect` reads which shard this process is from torchrun or SLURM variables;
- :func:`merge` verifies shard files (every episode exactly once, one run) and writes the
  task's predictions file, byte-identical to a single-process ``vlneval run``;
- :func:`gather` collects records over an already-initialised torch process group.

Example:
    >>> from vlneval.distributed import plan, detect
    >>> plan(["a", "b", "c"], 2)
    [[0, 1], [2]]
    >>> detect({"RANK": "1", "WORLD_SIZE": "2"}).label
    '1/2'
"""

from __future__ import annotations

from vlneval.distributed.detect import detect, resolve_shard
from vlneval.distributed.gather import gather
from vlneval.distributed.merge import Merged, merge
from vlneval.distributed.plan import ShardSpec, ids_digest, parse_shard, plan

__all__ = [
    "Merged",
    "ShardSpec",
    "detect",
    "gather",
    "ids_digest",
    "merge",
    "parse_shard",
    "plan",
    "resolve_shard",
]
