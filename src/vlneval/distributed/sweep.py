"""Sweeps: checkpoints x seeds x shards as independent work units.

A unit is one shard (:mod:`vlneval.distributed.session`) of one (checkpoint, seed) run: the
full ``vlneval`` command line to run it, and the merged output it belongs to,
``RUNS/<checkpoint>/seed-<s>/preds.json``. Units share nothing but the file system, so SLURM
(one array task per unit), Ray or a bash loop can run them in any order, twice, or after a
crash: every unit runs with ``--resume`` and a unit whose manifest says ``complete`` is skipped.
Unit ``k`` is line ``k`` of the units file, and the SLURM array task id is the unit number.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import msgspec

from vlneval.distributed.plan import ShardSpec
from vlneval.distributed.shardfile import shard_paths
from vlneval.errors import VLNEvalError
from vlneval.io import atomic_write_bytes, load_json, short_names

__all__ = [
    "Unit",
    "plan_units",
    "write_units",
    "read_units",
    "unit_status",
    "array_ranges",
    "checkpoint_label",
    "checkpoint_names",
    "checkpoint_step",
    "natural_order",
    "expand_files",
    "RESERVED",
]

#: The most units a sweep plans (a SLURM array is at most a few million tasks; more is a typo).
MAX_UNITS = 1_000_000
#: Options a sweep sets for every unit; the command given to it must not set them.
RESERVED = ("--out", "--seed", "--shard", "--checkpoint", "--resume", "--limit", "--score")


@dataclass(frozen=True)
class Unit:
    """One work unit: shard ``shard`` of the run of ``checkpoint`` with ``seed``."""

    unit: int
    checkpoint: str | None
    seed: int
    shard: str
    out: str
    argv: list[str]

    @property
    def spec(self) -> ShardSpec:
        """The unit's shard."""
        i, n = self.shard.split("/")
        return ShardSpec(int(i), int(n))


def checkpoint_label(path: str | None, taken: set[str] | None = None) -> str:
    """A folder name for a checkpoint: its file name (``ckpt.12.pth``), made unique.

    Example:
        >>> checkpoint_label("runs/a/ckpt.12.pth"), checkpoint_label(None)
        ('ckpt.12.pth', 'no-checkpoint')
    """
    base = "no-checkpoint" if path is None else (Path(path).name or "checkpoint")
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base)
    label, k = base, 1
    while taken is not None and label in taken:
        k += 1
        label = f"{base}-{k}"
    if taken is not None:
        taken.add(label)
    return label


def checkpoint_names(paths: Sequence[str | None]) -> list[str]:
    """The name of each checkpoint in a sweep's report: its :func:`checkpoint_label`, or, when
    two share a file name, its path below the folder all share, as ``compare`` names
    same-named files (:func:`vlneval.io.short_names`).

    Example:
        >>> checkpoint_names(["runs/rb/ckpt.5.pth", "runs/ra/ckpt.5.pth"])
        ['rb/ckpt.5.pth', 'ra/ckpt.5.pth']
        >>> checkpoint_names(["runs/rb/ckpt.5.pth", "runs/ra/ckpt.9.pth"])
        ['ckpt.5.pth', 'ckpt.9.pth']
    """
    names = [checkpoint_label(p) for p in paths]
    if len(set(names)) == len(names):
        return names
    return short_names([p or names[k] for k, p in enumerate(paths)])[0]


def checkpoint_step(path: str | None) -> int | None:
    """The training step of a checkpoint: the last number in its file name (VLN-CE's
    ``ckpt.{index}.pth``); None when its name has none (``latest.pth``: no step).

    Example:
        >>> checkpoint_step("r2r/ckpt.12.pth"), checkpoint_step("r2r/best.pt")
        (12, None)
    """
    found = re.findall(r"\d+", Path(path).name) if path else []
    return int(found[-1]) if found else None


def natural_order(names: Sequence[str | None]) -> list[int]:
    """The positions of ``names`` in natural order: folder by folder (in the order each folder
    first comes), and within a folder the files with a number in their name sorted by it (runs
    of digits compared as numbers, the rest as text: ``ckpt_20`` before ``ckpt_100``), each file
    without one (``latest.pth``) left where it was given. Only the file name counts: the digits
    of ``r2r/`` do not number ``r2r/latest.pth``.

    Example:
        >>> names = ["best.pth", "ckpt_100.pth", "ckpt_20.pth", None, "ckpt_3.pth"]
        >>> [names[k] for k in natural_order(names)]
        ['best.pth', 'ckpt_3.pth', 'ckpt_20.pth', None, 'ckpt_100.pth']
        >>> names = ["r2r/ckpt_100.pth", "a/ckpt_2.pth", "r2r/latest.pth", "r2r/ckpt_20.pth"]
        >>> [names[k] for k in natural_order(names)]
        ['r2r/ckpt_20.pth', 'r2r/latest.pth', 'r2r/ckpt_100.pth', 'a/ckpt_2.pth']
    """
    folders: dict[str, list[int]] = {}
    for k, name in enumerate(names):
        folders.setdefault(str(Path(name).parent) if name else ".", []).append(k)
    order: list[int] = []
    for group in folders.values():
        files = {k: Path(names[k] or "").name for k in group}
        numbered = {k for k in group if re.search("[0-9]", files[k])}
        ranked = iter(sorted(numbered, key=lambda k: _natural_key(files[k])))
        order += [next(ranked) if k in numbered else k for k in group]
    return order


