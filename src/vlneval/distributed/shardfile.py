"""One shard on disk: its records (JSON lines, flushed per episode) and its manifest.

For ``--out runs/preds.json`` and shard 2 of 7 the files are ``runs/preds.shard-2-of-7.jsonl``
(one line per finished episode: ``{"i": global index, "id": episode id, "record": ...}``) and
``runs/preds.shard-2-of-7.manifest.json`` (what ran: task, split, seed, agent, plan, checkpoint
hash, times, host; ``"status": "running"`` until the last episode is written, then
``"complete"``). A killed shard leaves a valid prefix of lines and perhaps one torn last line;
``resume`` drops the torn line and runs only the episodes not yet written.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from vlneval.distributed.plan import ShardSpec
from vlneval.errors import VLNEvalError
from vlneval.io import atomic_write_bytes, load_json

__all__ = [
    "FORMAT",
    "AGREED",
    "shard_paths",
    "read_lines",
    "records_digest",
    "KeptEpisodes",
    "ShardLine",
    "ShardWriter",
    "kept_episodes",
    "open_shard",
    "now",
]

FORMAT = "vlneval-shard-v1"
#: Manifest fields every shard of one run must share (resume and merge refuse a mismatch).
AGREED = (
    "format",
    "kind",
    "task",
    "split",
    "data_version",
    "profile",
    "vlneval_version",
    "episodes_sha256",
    "n_expected",
    "shard_count",
    "balance_scans",
    "seed",
    "agent",
    "environment",
    "settings",
    "checkpoint_sha256",
)


def now() -> str:
    """The UTC time, ISO 8601 to the second."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _stem(out: Path) -> str:
    name = out.name
    for suffix in (".json.gz", ".jsonl", ".json", ".gz"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def shard_paths(out: str | Path, spec: ShardSpec) -> tuple[Path, Path]:
    """The records and manifest files of shard ``spec`` of a run whose merged output is ``out``.

    Example:
        >>> from vlneval.distributed.plan import ShardSpec
        >>> [p.name for p in shard_paths("runs/preds.json", ShardSpec(2, 7))]
        ['preds.shard-2-of-7.jsonl', 'preds.shard-2-of-7.manifest.json']
    """
    out = Path(out)
    width = len(str(spec.count - 1))
    base = f"{_stem(out)}.shard-{spec.index:0{width}d}-of-{spec.count}"
    return out.with_name(f"{base}.jsonl"), out.with_name(f"{base}.manifest.json")


@dataclass(frozen=True)
class KeptEpisodes:
    """What a sharded run keeps on disk of the episodes it finished (for ``--resume``).

    Attributes:
        label: ``shard 2/7`` or ``ray run``; ``records``, ``manifest``: its files.
        finished: the episodes in the records file (0 before the first one ends).
        assigned: the episodes the manifest assigns the shard; None before it is written.
    """

    label: str
    records: Path
    manifest: Path
    finished: int
    assigned: int | None


def kept_episodes(out: str | Path, spec: ShardSpec | None, *, ray: bool) -> KeptEpisodes | None:
    """What the run whose merged output is ``out`` keeps: a shard (``spec``, or any Ray run)
    keeps its finished episodes on disk; None for a plain run, which keeps none.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()) / "preds.json"
        >>> kept = kept_episodes(out, ShardSpec(0, 2), ray=False)
        >>> kept.label, kept.records.name, kept.finished, kept.assigned
        ('shard 0/2', 'preds.shard-0-of-2.jsonl', 0, None)
        >>> kept_episodes(out, None, ray=False) is None
        True
    """
    if spec is None and not ray:
        return None
    records, manifest = shard_paths(out, spec or ShardSpec(0, 1, "ray"))
    n = len(read_lines(records)[0])  # none yet: no file, no lines
    label = f"shard {spec.label}" if spec is not None else "ray run"
    return KeptEpisodes(label, records, manifest, n, _assigned(manifest))


def _assigned(manifest: Path) -> int | None:
    """How many episodes a shard's manifest assigns; None when it is not there (or cannot be
    read: what a stopped run says must not fail on it)."""
    try:
        return len(load_json(manifest)["assigned"]) if manifest.is_file() else None
    except (VLNEvalError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class ShardLine:
    """One record line: its line number, global episode index, episode id, record and extras."""

    lineno: int
    i: int
    id: str
    record: Any
    extra: Any = None


def read_lines(path: Path) -> tuple[list[ShardLine], list[str], int, str]:
    """The valid lines of a records file, the problems of the others, the byte length of the
    valid prefix, and the sha256 of the bytes read (:func:`records_digest`; the file is read
    once). A last line without its newline (a process killed mid-write) is torn: left out and
    not counted as a problem."""
    raw = _records_bytes(path)
    lines, problems, good = [], [], 0
    chunks = raw.split(b"\n")
    complete = chunks[:-1]  # the piece after the last newline is torn (or empty)
    for n, chunk in enumerate(complete, start=1):
        try:
            obj = msgspec.json.decode(chunk)
            line = ShardLine(n, obj["i"], obj["id"], obj["record"], obj.get("extra"))
            if not isinstance(line.i, int) or isinstance(line.i, bool):
                raise TypeError("i")
        except (msgspec.DecodeError, KeyError, TypeError, AttributeError):
            problems.append(f"line {n}: not a shard record ({chunk[:60]!r})")
            continue
        lines.append(line)
        if not problems:
            good += len(chunk) + 1
    return lines, problems, good, hashlib.sha256(raw).hexdigest()


@dataclass
class ShardWriter:
    """Appends one line per finished episode to a shard's records and keeps its manifest.

    Attributes:
        remaining: the shard's global episode indices still to run, in order.
        done: how many were already written (by an earlier, resumed process).
    """

    records: Path
    manifest_path: Path
    manifest: dict[str, Any]
    remaining: list[int]
    done: int = 0
    _fh: Any = field(default=None, repr=False)

    def write(self, i: int, record: Any, extra: Any = None) -> None:
        """Writes (and flushes) the line of global episode ``i``."""
        if self._fh is None:
            self._fh = open(self.records, "ab")  # noqa: SIM115 - closed in complete()
        line: dict[str, Any] = {"i": i, "id": self.manifest["episode_ids"][i], "record": record}
        if extra is not None:
            line["extra"] = extra
        self._fh.write(msgspec.json.encode(line) + b"\n")
        self._fh.flush()
        self.done += 1

    def complete(self, card: Mapping[str, Any] | None) -> None:
        """Marks the shard complete, with the protocol card its run produced."""
        if self._fh is not None:
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None
        self.manifest.update(status="complete", finished_at=now(), n_done=self.done)
        self.manifest["records_sha256"] = records_digest(self.records)  # merge checks it
        if card is not None:
            self.manifest["card"] = dict(card)
        _write_manifest(self.manifest_path, self.manifest)


def records_digest(path: Path) -> str:
    """sha256 of a records file's bytes (:func:`_records_bytes`)."""
    return hashlib.sha256(_records_bytes(path)).hexdigest()


def _records_bytes(path: Path) -> bytes:
    """A records file's bytes; none (no lines, and an empty file's digest) when there is no
    file yet.

    Raises:
        VLNEvalError: the file exists but cannot be read (names it and why).
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise VLNEvalError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc


def _write_manifest(path: Path, manifest: Mapping[str, Any]) -> None:
    atomic_write_bytes(path, msgspec.json.format(msgspec.json.encode(manifest), indent=2) + b"\n")


def open_shard(
    out: str | Path, spec: ShardSpec, manifest: dict[str, Any], *, resume: bool
) -> ShardWriter:
    """Starts (or with ``resume`` continues) shard ``spec`` of the run that merges into ``out``.

    ``manifest`` holds the run's fields (:data:`AGREED`, ``episode_ids``, ``assigned``...); a
    resumed shard must agree with the manifest already on disk.
    """
    records, mpath = shard_paths(out, spec)
    assigned: Sequence[int] = manifest["assigned"]
    manifest = {**manifest, "records": records.name, "status": "running"}
    manifest.update(host=socket.gethostname(), pid=os.getpid(), started_at=now())
    done: set[int] = set()
    if resume and mpath.exists():
        old = load_json(mpath)
        _check_resumable(mpath, old, manifest)
        done = _resumed(records, manifest, set(assigned))
        manifest["started_at"] = old.get("started_at", manifest["started_at"])
        manifest["resumed_at"] = [*old.get("resumed_at", []), now()]
        if old.get("card") is not None:
            manifest["card"] = old["card"]
    else:
        records.parent.mkdir(parents=True, exist_ok=True)
        records.write_bytes(b"")
    _write_manifest(mpath, manifest)
    remaining = [i for i in assigned if i not in done]
    return ShardWriter(records, mpath, manifest, remaining, done=len(done))


def _check_resumable(path: Path, old: Any, new: Mapping[str, Any]) -> None:
    if not isinstance(old, dict) or old.get("format") != FORMAT:
        raise VLNEvalError(f"{path}: not a vlneval shard manifest; remove it or drop --resume")
    for key in AGREED:
        value = new.get(key)
        if old.get(key) != value:
            raise VLNEvalError(
                f"{path}: --resume: the shard on disk has {key} = {old.get(key)!r} but this run "
                f"has {value!r}; resume with the same settings, or drop --resume to start over"
            )
    if old.get("shard_index") != new["shard_index"]:
        raise VLNEvalError(f"{path}: --resume: the file is shard {old.get('shard_index')}")


def _resumed(records: Path, manifest: Mapping[str, Any], assigned: set[int]) -> set[int]:
    lines, problems, good, _ = read_lines(records)
    ids = manifest["episode_ids"]
    done: set[int] = set()
    for line in lines:
        if line.i not in assigned or ids[line.i] != line.id or line.i in done:
            problems.append(
                f"line {line.lineno}: episode {line.id!r} (index {line.i}) is not an unwritten "
                "episode of this shard's plan"
            )
        done.add(line.i)
    if problems:
        raise VLNEvalError(
            f"{records}: --resume: the records are damaged ({problems[0]}"
            f"{f'; {len(problems) - 1} more' if len(problems) > 1 else ''}); drop --resume to "
            "start the shard over"
        )
    with open(records, "r+b") as fh:  # drop a torn last line
        fh.truncate(good)
    return done
