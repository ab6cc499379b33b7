"""Predictions given as a path, as bytes, or as in-memory records: read into trajectories.

:func:`read_trajectories` is the one seam between what a caller hands a
:class:`~vlneval.evaluation.Scorer` and the typed predictions of the R2R family's reader
(:class:`~vlneval.data.predictions.Predictions`). A path goes to the file reader; bytes are
decoded once; records (``[{"instr_id": ..., "trajectory": [[vp, heading, elevation], ...]}]``)
go straight to the reader's per-record validation, never through JSON text.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np

from vlneval.data.episodes import EpisodeTable
from vlneval.data.predictions import Predictions, parse_predictions
from vlneval.errors import InvalidInputError, ProblemCollector, VLNEvalError
from vlneval.evaluation.request import PredictionsInput
from vlneval.graph.store import GraphStore

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
    if isinstance(predictions, (str, Path)):
        return parse_predictions(
            predictions, episodes, graphs, form=form, trajectory_key=trajectory_key,
            keep_fields=keep_fields, collect=collect, skip_summaries=skip_summaries,
        )  # fmt: skip
    records, source = _records(predictions)
    return _from_records(
        records, source, episodes, graphs, form=form, trajectory_key=trajectory_key,
        keep_fields=keep_fields, collect=collect, skip_summaries=skip_summaries,
    )  # fmt: skip


def _records(predictions: Any) -> tuple[Sequence[Any], str]:
    if isinstance(predictions, (bytes, bytearray, memoryview)):
        from vlneval.data.jsonio import gunzipped, iter_records

        raw = gunzipped(bytes(predictions), BYTES)
        chunks = iter_records(raw, BYTES, expected="a JSON list of predictions")
        return [rec for chunk in chunks for rec in chunk], BYTES
    if isinstance(predictions, Mapping) or not isinstance(predictions, Sequence):
        raise InvalidInputError(
            f"predictions: expected a path, bytes or a list of records, got "
            f"{type(predictions).__name__}"
        )
    return predictions, RECORDS


def _from_records(
    records: Sequence[Any],
    source: str,
    episodes: EpisodeTable,
    graphs: GraphStore,
    *,
    form: str,
    trajectory_key: str | None,
    keep_fields: tuple[str, ...],
    collect: ProblemCollector | None,
    skip_summaries: bool,
) -> Predictions:
    """Decoded records through the reader's own per-record validation (the dicts path)."""
    # The one place that knows the reader's internals: re-point it when the reader changes.
    from vlneval.data.predictions import FORMS, _assemble, _Parser

    if form not in FORMS:
        from vlneval.errors import UnknownNameError

        raise UnknownNameError("trajectory form", form, FORMS)
    if form in ("auto", "triple") and trajectory_key in (None, "trajectory") and not keep_fields:
        typed = _typed(records, source, episodes, graphs)
        if typed is not None:
            return typed
    # The explaining pass: every record validated in Python, every problem named.
    p = _Parser(source, episodes, graphs, form, trajectory_key, keep_fields, skip_summaries)
    for k, rec in enumerate(records):
        p.record(rec, k)
    if not records:
        p.pc.add("the file holds no predictions")
    if collect is None:
        p.pc.raise_if_any()
    else:
        collect.problems.extend(p.pc.problems)
    return _assemble(p, source)


_FINITE = Annotated[float, msgspec.Meta(ge=-1.7976931348623157e308, le=1.7976931348623157e308)]


class _Step(msgspec.Struct, array_like=True):
    """One ``[viewpoint, heading, elevation]`` step (the angles are not used by the metrics)."""

    viewpoint: str
    heading: _FINITE = 0.0
    elevation: _FINITE = 0.0


@functools.cache
def _records_type(id_field: str) -> Any:
    """``list[Record]`` for records whose id is ``id_field`` (``instr_id``, ``instruction_id``)."""
    record = msgspec.defstruct("Record", [(id_field, str | int), ("trajectory", list[_Step])])
    return list[record]  # type: ignore[valid-type]


def _typed(
    records: Sequence[Any], source: str, episodes: EpisodeTable, graphs: GraphStore
) -> Predictions | None:
    """Triple-form records converted by msgspec in one typed pass; None when they need the
    explaining pass (a type msgspec rejects, an unknown viewpoint, a duplicate, an empty
    trajectory), which then names every problem."""
    from vlneval.data.predictions import _assemble, _Parser

    idf = episodes.id_field
    try:
        typed = msgspec.convert(records, _records_type(idf))
    except msgspec.ValidationError:
        return None
    if not typed:
        return None
    p = _Parser(source, episodes, graphs, "triple", None, ())
    index, left_out = episodes.index, p.left_out
    eps, lens, flat = [], [], []
    for rec in typed:
        eid = str(getattr(rec, idf))
        i = index.get(eid)
        if i is None:
            (p.ignored if eid in left_out else p.unknown).append(eid)
            continue
        if p.seen[i] or not rec.trajectory:
            return None
        p.seen[i] = True
        nodes = graphs.graph(episodes.scans[i]).index
        path = [nodes.get(step.viewpoint, -1) for step in rec.trajectory]
        if -1 in path:
            return None
        eps.append(i)
        lens.append(len(path))
        flat.extend(path)
    arrays = (
        np.asarray(eps, dtype=np.int64),
        np.asarray(lens, dtype=np.int64),
        np.asarray(flat, dtype=np.int32),
    )
    return _assemble(p, source, arrays)
