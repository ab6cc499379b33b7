"""The public copy of an episodes file: every hidden value replaced by a public stand-in.

A task with its own reader is checked blind by its own scorer run on this copy (same reader,
options and messages): what a public test file does not hold (reference paths past the start,
goals, targets, distances) is replaced by the start, so no message can hold a hidden value.
Each task declares the hook that writes it (``Task.public_copy``: ``(src, dest) -> None``,
companion files such as VLN-CE's ``_gt`` included). The copy goes into a folder that mirrors
the folders around the original with links, so that files the scorer looks for beside the
episodes (REVERIE's object boxes) are found.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlneval.errors import InvalidInputError, VLNEvalError, edit_hinted
from vlneval.io import read_bytes
from vlneval.registry import load_entry_point

if TYPE_CHECKING:
    from vlneval.tasks.base import Task

__all__ = [
    "has_public_copy",
    "write_public_copy",
    "read_records",
    "write_records",
    "cut_to_start",
    "PUBLIC_NAME",
]

#: How messages name the public copy (never the temporary path).
PUBLIC_NAME = "<public view>"


def has_public_copy(task: Task) -> bool:
    """Whether ``task`` declares how to make the public copy of its episodes files.

    Example:
        >>> from vlneval.tasks import get_task
        >>> has_public_copy(get_task("reverie")), has_public_copy(get_task("r2r"))
        (True, True)
    """
    return bool(task.public_copy)


def read_records(path: Path) -> tuple[Any, bool]:
    """The decoded content of a ``.json``/``.jsonl`` file (optionally gzipped) and whether it
    was JSON lines."""
    raw = read_bytes(path)
    try:
        return json.loads(raw), False
    except json.JSONDecodeError:
        return [json.loads(line) for line in raw.splitlines() if line.strip()], True


def write_records(path: Path, value: Any, jsonl: bool) -> None:
    """Writes ``value`` as JSON (or JSON lines), gzipped when ``path`` ends in ``.gz``."""
    text = "".join(json.dumps(v) + "\n" for v in value) if jsonl else json.dumps(value)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def cut_to_start(path: Any) -> list[Any]:
    """A reference path cut to its start (a public value).

    Example:
        >>> cut_to_start(["s", "a", "g"]), cut_to_start([])
        (['s'], [])
    """
    return list(path[:1]) if isinstance(path, list) else []


def map_records(fn: Callable[[dict[str, Any]], None]) -> Callable[[Path, Path], None]:
    """A ``public_copy`` hook that applies ``fn`` to every record (dict) of a list file."""

    def hook(src: Path, dest: Path) -> None:
        value, jsonl = read_records(src)
        if not isinstance(value, list):
            raise InvalidInputError(f"{src}: expected a JSON list of episodes")
        for rec in value:
            if isinstance(rec, dict):
                fn(rec)
        write_records(dest, value, jsonl)

    return hook


def _mirror(src: Path, folder: Path) -> Path:
    """``folder/<grandparent>/<parent>/<name>``, every other entry of the parent and
    grandparent folders linked in; the path where the copy goes."""
    parent, grand = src.parent, src.parent.parent
    top = folder / (grand.name or "root")
    inner = top / (parent.name or "data")
    inner.mkdir(parents=True, exist_ok=True)
    for where, mirror, skip in ((grand, top, parent.name), (parent, inner, src.name)):
        for entry in sorted(where.iterdir()) if where.is_dir() else []:
            link = mirror / entry.name
            if entry.name == skip or link.exists() or link.is_symlink():
                continue
            link.symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    return inner / src.name


def write_public_copy(task: Task, episodes_file: str | Path, folder: str | Path) -> Path:
    """Writes the public copy of ``episodes_file`` under ``folder`` (see the module
    docstring); returns its path.

    Raises:
        VLNEvalError: the task declares no public copy, or its file cannot be read.
    """
    if not has_public_copy(task):
        raise VLNEvalError(f"task {task.name} declares no public view of its episodes")
    src = Path(episodes_file).resolve()
    dest = _mirror(src, Path(folder))
    hook = load_entry_point(task.public_copy)
    hook(src, dest)
    return dest


def public_text(text: str, copy: Path, originals: Mapping[str, str] | None = None) -> str:
    """A message of the scorer run on the public copy, the copy's path named ``<public
    view>`` (and any other path of ``originals`` replaced by its name there)."""

    def named(out: str) -> str:
        out = out.replace(str(copy), PUBLIC_NAME)
        for path, name in (originals or {}).items():
            out = out.replace(path, name)
        return out

    return edit_hinted(text, named)  # a hint stays marked
