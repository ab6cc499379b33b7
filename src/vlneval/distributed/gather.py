"""Gathering run records inside a training loop over an existing torch process group.

Each rank runs its shard (``plan(ids, world_size)[rank]``) and calls :func:`gather` with its
records; every rank receives all of them, checked for duplicates and sorted by episode index,
ready for scoring on rank 0. torch is imported only when this function is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from vlneval.errors import VLNEvalError

__all__ = ["gather"]


def gather(records: Iterable[tuple[int, Any]], *, group: Any = None) -> list[Any]:
    """All ranks' ``(global episode index, record)`` pairs, as records in index order.

    Uses ``torch.distributed.all_gather_object`` on ``group`` (default: the world), which must
    already be initialised (``torch.distributed.init_process_group``). Raises when two ranks
    return the same episode.
    """
    try:
        import torch.distributed as dist  # deferred: torch
    except ImportError:
        raise VLNEvalError("gather() needs torch (pip install torch)") from None
    if not dist.is_available() or not dist.is_initialized():
        raise VLNEvalError(
            "gather() needs an initialised torch process group (torch.distributed."
            "init_process_group); outside training loops write shards and use vlneval merge"
        )
    mine = [(int(i), r) for i, r in records]
    parts: list[Sequence[tuple[int, Any]]] = [[] for _ in range(dist.get_world_size(group))]
    dist.all_gather_object(parts, mine, group=group)
    seen: dict[int, Any] = {}
    for rank, part in enumerate(parts):
        for i, rec in part:
            if i in seen:
                raise VLNEvalError(f"gather(): episode index {i} returned twice (rank {rank})")
            seen[i] = rec
    return [seen[i] for i in sorted(seen)]
