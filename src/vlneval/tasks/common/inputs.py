"""Predictions given as a path, as bytes, or as in-memory records: read into trajectories.

:func:`read_trajectories` is the one seam between what a caller hands a
:class:`~vlneval.evaluation.Scorer` and the typed predictions of the R2R family's reader
(:class:`~vlneval.tasks.common.predictions.Predictions`). A path goes to the file reader; bytes are
decoded once; records (``[{"instr_id": ..., "trajectory": [[vp, heading, elevation], ...]}]``)
go straight to the reader's per-record validation, never through JSON text.
"""

from __future__ import annotations

from pathlib import Path

from vlneval.errors import InvalidInputError, ProblemCollector, VLNEvalError
from vlneval.graph.store import GraphStore
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.predictions import Predictions, parse_predictions
from vlneval.tasks.common.request import PredictionsInput

__all__ = ["read_trajectories", "source_name", "require_path", "BYTES", "RECORDS"]

BYTES = "<bytes>"
RECORDS = "<records>"


def source_name(predictions: PredictionsInput) -> str:
    """How messages and the summary name ``predictions``.

    Example:
        >>> source_name("p.json"), source_name(b"[]"), source_name([])
        ('p.json', '<bytes>', '<records>')
    """
    if isinstance(predictions, (str, Path)):
        return str(predictions)
    return BYTES if isinstance(predictions, (bytes, bytearray, memoryview)) else RECORDS


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


def read_trajectories(
    predictions: PredictionsInput,
    episodes: EpisodeTable,
    graphs: GraphStore,
    *,
    form: str = "auto",
    trajectory_key: str | None = None,
    keep_fields: tuple[str, ...] = (),
    collect: ProblemCollector | None = None,
    skip_summaries: bool = False,
) -> Predictions:
    """The trajectories of ``predictions`` mapped to node indices (see ``parse_predictions``).

    Raises:
        InvalidInputError: every problem of the input at once (id, field, what was expected).
    """
    if trajectory_key is not None and trajectory_key == episodes.id_field:
        raise InvalidInputError(
            f"--trajectory-key {trajectory_key} names the id field; give the field that holds "
            "the trajectory (trajectory, path, pred_path...)"
        )
    return parse_predictions(
        predictions, episodes, graphs, form=form, trajectory_key=trajectory_key,
        keep_fields=keep_fields, collect=collect, skip_summaries=skip_summaries,
        source=source_name(predictions),
    )  # fmt: skip