def expand_files(paths: Sequence[str], option: str = "--predictions") -> tuple[list[str], bool]:
    """The files ``paths`` name (of ``--predictions``, or of ``option``: ``sweep plan
    --checkpoints``), each quoted pattern such as ``'ckpt/*.json'`` expanded in natural order
    (:func:`natural_order`: ``ckpt_20`` before ``ckpt_100``), and whether they make a sweep:
    several paths or any pattern, so that a ``--json`` list does not turn into one object when
    a pattern matches one file. A path that exists is taken as written, brackets and all.

    Example:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> for name in ("ckpt_100.json", "ckpt_20.json"):
        ...     open(os.path.join(folder, name), "w").close()
        >>> files, sweep = expand_files([os.path.join(folder, "ckpt_*.json")])
        >>> [os.path.basename(f) for f in files], sweep
        (['ckpt_20.json', 'ckpt_100.json'], True)
        >>> expand_files(["preds.json"])
        (['preds.json'], False)

    Raises:
        VLNEvalError: a pattern matches no file.
    """
    out: list[str] = []
    patterns = 0
    for p in paths:
        if not any(c in p for c in "*?[") or Path(p).exists():
            out.append(p)
            continue
        matched = sorted(glob.glob(p, recursive=True))
        if not matched:
            raise VLNEvalError(f"{option} {p}: no file matches this pattern")
        out += [matched[k] for k in natural_order(matched)]
        patterns += 1
    return out, patterns > 0 or len(paths) > 1


def _natural_key(name: str) -> tuple[str | int, ...]:
    """``name`` cut into text and numbers (``("ckpt_", 20, ".pth")``): text at even places."""
    return tuple(int(c) if k % 2 else c for k, c in enumerate(re.split("([0-9]+)", name)))


def plan_units(
    command: Sequence[str],
    *,
    checkpoints: Sequence[str | None],
    seeds: Sequence[int],
    shards: int,
    runs_dir: str | Path,
    filename: str = "preds.json",
) -> list[Unit]:
    """Every unit of the sweep, checkpoint-major (all seeds and shards of the first
    checkpoint first).

    Example:
        >>> units = plan_units(["run", "--task", "demo", "--agent", "random"],
        ...                    checkpoints=[None], seeds=[0, 1], shards=2, runs_dir="runs")
        >>> [(u.unit, u.seed, u.shard) for u in units]
        [(0, 0, '0/2'), (1, 0, '1/2'), (2, 1, '0/2'), (3, 1, '1/2')]
        >>> units[3].argv[-6:]
        ['--out', 'runs/no-checkpoint/seed-1/preds.json', '--shard', '1/2', '--resume', '--quiet']
    """
    if not command or command[0] != "run":
        raise VLNEvalError("the sweep's command must be `run ...` (after --)")
    clash = sorted({a.split("=")[0] for a in command} & set(RESERVED))
    if clash:
        raise VLNEvalError(f"the sweep sets {', '.join(clash)} itself: drop it from the command")
    if shards < 1 or not seeds or not checkpoints:
        raise VLNEvalError("a sweep needs at least one checkpoint, one seed and one shard")
    n = len(checkpoints) * len(seeds) * shards
    if n > MAX_UNITS:  # refused before that many are built
        raise VLNEvalError(
            f"a sweep of {len(checkpoints)} checkpoints x {len(seeds)} seeds x {shards} shards is "
            f"{n} units, more than {MAX_UNITS}: use fewer shards (a run needs no more shards "
            "than its split has episodes)"
        )
    units: list[Unit] = []
    taken: set[str] = set()
    for ckpt in checkpoints:
        label = checkpoint_label(ckpt, taken)
        for seed in seeds:
            out = Path(runs_dir) / label / f"seed-{seed}" / filename
            for k in range(shards):
                argv = [*command, "--seed", str(seed)]
                argv += [] if ckpt is None else ["--checkpoint", str(ckpt)]
                argv += ["--out", out.as_posix(), "--shard", f"{k}/{shards}", "--resume", "--quiet"]
                units.append(
                    Unit(len(units), ckpt, int(seed), f"{k}/{shards}", out.as_posix(), argv)
                )
    return units


def write_units(path: str | Path, units: Iterable[Unit]) -> None:
    """Writes the units file (JSON lines, unit ``k`` on line ``k``)."""
    atomic_write_bytes(path, b"".join(msgspec.json.encode(asdict(u)) + b"\n" for u in units))


def read_units(path: str | Path) -> list[Unit]:
    """Reads a units file."""
    p = Path(path)
    try:
        lines = p.read_bytes().splitlines()
    except OSError as exc:
        raise VLNEvalError(f"{p}: cannot read the units file ({exc.strerror or exc})") from exc
    units = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            units.append(Unit(**msgspec.json.decode(line)))
        except (msgspec.DecodeError, TypeError) as exc:
            raise VLNEvalError(f"{p}: line {n}: not a sweep unit ({exc})") from None
    if [u.unit for u in units] != list(range(len(units))):
        raise VLNEvalError(f"{p}: units must be numbered 0, 1, 2... in order")
    return units


def unit_status(unit: Unit) -> str:
    """``complete``, ``running`` (started; killed or still going) or ``pending``."""
    _, manifest = shard_paths(unit.out, unit.spec)
    if not manifest.exists():
        return "pending"
    try:
        status: Any = load_json(manifest).get("status")
    except (VLNEvalError, AttributeError):
        return "running"
    return "complete" if status == "complete" else "running"


def array_ranges(indices: Sequence[int]) -> str:
    """SLURM ``--array`` syntax for sorted unit numbers.

    Example:
        >>> array_ranges([0, 1, 2, 5, 7, 8])
        '0-2,5,7-8'
    """
    runs: list[list[int]] = []  # [first, last] of each run of consecutive numbers
    for i in sorted(indices):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
