"""``vlneval merge``: verify shard files and merge them into one predictions file."""

from __future__ import annotations

import argparse
import shlex

from vlneval.cli.common import err
from vlneval.distributed.merge import card_path, merge
from vlneval.errors import more_not_shown
from vlneval.tasks import get_task
from vlneval.tasks.common.protocol import episodes_text

__all__ = ["cmd_merge"]


def cmd_merge(args: argparse.Namespace) -> int:
    """Merges, or exits 2 with every problem."""
    merged = merge(args.shards, out=args.out, allow_partial=args.allow_partial)
    limit = None if args.all_errors else 20
    for problem in merged.problems[:limit]:
        err(f"warning: {problem}")
    if limit is not None and len(merged.problems) > limit:
        err(f"warning: {more_not_shown(merged.problems[limit:])}")
    shards = merged.card["shards"]
    err(
        f"merged {shards['merged']} of {shards['count']} shards: {episodes_text(merged.card)} "
        f"{merged.task} {merged.split} episodes; wrote {args.out} and {card_path(args.out)}"
    )
    if get_task(merged.task).has_option("distance"):  # a run's file carries no distances
        root = f" --data-root {shlex.quote(merged.data_root)}" if merged.data_root else ""
        subset = " --subset" if merged.partial else ""
        err(
            f"note: to score it: vlneval score --task {merged.task} --split {merged.split}{root} "
            f"--predictions {shlex.quote(str(args.out))} --distance twin{subset} (the run measured no "
            "distance_to_goal: without --distance twin, NE, OSR, SR, SPL and sDTW are n/a)"
        )
    return 0
