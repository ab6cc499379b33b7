"""Which shard this process is, from the launcher's environment variables.

Read in this order (the first that is set wins; ``--shard i/n`` on the command line beats all):

1. torchrun (and ``torch.distributed.launch``): ``RANK`` and ``WORLD_SIZE``;
2. SLURM: a job array (``SLURM_ARRAY_TASK_ID`` with ``SLURM_ARRAY_TASK_MIN``,
   ``SLURM_ARRAY_TASK_STEP`` and ``SLURM_ARRAY_TASK_COUNT`` or ``SLURM_ARRAY_TASK_MAX``) and/or
   the tasks of a step (``SLURM_PROCID`` of ``SLURM_NTASKS``, as ``srun`` sets them). An array of
   multi-task jobs gives ``array_index * ntasks + procid`` of ``array_count * ntasks``.

torch is never imported: the variables are all a launcher leaves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from vlneval.distributed.plan import ShardSpec, parse_shard
from vlneval.errors import VLNEvalError

__all__ = ["detect", "resolve_shard"]


def _int(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name)
    if value is None or value.strip() == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise VLNEvalError(f"environment variable {name}={value!r} is not an integer") from None


def _torchrun(env: Mapping[str, str]) -> ShardSpec | None:
    rank, world = _int(env, "RANK"), _int(env, "WORLD_SIZE")
    if rank is None and world is None:
        return None
    if rank is None or world is None:  # a broken launcher: every rank would run the whole split
        given, unset = ("RANK", "WORLD_SIZE") if world is None else ("WORLD_SIZE", "RANK")
        raise VLNEvalError(
            f"{given}={env[given]} is set but {unset} is not: pass --shard i/n (or set both)"
        )
    return ShardSpec(rank, world, f"torchrun (RANK={rank}, WORLD_SIZE={world})")


def _array(env: Mapping[str, str]) -> tuple[int, int, str] | None:
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    if task is None:
        return None
    low = _int(env, "SLURM_ARRAY_TASK_MIN") or 0
    step = _int(env, "SLURM_ARRAY_TASK_STEP") or 1
    count = _int(env, "SLURM_ARRAY_TASK_COUNT")
    high = _int(env, "SLURM_ARRAY_TASK_MAX")
    if count is None:
        if high is None:
            raise VLNEvalError(
                "SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor "
                "SLURM_ARRAY_TASK_MAX: pass --shard i/n"
            )
        count = (high - low) // step + 1
    elif count < 1:
        raise VLNEvalError(f"SLURM_ARRAY_TASK_COUNT={count} must be >= 1")
    offset, rem = divmod(task - low, step)
    if rem or not 0 <= offset < count:
        raise VLNEvalError(
            f"SLURM array task {task} is not one of {count} evenly spaced tasks from {low} "
            f"(step {step}): use --array=0-{count - 1} or pass --shard i/n"
        )
    return offset, count, f"SLURM array (task {task}, {count} tasks from {low})"


def detect(environ: Mapping[str, str] | None = None) -> ShardSpec | None:
    """This process's shard from the launcher's variables (see the module docstring); None when
    no launcher variable is set.

    Example:
        >>> detect({"RANK": "3", "WORLD_SIZE": "8"}).label
        '3/8'
        >>> detect({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "1",
        ...         "SLURM_ARRAY_TASK_COUNT": "8"}).label
        '4/8'
        >>> detect({"SLURM_PROCID": "1", "SLURM_NTASKS": "4"}).label
        '1/4'
        >>> detect({}) is None
        True
    """
    env = os.environ if environ is None else environ
    found = _torchrun(env)
    if found is not None:
        return found
    array = _array(env)
    procid, ntasks = _int(env, "SLURM_PROCID"), _int(env, "SLURM_NTASKS")
    step = None
    if procid is not None and ntasks is not None and ntasks > 1:
        step = (procid, ntasks, f"srun (SLURM_PROCID={procid}, SLURM_NTASKS={ntasks})")
    if array is None and step is None:
        return None
    a, a_count, a_src = array or (0, 1, "")
    p, p_count, p_src = step or (0, 1, "")
    source = " and ".join(s for s in (a_src, p_src) if s)
    return ShardSpec(a * p_count + p, a_count * p_count, source)


def resolve_shard(text: str | None, environ: Mapping[str, str] | None = None) -> ShardSpec | None:
    """The shard of ``--shard TEXT``: ``i/n``, ``auto`` (detected; one shard of one when no
    launcher is found), or None when not given.

    Example:
        >>> resolve_shard("auto", {"RANK": "0", "WORLD_SIZE": "2"}).label
        '0/2'
        >>> resolve_shard("1/3", {"RANK": "0", "WORLD_SIZE": "2"}).label  # explicit wins
        '1/3'
        >>> resolve_shard("auto", {}).source
        'auto: no launcher variables found, one shard'
    """
    if text is None:
        return None
    if text.strip().lower() == "auto":
        found = detect(environ)
        return found or ShardSpec(0, 1, "auto: no launcher variables found, one shard")
    return parse_shard(text)
