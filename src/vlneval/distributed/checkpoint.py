"""How a checkpoint reaches an agent, and its fingerprint in a shard's manifest.

The convention: ``--checkpoint PATH`` is hashed into the manifest (sha256 of the file; of every
file, by relative path, for a folder) and passed to the agent's constructor as the keyword
argument ``checkpoint=PATH`` (a ``str``). Other constructor arguments come from
``--agent-arg KEY=VALUE`` (the value read as JSON when it parses, else kept as text). An agent
that takes no ``checkpoint`` argument is refused when one is given, so a sweep can never run
the same weights for every checkpoint by accident.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vlneval.agents.base import bind_agent_args
from vlneval.agents.registry import agent_factory
from vlneval.agents.remote import is_remote
from vlneval.errors import VLNEvalError

__all__ = ["check_checkpoint_use", "checkpoint_fingerprint", "parse_agent_args", "with_agent_args"]

_CHUNK = 1 << 20


def _file_sha256(path: Path, h: Any) -> int:
    size = 0
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK):
            h.update(block)
            size += len(block)
    return size


def checkpoint_fingerprint(path: str | Path) -> dict[str, Any]:
    """``{"path", "sha256", "bytes"}`` of a checkpoint file or folder.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "ckpt.3.pth"
        >>> _ = p.write_bytes(b"weights")
        >>> checkpoint_fingerprint(p)["bytes"]
        7
    """
    p = Path(path)
    if not p.exists():
        raise VLNEvalError(f"--checkpoint {path}: no such file or folder")
    h = hashlib.sha256()
    if p.is_dir():
        size = 0
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            inner = hashlib.sha256()
            size += _file_sha256(f, inner)
            h.update(f"{f.relative_to(p).as_posix()}\0{inner.hexdigest()}\n".encode())
    else:
        size = _file_sha256(p, h)
    return {"path": str(p), "sha256": h.hexdigest(), "bytes": size}


def parse_agent_args(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as keyword arguments (JSON values where they parse).

    Example:
        >>> parse_agent_args(["beam=4", "name=gpt", "temperature=0.5"])
        {'beam': 4, 'name': 'gpt', 'temperature': 0.5}
    """
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise VLNEvalError(f"--agent-arg {pair!r}: expected KEY=VALUE with KEY a Python name")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def with_agent_args(info: Any, kwargs: Mapping[str, Any]) -> Any:
    """The :class:`~vlneval.agents.base.AgentInfo` ``info`` whose factory passes ``kwargs``.

    Example:
        >>> from vlneval.agents.registry import get_agent
        >>> with_agent_args(get_agent("stop"), {"checkpoint": "x.pth"})
        Traceback (most recent call last):
        ...
        vlneval.errors.VLNEvalError: agent stop-v1 takes no checkpoint= argument (its constructor takes: none); see vlneval.distributed.checkpoint
    """
    if not kwargs:
        return info
    return dataclasses.replace(info, factory=bind_agent_args(info.id, info.factory, kwargs))


def check_checkpoint_use(
    agent: str, checkpoints: Sequence[str], agent_args: Mapping[str, Any], *, said: str
) -> None:
    """Refuses an agent whose constructor takes no ``checkpoint=`` for a sweep over
    ``checkpoints``, and one that requires it for a sweep without them (unless ``agent_args``
    gives it); a remote agent's server holds its model: not checked. ``said``: how messages
    name the option that gave the checkpoints.

    Raises:
        VLNEvalError: the agent cannot take the checkpoints, or needs one none gives.

    Example:
        >>> check_checkpoint_use("random", [], {}, said="--checkpoints")
        >>> check_checkpoint_use("random", ["ckpt.pt"], {}, said="--checkpoints")
        Traceback (most recent call last):
        ...
        vlneval.errors.VLNEvalError: --checkpoints: agent random-v1 takes no checkpoint= argument (its constructor takes: none); see vlneval.distributed.checkpoint
    """
    if is_remote(agent):
        return
    agent_id, factory = agent_factory(agent)
    if checkpoints:
        try:
            bind_agent_args(agent_id, factory, {"checkpoint": checkpoints[0]})
        except VLNEvalError as exc:
            raise VLNEvalError(f"{said}: {exc}") from None
        return
    try:
        needed = inspect.signature(factory).parameters.get("checkpoint")
    except (TypeError, ValueError):
        return
    required = needed is not None and needed.default is inspect.Parameter.empty
    if required and "checkpoint" not in agent_args:
        raise VLNEvalError(
            f"agent {agent_id} needs a checkpoint (its constructor requires checkpoint=): "
            f"pass {said} FILE [FILE ...]"
        )
