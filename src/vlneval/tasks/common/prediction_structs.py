"""The typed form of a predictions file, for msgspec's one checked decoding.

A record is ``{<id field>: id, <trajectory key>: [step, ...], ...}``; the id field and the
trajectory key depend on the task and options, so the record Struct is built for them (and
cached). A step is ``[viewpoint, heading, elevation]`` (``triple``, an ``array_like`` Struct),
a viewpoint id (``plain``) or a list of them (``nested``). The types accept exactly what
:mod:`vlneval.tasks.common.predictions` accepts; whatever they reject goes to its explaining pass.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from operator import attrgetter, is_
from typing import Annotated, Any, get_args, overload

import msgspec
import numpy as np

from vlneval.io import array_chunks

__all__ = [
    "Step",
    "StepViewpoints",
    "TRAJECTORY_KEYS",
    "decode",
    "convert",
    "columns",
    "record_list",
    "step_names",
    "without_numpy",
]

TRAJECTORY_KEYS = ("trajectory", "path", "pred_path")


#: A finite float: NaN and the infinities fail both bounds (an in-memory record can hold NaN, a
#: JSON number such as 1e400 decodes to inf), so such a step falls to the explaining pass.
Finite = Annotated[float, msgspec.Meta(ge=-sys.float_info.max, le=sys.float_info.max)]


class Step(msgspec.Struct, array_like=True, gc=False):
    """``[viewpoint, heading, elevation]``; heading and elevation may be left out (finite)."""

    viewpoint: str
    heading: Finite | msgspec.UnsetType = msgspec.UNSET
    elevation: Finite = 0.0


#: ``mixed``: either step, for records that write one trajectory in two fields of two forms
#: (NaviLLM: triples in ``trajectory``, ids in ``pred_path``); :func:`_settled` then checks
#: that every record's fields agree and that the fields read hold steps of one form.
STEP_TYPES: dict[str, Any] = {
    "triple": Step,
    "plain": str,
    "nested": list[str],
    "mixed": Step | str,
}


@functools.cache
def _decoder(*, id_field: str, key: str | None, form: str, keep: tuple[str, ...]) -> Any:
    """A decoder of a list of records (or of JSON lines) with these fields."""
    return msgspec.json.Decoder(record_list(id_field=id_field, key=key, form=form, keep=keep))


@functools.cache
def record_list(*, id_field: str, key: str | None, form: str, keep: tuple[str, ...]) -> Any:
    """The type ``list[Record]`` of records with these fields (see :func:`_decoder`)."""
    trajectory = Annotated[list[STEP_TYPES[form]], msgspec.Meta(min_length=1)]  # type: ignore[valid-type]
    keys = (key,) if key else TRAJECTORY_KEYS
    fields: list[tuple[str, Any, Any]] = [("id", int | str, msgspec.NODEFAULT)]
    fields += [(f"t{k}", trajectory, msgspec.UNSET) for k in range(len(keys))]
    fields += [(f"x{k}", Any, msgspec.UNSET) for k in range(len(keep))]
    rename = {"id": id_field} | {f"t{k}": n for k, n in enumerate(keys)}
    rename |= {f"x{k}": n for k, n in enumerate(keep)}
    record = msgspec.defstruct("Record", fields, rename=rename, gc=False)
    return list[record]  # type: ignore[valid-type]


@functools.cache
def _line_decoder(*, id_field: str, key: str | None, form: str, keep: tuple[str, ...]) -> Any:
    """A decoder of JSON lines, one record each (see :func:`_decoder`)."""
    (record,) = get_args(record_list(id_field=id_field, key=key, form=form, keep=keep))
    return msgspec.json.Decoder(record)


def _first(blob: bytes, source: str, form: str, fields: tuple[Any, ...]) -> list[Any] | None:
    """The records of the first chunk ``blob`` (or of a JSON-lines text), or None."""
    decoder = _decoder(id_field=fields[0], key=fields[1], form=form, keep=fields[2])
    try:
        if blob.lstrip()[:1] == b"{":  # JSON lines: one record per line
            lines = _line_decoder(id_field=fields[0], key=fields[1], form=form, keep=fields[2])
            records = lines.decode_lines(blob)
            one = len(records) == 1 and not source.endswith((".jsonl", ".jsonl.gz"))
            return None if one else records  # type: ignore[no-any-return]
        return decoder.decode(blob)  # type: ignore[no-any-return]
    except (msgspec.MsgspecError, RecursionError):
        return None


def decode(
    raw: bytes,
    source: str,
    *,
    id_field: str,
    key: str | None,
    form: str,
    keep: tuple[str, ...] = (),
) -> tuple[str, Iterator[list[Any]]] | None:
    """The form and the records of ``raw`` in chunks (see :func:`vlneval.io.array_chunks`),
    or None when the types reject its first chunk; a later chunk they reject raises
    ``msgspec.MsgspecError`` as it is reached.

    With ``form="auto"`` the forms are tried in turn on the first chunk (a failed attempt stops
    at its first mismatch); a first step ``[viewpoint]`` alone makes the file ``nested``, as
    the explaining pass's detection rule says.

    Example:
        >>> form, chunks = decode(b'[{"instr_id": 7, "path": [["a", 1.5, 0]]}]', "p.json",
        ...                       id_field="instr_id", key=None, form="auto")
        >>> recs = next(chunks)
        >>> ids, lengths, viewpoints, fields = columns(recs, form, 3)
        >>> form, recs[0].id, ids, lengths, list(viewpoints), fields
        ('triple', 7, ['7'], [1], ['a'], ['path'])
    """
    fields = (id_field, key, keep)
    jsonl = raw.lstrip()[:1] == b"{"
    try:
        blobs = iter([raw]) if jsonl else array_chunks(raw)
        blob = next(blobs, b"[]")
    except (msgspec.MsgspecError, RecursionError):
        return None
    for attempt in (form,) if form != "auto" else ("triple", "plain", "nested"):
        records = _first(blob, source, attempt, fields)
        if records is None:
            continue
        if _one_element_steps(records, attempt, form):
            records, attempt = _first(blob, source, "nested", fields), "nested"
            if records is None:
                return None
        return attempt, _chunks(
            records, blobs, _decoder(key=key, id_field=id_field, form=attempt, keep=keep)
        )
    mixed = _mixed(_first(blob, source, "mixed", fields), form) if key is None else None
    if mixed is None:
        return None
    decoder = _decoder(key=key, id_field=id_field, form="mixed", keep=keep)
    return mixed[0], _chunks(mixed[1], blobs, decoder, mixed[0])


def convert(
    records: list[Any], *, id_field: str, key: str | None, form: str, keep: tuple[str, ...] = ()
) -> tuple[str, list[Any]] | None:
    """In-memory records (decoded JSON: dicts and lists) converted to the typed records
    :func:`decode` gives, with the same form detection; None when the types reject them.

    Example:
        >>> form, recs = convert([{"instr_id": "7_0", "trajectory": [["a", 0.0, 0.0]]}],
        ...                      id_field="instr_id", key=None, form="auto")
        >>> ids, lengths, viewpoints, fields = columns(recs, form, 3)
        >>> form, ids, lengths, viewpoints[0], fields
        ('triple', ['7_0'], [1], 'a', ['trajectory'])
    """
    attempts = (form,) if form != "auto" else ("triple", "plain", "nested")
    for attempt in (*attempts, "mixed") if key is None else attempts:
        try:
            typed = msgspec.convert(
                records, record_list(id_field=id_field, key=key, form=attempt, keep=keep)
            )
        except msgspec.ValidationError:
            continue
        if attempt == "mixed":
            return _mixed(typed, form)
        if _one_element_steps(typed, attempt, form):
            return convert(records, id_field=id_field, key=key, form="nested", keep=keep)
        return attempt, typed
    return None


def without_numpy(value: Any, depth: int = 4) -> Any:
    """``value`` with each numpy scalar or array in it as the Python value it holds (an id
    ``np.int64(7)`` as ``7``, a heading ``np.float32`` as a float), down to ``depth`` levels of
    lists, tuples and dicts (records, trajectory, step, angle): an agent's records hold them where
    JSON has numbers, and the types take plain numbers only. The same object when it holds none.

    Example:
        >>> without_numpy([{"id": np.int64(7), "t": [("a", np.float32(0.5), 0)]}])
        [{'id': 7, 't': [['a', 0.5, 0]]}]
        >>> plain = [{"id": 7}]; without_numpy(plain) is plain
        True
    """
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    if depth and type(value) is dict:
        items = {k: without_numpy(v, depth - 1) for k, v in value.items()}
        return value if all(map(is_, items.values(), value.values())) else items
    if depth and type(value) in (list, tuple):
        listed = [without_numpy(v, depth - 1) for v in value]
        return value if all(map(is_, listed, value)) else listed
    return value


def _one_element_steps(records: list[Any], attempt: str, form: str) -> bool:
    """A first step ``[viewpoint]`` alone makes a detected file ``nested``."""
    if attempt != "triple" or form != "auto" or not records:
        return False
    first = trajectory(records[0])
    return first is not None and first[0].heading is msgspec.UNSET


def _mixed(records: list[Any] | None, form: str) -> tuple[str, list[Any]] | None:
    """The form and the records decoded with either step form (``mixed``), once they are
    :func:`_settled`: the form given, else that of the first step (a first step
    ``[viewpoint]`` alone: None, the file is ``nested``); None when the types reject them."""
    first = trajectory(records[0]) if records else None
    if records is None or first is None or form == "nested":
        return None
    step = first[0]
    if form == "auto" and type(step) is Step and step.heading is msgspec.UNSET:
        return None
    found = form if form != "auto" else "plain" if type(step) is str else "triple"
    return (found, records) if _settled(records, found) else None


def _settled(records: list[Any], form: str) -> bool:
    """Whether each record of ``records`` (decoded with either step form) holds its trajectory
    once (:func:`_drop_copies`) in steps of ``form``."""
    if not _drop_copies(records, [n for n in records[0].__struct_fields__ if n[0] == "t"]):
        return False
    read = (t for t in map(trajectory, records) if t is not None)
    return set(map(type, chain.from_iterable(read))) <= {STEP_TYPES[form]}


def _chunks(
    first: list[Any], blobs: Iterator[bytes], decoder: Any, mixed: str | None = None
) -> Iterator[list[Any]]:
    """The records of each chunk; with ``mixed`` (the file's form, decoded with either step
    form) each chunk :func:`_settled`."""
    yield first
    for blob in blobs:
        records = decoder.decode(blob)
        if mixed is not None and records and not _settled(records, mixed):
            raise msgspec.ValidationError("the trajectory fields disagree or mix step forms")
        yield records


def trajectory(record: Any) -> list[Any] | None:
    """The first trajectory field a record holds (in :data:`TRAJECTORY_KEYS` order)."""
    for name in record.__struct_fields__[1:]:
        if name[0] != "t":
            break
        value = getattr(record, name)
        if value is not msgspec.UNSET:
            return value  # type: ignore[no-any-return]
    return None


_VIEWPOINT = attrgetter("viewpoint")
_ID = attrgetter("id")


def step_names(traj: Any) -> Any:
    """The viewpoints of a trajectory field (decoded JSON or typed steps), to compare two
    fields a record holds: NaviLLM writes the same steps as ``trajectory`` triples and as
    ``pred_path`` viewpoints (the first of each list; anything else as it is).

    Example:
        >>> step_names([["a", 0, 0], Step("b"), "c", []]), step_names(None)
        (['a', 'b', 'c', []], None)
    """
    if not isinstance(traj, list):
        return traj
    return [
        s.viewpoint if type(s) is Step else s[0] if isinstance(s, list) and s else s for s in traj
    ]


def _drop_copies(records: list[Any], names: list[str]) -> bool:
    """Unsets each record's fields of ``names`` (trajectory fields) that repeat the viewpoints
    of the first it holds, which is read; False when two name different viewpoints (the
    explaining pass names both).

    Example:
        >>> recs = convert([{"id": 1, "path": ["a"], "pred_path": ["a"]}], id_field="id",
        ...                key=None, form="plain")[1]
        >>> _drop_copies(recs, ["t1", "t2"]), recs[0].t1, recs[0].t2
        (True, ['a'], UNSET)
    """
    for rec in records:
        held = [n for n in names if getattr(rec, n) is not msgspec.UNSET]
        if len(held) < 2:
            continue
        first = _names(getattr(rec, held[0]))
        if any(_names(getattr(rec, n)) != first for n in held[1:]):
            return False
        for n in held[1:]:
            setattr(rec, n, msgspec.UNSET)
    return True


def _names(steps: list[Any]) -> list[Any]:
    """:func:`step_names` of typed steps, in C when they are all of one form."""
    kinds = set(map(type, steps))
    if kinds == {Step}:
        return list(map(_VIEWPOINT, steps))
    return steps if kinds == {str} else step_names(steps)  # type: ignore[no-any-return]


class StepViewpoints(Sequence[str]):
    """The viewpoints of ``[viewpoint, heading, elevation]`` steps, in order, read from the
    steps on each pass: mapping them to nodes needs one pass, and no list of them is built
    unless a position is asked for (to name a viewpoint that is not a node)."""

    def __init__(self, trajectories: list[list[Step]], size: int) -> None:
        self._trajectories, self._size = trajectories, size
        self._list: list[str] | None = None

    def __iter__(self) -> Iterator[str]:
        return map(_VIEWPOINT, chain.from_iterable(self._trajectories))

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if self._list is None:
            self._list = list(self)
        return self._list[index]


def _fields(records: list[Any], first_used: bool, n_keys: int) -> list[str] | None:
    """The trajectory fields some of ``records`` read, in :data:`TRAJECTORY_KEYS` order
    (``first_used``: whether some record holds the first field), or None when a record holds
    two naming different viewpoints: a type test of each field's column in C, a record at a
    time only when two fields are both used (a record's copies of its first are dropped).

    Example:
        >>> recs = convert([{"id": 1, "path": ["a"]}, {"id": 2, "trajectory": ["b"]}],
        ...                id_field="id", key=None, form="plain")[1]
        >>> _fields(recs, True, 3)
        ['trajectory', 'path']
    """
    used = [0] if first_used else []
    used += [k for k in range(1, n_keys) if _used(map(attrgetter(f"t{k}"), records))]
    if len(used) > 1:
        if not _drop_copies(records, [f"t{k}" for k in used]):
            return None
        used = [k for k in used if _used(map(attrgetter(f"t{k}"), records))]
    return [TRAJECTORY_KEYS[k] for k in used]


def _used(column: Iterable[Any]) -> bool:
    return set(map(type, column)) != {msgspec.UnsetType}


def columns(
    records: list[Any], form: str, n_keys: int
) -> tuple[list[str], list[int], Sequence[str], list[str]] | None:
    """Each record's id (as text) and number of viewpoints, all viewpoints in order, and the
    trajectory fields the records hold (none listed when ``n_keys`` is 1); None
    when a record holds no trajectory field, or an integer id too long for ``str`` (more
    digits than Python writes, 4,300 by default), for the explaining pass to name.

    ``n_keys`` is the number of trajectory fields the records were decoded with.
    """
    trajs = list(map(attrgetter("t0"), records))
    # Every decoded trajectory is a list: a type test a record at a time, in C, made once.
    kinds = set(map(type, trajs))
    fields = _fields(records, kinds != {msgspec.UnsetType}, n_keys) if n_keys > 1 else []
    if fields is None:
        return None
    if n_keys > 1 and kinds != {list}:  # a record names it otherwise
        trajs = [trajectory(r) for r in records]
        kinds = set(map(type, trajs))
    if trajs and kinds != {list}:  # UNSET or None: none given
        return None
    try:
        ids = list(map(str, map(_ID, records)))
    except ValueError:
        return None
    if form == "triple":
        lengths = list(map(len, trajs))
        return ids, lengths, StepViewpoints(trajs, sum(lengths)), fields
    if form == "plain":
        return ids, list(map(len, trajs)), list(chain.from_iterable(trajs)), fields
    steps: Iterator[list[str]] = chain.from_iterable(trajs)
    lengths = [sum(map(len, t)) for t in trajs]
    return ids, lengths, list(chain.from_iterable(steps)), fields
