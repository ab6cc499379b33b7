"""Predictions given as a path, as bytes, or as in-memory records: how they are named and read.

Every task's reader takes all three (:data:`~vlneval.tasks.common.request.PredictionsInput`):

- a path is read with :func:`vlneval.io.read_bytes` (gzip and size bounded, BOM dropped);
- bytes are what the file would give: :func:`vlneval.io.json_text` gunzips them (bounded) and
  drops a BOM; messages name them ``<bytes>``;
- records are the value ``json.loads`` of such a file gives (a list of records; for VLN-CE's
  ``r2r-ce`` form the object keyed by episode id), checked as the file's records are, never
  written back to JSON text; messages name them ``<records>``.

:func:`read_input` does that once; a task's reader then takes the :class:`ReadInput` (its
records a chunk at a time, or its text for a typed decoder). A :class:`ReadInput` is itself an
input: handed on, it is not read again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlneval.errors import InvalidInputError
from vlneval.io import PATH_CLIP, clip, iter_chunks, iter_records, json_text, read_bytes

if TYPE_CHECKING:
    from vlneval.tasks.common.request import PredictionsInput

__all__ = ["source_name", "ReadInput", "read_input", "keyed_fix"]

#: A str longer than this is no path (Linux's PATH_MAX).
PATH_MAX = 4096


def source_name(predictions: PredictionsInput) -> str:
    """How messages and the summary name ``predictions``.

    Example:
        >>> source_name("p.json"), source_name(b"[]"), source_name([])
        ('p.json', '<bytes>', '<records>')
    """
    if isinstance(predictions, ReadInput):
        return predictions.source
    if isinstance(predictions, (str, Path)):
        return clip(str(predictions), PATH_CLIP)
    return "<bytes>" if isinstance(predictions, (bytes, bytearray, memoryview)) else "<records>"


@dataclass(frozen=True)
class ReadInput:
    """One predictions input, read once.

    Attributes:
        source: how messages name it (the path, ``<bytes>`` or ``<records>``).
        text: the JSON text of a path or of bytes; None for records.
        value: the records given in memory (a list, or a mapping where ``keyed``); None for
            text.
    """

    source: str
    text: bytes | None = None
    value: Any = None

    def chunks(
        self, expected: str, about: Callable[[dict[str, Any]], str] | None = None
    ) -> Iterator[list[Any]]:
        """The records of a JSON list (a file that is not one is refused, saying ``expected``
        and, for an object, ``about`` it: see :func:`~vlneval.io.iter_records`), a chunk at a
        time; records in memory are one chunk.

        Example:
            >>> list(read_input(b"[1, 2]").chunks("a list")), list(read_input([3]).chunks("a list"))
            ([[1, 2]], [[3]])
        """
        if self.text is None:
            return iter([self.value])
        return iter_chunks(self.text, self.source, expected=expected, about=about)

    def record_chunks(
        self, expected: str, about: Callable[[dict[str, Any]], str] | None = None
    ) -> Iterator[list[Any]]:
        """As :meth:`chunks`, the text a JSON list or JSON lines (``about``: see
        :func:`~vlneval.io.iter_records`)."""
        if self.text is None:
            return iter([self.value])
        return iter_records(self.text, self.source, expected=expected, about=about)


def read_input(
    predictions: PredictionsInput,
    *,
    keyed: bool = False,
    about: Callable[[Mapping[Any, Any]], str] | None = None,
) -> ReadInput:
    """``predictions`` read once: a path's text, bytes' text, or the records themselves; a
    :class:`ReadInput` as it is (never read again).

    Args:
        predictions: a path, the bytes of a file, its records, or a :class:`ReadInput`.
        keyed: records may also be a mapping (a format keyed by episode id).
        about: where they may not, ``about(mapping)`` ends the refusal (see :func:`keyed_fix`).

    Raises:
        MissingDataError: no such file.
        InvalidInputError: an unreadable file, damaged or oversized gzip, a str that is JSON
            text rather than a path, or in-memory input that is not a list of records (any
            iterable of records is read once into one).

    Example:
        >>> import gzip
        >>> read_input(gzip.compress(b"[1]"))
        ReadInput(source='<bytes>', text=b'[1]', value=None)
        >>> read_input([{"instr_id": "1_0"}]).value
        [{'instr_id': '1_0'}]
        >>> given = read_input(b"[]"); read_input(given) is given
        True
    """
    if isinstance(predictions, ReadInput):
        if isinstance(predictions.value, Mapping) and not keyed:
            raise _not_records(predictions.source, predictions.value, about)
        return predictions
    if isinstance(predictions, str) and _json_text_not_path(predictions):
        raise InvalidInputError(
            f"<str>: a str is read as a path and this one ({clip(repr(predictions), 30)}) cannot"
            " be one: to score JSON text pass bytes (text.encode()) or the records"
            " (json.loads(text))"
        )
    if isinstance(predictions, (str, Path)):
        return ReadInput(source_name(predictions), text=read_bytes(predictions))
    source = source_name(predictions)
    if isinstance(predictions, (bytes, bytearray, memoryview)):
        return ReadInput(source, text=json_text(bytes(predictions), source))
    if isinstance(predictions, Mapping) and keyed:
        return ReadInput(source, value=predictions)
    if isinstance(predictions, Mapping) or not isinstance(predictions, Iterable):
        raise _not_records(source, predictions, about)
    return ReadInput(source, value=list(predictions))


def _json_text_not_path(text: str) -> bool:
    """Whether ``text`` cannot be a path (JSON text, a newline, too long) and names no file."""
    shaped = text.lstrip()[:1] in ("[", "{") or "\n" in text or len(text) > PATH_MAX
    return shaped and not (len(text) <= PATH_MAX and Path(text).exists())


def _not_records(
    source: str, value: Any, about: Callable[[Mapping[Any, Any]], str] | None = None
) -> InvalidInputError:
    why = about(value) if about is not None and isinstance(value, Mapping) else ""
    return InvalidInputError(
        f"{source}: expected a path, bytes or a list of records, got {type(value).__name__}{why}"
    )


def keyed_fix(
    value: Mapping[Any, Any], id_field: str, key: str | None, *, integer: bool = False
) -> str:
    """The end of the refusal of an object where a list of records is read, when it is keyed
    by episode id (its values all trajectories, or all records without their id): the shape
    read and the conversion (``integer``: the ids are JSON integers, as Touchdown's and NDH's);
    "" for another object (one record, say).

    Example:
        >>> print(keyed_fix({"1_0": [["a", 0, 0]]}, "instr_id", None))
         keyed by id: one list of records is read, [{"instr_id": "1_0", "trajectory": [...]}, ...] (in Python: [{"instr_id": k, "trajectory": v} for k, v in predictions.items()])
        >>> keyed_fix({"instr_id": "1_0", "trajectory": []}, "instr_id", None)
        ''
        >>> print(keyed_fix({"7": {"x": 1, "y": 2}}, "route_id", None, integer=True))
         keyed by id: one list of records is read, [{"route_id": 7, ...}, ...] (in Python: [{"route_id": int(k), **v} for k, v in predictions.items()])
    """
    kinds = {list if isinstance(v, list) else Mapping if isinstance(v, Mapping) else None
             for v in islice(value.values(), 64)}  # fmt: skip
    if id_field in value or len(kinds) != 1 or None in kinds:
        return ""
    first = str(next(iter(value)))
    first = first if integer and first.isdigit() else json.dumps(first)
    k = "int(k)" if integer else "k"
    if kinds == {list}:
        shape = f'{{"{id_field}": {first}, "{key or "trajectory"}": [...]}}'
        record = f'{{"{id_field}": {k}, "{key or "trajectory"}": v}}'
    else:
        shape, record = f'{{"{id_field}": {first}, ...}}', f'{{"{id_field}": {k}, **v}}'
    return (
        f" keyed by id: one list of records is read, [{shape}, ...] (in Python: [{record} for "
        "k, v in predictions.items()])"
    )
