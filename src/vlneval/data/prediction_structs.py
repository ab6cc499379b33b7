"""The typed form of a predictions file, for msgspec's one checked decoding.

A record is ``{<id field>: id, <trajectory key>: [step, ...], ...}``; the id field and the
trajectory key depend on the task and options, so the record Struct is built for them (and
cached). A step is ``[viewpoint, heading, elevation]`` (``triple``, an ``array_like`` Struct),
a viewpoint id (``plain``) or a list of them (``nested``). The types accept exactly what
:mod:`vlneval.data.predictions` accepts; whatever they reject goes to its explaining pass.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import msgspec

__all__ = ["Step", "TRAJECTORY_KEYS", "decode", "viewpoints"]

TRAJECTORY_KEYS = ("trajectory", "path", "pred_path")


class Step(msgspec.Struct, array_like=True, gc=False):
    """``[viewpoint, heading, elevation]``; heading and elevation may be left out."""

    viewpoint: str
    heading: float | msgspec.UnsetType = msgspec.UNSET
    elevation: float = 0.0


STEP_TYPES: dict[str, Any] = {"triple": Step, "plain": str, "nested": list[str]}


@functools.cache
def _decoder(id_field: str, key: str | None, form: str, keep: tuple[str, ...]) -> Any:
    """A decoder of a list of records (or of JSON lines) with these fields."""
    trajectory = Annotated[list[STEP_TYPES[form]], msgspec.Meta(min_length=1)]  # type: ignore[valid-type]
    keys = (key,) if key else TRAJECTORY_KEYS
    fields: list[tuple[str, Any, Any]] = [("id", int | str, msgspec.NODEFAULT)]
    fields += [(f"t{k}", trajectory, msgspec.UNSET) for k in range(len(keys))]
    fields += [(f"x{k}", Any, msgspec.UNSET) for k in range(len(keep))]
    rename = {"id": id_field} | {f"t{k}": n for k, n in enumerate(keys)}
    rename |= {f"x{k}": n for k, n in enumerate(keep)}
    record = msgspec.defstruct("Record", fields, rename=rename, gc=False)
    return msgspec.json.Decoder(list[record])  # type: ignore[valid-type]


def _decode_as(raw: bytes, source: str, form: str, fields: tuple[Any, ...]) -> list[Any] | None:
    decoder = _decoder(*fields[:2], form, fields[2])
    try:
        if raw.lstrip()[:1] == b"{":  # JSON lines: one record per line
            records = decoder.decode_lines(raw)
            return records if len(records) > 1 or source.endswith((".jsonl", ".jsonl.gz")) else None
        return decoder.decode(raw)  # type: ignore[no-any-return]
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
) -> tuple[str, list[Any]] | None:
    """The form and the records of ``raw``, or None when the types reject it.

    With ``form="auto"`` the forms are tried in turn (a failed attempt stops at its first
    mismatch); a first step ``[viewpoint]`` alone makes the file ``nested``, as the explaining
    pass's detection rule says.

    Example:
        >>> form, recs = decode(b'[{"instr_id": 7, "path": [["a", 1.5, 0]]}]', "p.json",
        ...                     id_field="instr_id", key=None, form="auto")
        >>> form, recs[0].id, viewpoints(recs[0], form)
        ('triple', 7, ['a'])
    """
    fields = (id_field, key, keep)
    for attempt in (form,) if form != "auto" else ("triple", "plain", "nested"):
        records = _decode_as(raw, source, attempt, fields)
        if records is None:
            continue
        if attempt == "triple" and form == "auto" and records:
            first = trajectory(records[0])
            if first is not None and first[0].heading is msgspec.UNSET:
                records, attempt = _decode_as(raw, source, "nested", fields), "nested"
                if records is None:
                    return None
        return attempt, records
    return None


def trajectory(record: Any) -> list[Any] | None:
    """The first trajectory field a record holds (in :data:`TRAJECTORY_KEYS` order)."""
    for name in record.__struct_fields__[1:]:
        if name[0] != "t":
            break
        value = getattr(record, name)
        if value is not msgspec.UNSET:
            return value  # type: ignore[no-any-return]
    return None


def viewpoints(record: Any, form: str) -> list[str] | None:
    """The viewpoints of a record's trajectory in order, None when it has none."""
    steps = trajectory(record)
    if steps is None:
        return None
    if form == "triple":
        return [s.viewpoint for s in steps]
    if form == "nested":
        return [v for s in steps for v in s]
    return steps
