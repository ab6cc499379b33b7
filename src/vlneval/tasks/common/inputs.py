"""Predictions given as a path, as bytes, or as in-memory records: how they are named."""

from __future__ import annotations

from pathlib import Path

from vlneval.errors import VLNEvalError
from vlneval.tasks.common.request import PredictionsInput

__all__ = ["source_name", "require_path"]


def source_name(predictions: PredictionsInput) -> str:
    """How messages and the summary name ``predictions``.

    Example:
        >>> source_name("p.json"), source_name(b"[]"), source_name([])
        ('p.json', '<bytes>', '<records>')
    """
    if isinstance(predictions, (str, Path)):
        return str(predictions)
    return "<bytes>" if isinstance(predictions, (bytes, bytearray, memoryview)) else "<records>"


def require_path(predictions: PredictionsInput, task: str) -> Path:
    """``predictions`` as a path, for tasks whose reader reads files only.

    Raises:
        VLNEvalError: bytes or records were given.
    """
    if isinstance(predictions, (str, Path)):
        return Path(predictions)
    raise VLNEvalError(
        f"task {task} reads its predictions from a file: pass a path (in-memory "
        f"{source_name(predictions)} are read for the R2R family: r2r, r4r, rxr, demo)"
    )
