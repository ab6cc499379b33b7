"""Shard plans: which episodes of a split each of ``n`` processes runs.

A plan is a pure function of the split's ordered episode ids, the number of shards and the
balancing rule; it never depends on the machine, the launcher or the time. Every plan is an
exact cover: each global episode index ``0 .. N-1`` belongs to exactly one shard, and shard
sizes differ by at most one (the first ``N mod n`` shards take one more episode).

- plain (``balance_scans=False``): shard ``k`` runs a contiguous block of the split's order;
- by scan (``balance_scans=True``): whole scans go to one shard where they fit (largest scans
  first, each into the shard with the least room that still holds it all, ties to the lower
  shard), and a scan is split only when no shard has room for the rest of it. A continuous-env
  user then loads each scene on as few shards as possible, with the same shard sizes.

Within a shard, episodes run in the split's order. Per-episode seeds use the global index
(:func:`vlneval.agents.rollout.episode_rng`), so the plan never changes a result.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from vlneval.errors import VLNEvalError

__all__ = ["ShardSpec", "parse_shard", "plan", "shard_sizes", "ids_digest"]


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` of ``count`` (0-based, as torchrun's RANK), and where that came from.

    Example:
        >>> ShardSpec(2, 7).label
        '2/7'
    """

    index: int
    count: int
    source: str = "explicit"

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise VLNEvalError(
                f"shard {self.index}/{self.count} ({self.source}): expected 0 <= i < n with n >= 1"
            )

    @property
    def label(self) -> str:
        """``i/n``."""
        return f"{self.index}/{self.count}"


_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> ShardSpec:
    """``"i/n"`` (0 <= i < n) as a :class:`ShardSpec`.

    Example:
        >>> parse_shard("3/8")
        ShardSpec(index=3, count=8, source='explicit')
    """
    m = _SHARD.match(text)
    if m is None:
        raise VLNEvalError(
            f"--shard {text!r}: expected i/n with 0 <= i < n (e.g. 0/8; shards count from 0 "
            "like torchrun's RANK), or auto"
        )
    return ShardSpec(int(m.group(1)), int(m.group(2)))


def shard_sizes(n_episodes: int, count: int) -> list[int]:
    """Episodes per shard: ``N // n`` each, one more for the first ``N mod n``.

    Example:
        >>> shard_sizes(10, 4)
        [3, 3, 2, 2]
    """
    if count < 1:
        raise VLNEvalError(f"the number of shards must be at least 1, got {count}")
    q, r = divmod(n_episodes, count)
    return [q + (k < r) for k in range(count)]


def plan(
    episode_ids: Sequence[str],
    count: int,
    *,
    scans: Sequence[str] | None = None,
    balance_scans: bool = False,
) -> list[list[int]]:
    """The global episode indices of every shard (see the module docstring).

    Args:
        episode_ids: the split's episode ids in their order (must be unique).
        count: the number of shards.
        scans: the scan of every episode; needed with ``balance_scans``.
        balance_scans: keep each scan's episodes on one shard where possible.

    Example:
        >>> plan(["a", "b", "c", "d", "e"], 2)
        [[0, 1, 2], [3, 4]]
        >>> plan(["a", "b", "c", "d", "e"], 2, scans="XYXYX", balance_scans=True)
        [[0, 2, 4], [1, 3]]
    """
    n = len(episode_ids)
    _check_unique(episode_ids)
    sizes = shard_sizes(n, count)
    if not balance_scans:
        starts = [sum(sizes[:k]) for k in range(count)]
        return [list(range(s, s + size)) for s, size in zip(starts, sizes, strict=True)]
    if scans is None or len(scans) != n:
        raise VLNEvalError("balance_scans needs the scan of every episode")
    return _by_scan(scans, sizes)


def _check_unique(episode_ids: Sequence[str]) -> None:
    seen: set[str] = set()
    for eid in episode_ids:
        if eid in seen:
            raise VLNEvalError(f"episode id {eid!r} appears twice in the split: ids must be unique")
        seen.add(eid)


def _by_scan(scans: Sequence[str], sizes: list[int]) -> list[list[int]]:
    groups: dict[str, list[int]] = {}
    for i, scan in enumerate(scans):
        groups.setdefault(scan, []).append(i)
    # Largest scans first; ties in order of first appearance (dicts keep insertion order).
    pieces = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
    room = list(sizes)
    shards: list[list[int]] = [[] for _ in sizes]
    for piece in pieces:
        rest = piece
        while rest:
            fits = [k for k in range(len(room)) if room[k] >= len(rest)]
            if fits:
                k = min(fits, key=lambda j: (room[j], j))
            else:
                k = max(range(len(room)), key=lambda j: (room[j], -j))
            take = min(room[k], len(rest))
            shards[k].extend(rest[:take])
            room[k] -= take
            rest = rest[take:]
    return [sorted(s) for s in shards]


def ids_digest(episode_ids: Sequence[str]) -> str:
    """sha256 of the split's ordered episode ids (one per line, UTF-8).

    Example:
        >>> ids_digest(["a", "b"])[:12]
        '911169ddaaf1'
    """
    h = hashlib.sha256()
    for eid in episode_ids:
        h.update(str(eid).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()
