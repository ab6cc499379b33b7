"""Writing executed trajectories as an R2R-format predictions file."""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from vlneval.io import write_outputs

__all__ = ["write_predictions", "predictions_bytes", "measured_block"]


def predictions_bytes(
    path: str | Path, records: Iterable[Mapping[str, Any]] | Mapping[str, Any]
) -> bytes:
    """The bytes :func:`write_predictions` writes: JSON (NaN and infinity as null), gzip when
    the name ends in ``.gz``. ``records`` are a task's records, or VLN-CE's ``{id: steps}``.

    Example:
        >>> predictions_bytes("p.json", [{"instr_id": "1_0", "trajectory": []}])
        b'[{"instr_id":"1_0","trajectory":[]}]'
    """
    listed = records if isinstance(records, Mapping) else [dict(r) for r in records]
    payload = msgspec.json.encode(listed)  # NaN and infinity: null
    return gzip.compress(payload, mtime=0) if str(path).endswith(".gz") else payload


def write_predictions(path: str | Path, records: Iterable[Mapping[str, Any]]) -> Path:
    """Writes ``records`` (``{"instr_id": ..., "trajectory": [[vp, heading, elevation], ...]}``,
    as ``env.prediction()`` returns them) atomically (:func:`vlneval.io.write_outputs`:
    symlinks followed, ``-`` is stdout); gzip when the name ends in ``.gz``.

    Example:
        >>> import json, tempfile
        >>> p = write_predictions(tempfile.mkdtemp() + "/p.json", [{"instr_id": "1_0", "trajectory": [["a", 0.0, 0.0]]}])
        >>> json.loads(p.read_text())[0]["trajectory"]
        [['a', 0.0, 0.0]]
    """
    p = Path(path)
    write_outputs([(path, predictions_bytes(p, records))])
    return p


def measured_block(extras: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The continuous run card's ``measured`` block over episodes' measurements (a run's
    episodes, or the shard lines' ``extra``).

    Example:
        >>> measured_block([])["collisions"]
        0
    """
    import numpy as np

    if not extras:
        return {"mean_path_length_integrated_m": None, "mean_time_s": None, "collisions": 0,
                "clipped_commands": 0}  # fmt: skip
    return {
        "mean_path_length_integrated_m": float(
            np.mean([e["path_length_integrated"] for e in extras])
        ),
        "mean_time_s": float(np.mean([e["time_s"] for e in extras])),
        "collisions": int(sum(e["collisions"] for e in extras)),
        "clipped_commands": int(sum(e["clipped"] for e in extras)),
    }
