"""Writing executed trajectories as an R2R-format predictions file."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from vlneval.io import atomic_write_bytes

__all__ = ["write_predictions"]


def write_predictions(path: str | Path, records: Iterable[Mapping[str, Any]]) -> Path:
    """Writes ``records`` (``{"instr_id": ..., "trajectory": [[vp, heading, elevation], ...]}``,
    as ``env.prediction()`` returns them) atomically; gzip when the name ends in ``.gz``.

    Example:
        >>> import json, tempfile
        >>> p = write_predictions(tempfile.mkdtemp() + "/p.json", [{"instr_id": "1_0", "trajectory": [["a", 0.0, 0.0]]}])
        >>> json.loads(p.read_text())[0]["trajectory"]
        [['a', 0.0, 0.0]]
    """
    p = Path(path)
    payload = msgspec.json.encode([dict(r) for r in records])  # NaN and infinity: null
    if p.name.endswith(".gz"):
        payload = gzip.compress(payload, mtime=0)
    atomic_write_bytes(p, payload)
    return p
