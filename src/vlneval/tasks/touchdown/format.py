"""Touchdown route files and predictions (Chen et al. 2019; lil-lab/touchdown).

Route files are JSON lines (``train.json``, ``dev.json``, ``test.json``; the unseen-area
re-split of Schumann & Riezler 2022 has the same schema): ``{route_id, route_panoids,
start_heading, end_heading (degrees), navigation_text, td_location_text, main_pano, pre_pano,
post_pano, main_static_center, ...}``. The ``*_static_center`` fields are JSON text
``{"x": width ratio, "y": height ratio}`` of Touchdown's location (``{-1, -1}``: not visible).

Navigation predictions: a JSON list (or JSON lines) of ``{route_id: int, trajectory: [...]}``,
the trajectory a list of panorama ids or of ``[panorama, heading, ...]`` graph states, start
included. SDR predictions: ``{route_id: int, pano: "main" | "pre" | "post" (default main), x, y}``
in pixels of the profile's panorama frame.
"""

from __future__ import annotations

import functools
import json
import math
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from vlneval.errors import (
    InvalidInputError,
    LabelNote,
    ProblemCollector,
    UnknownNameError,
    VLNEvalError,
    hint,
    hinted,
)
from vlneval.io import LineNumbers, brief, decode_json, explain, gc_paused, iter_records
from vlneval.tasks.common import record_checks
from vlneval.tasks.common.episodes import EpisodeBuilder, EpisodeTable
from vlneval.tasks.common.inputs import ReadInput, keyed_fix, read_input, source_name
from vlneval.tasks.common.jsonl import decode_line
from vlneval.tasks.common.prediction_structs import without_numpy
from vlneval.tasks.common.predictions import Predictions, in_episode_order
from vlneval.tasks.common.record_checks import (
    FieldTally,
    Repeats,
    UniqueIds,
    is_finite,
    is_number,
    numbered,
    shown_number,
    shown_value,
)
from vlneval.tasks.common.request import PredictionsInput
from vlneval.tasks.common.summary_records import SummarySkips

if TYPE_CHECKING:
    from vlneval.graph.street import StreetGraph

__all__ = [
    "SDR_KINDS",
    "SDRExamples",
    "TouchdownRoutes",
    "load_touchdown",
    "load_touchdown_routes",
    "parse_touchdown_predictions",
    "parse_sdr_predictions",
]

SDR_KINDS = ("main", "pre", "post")
ID_LIKE = (*record_checks.ID_LIKE, "route", "routeid")


@dataclass
class SDRExamples(EpisodeTable):
    """The SDR examples of a split (ids ``"<route_id>_<kind>"``, id field ``sdr_id``).

    Attributes:
        route_ids: the route id of each example, as text: what a predictions file names it by.
    """

    route_ids: list[str] = field(default_factory=list)
    ROW_COLUMNS = (*EpisodeTable.ROW_COLUMNS, "route_ids")

    def submitted_ids(self) -> tuple[str, list[str]]:
        """``route_id`` and the route ids: one record predicts the examples of a route."""
        return "route_id", self.route_ids


@dataclass
class TouchdownRoutes:
    """The routes of one split: the episode table and the SDR examples.

    The table's ids are the ``route_id`` values, scans the city, paths ``route_panoids``, goals
    the last panorama, headings ``start_heading`` in radians, instructions ``navigation_text``.
    The SDR examples, one per route and panorama kind whose Touchdown location is known, are a
    table too (:class:`SDRExamples`): ids ``"<route_id>_<kind>"`` (id field ``sdr_id``), scans
    the route's city, path and goal the panorama, instructions ``td_location_text``; ``target``
    holds each one's true location as ``(n, 2)`` (width ratio, height ratio).
    """

    table: EpisodeTable
    sdr: SDRExamples
    target: np.ndarray


def _center(value: Any, key: str, where: str, pc: ProblemCollector) -> tuple[float, float] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            pc.add(
                f'{key} must be JSON text {{"x": ..., "y": ...}}, got {brief(value, 60)}',
                field=where,
            )
            return None
    if not (isinstance(value, dict) and all(is_number(value.get(c)) for c in "xy")):
        pc.add(f"{key} must hold numbers x and y, got {brief(value, 60)}", field=where)
        return None
    x, y = float(value["x"]), float(value["y"])
    if (x, y) == (-1.0, -1.0):
        return None
    if not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
        pc.add(f"{key} must be ratios in [0, 1] (or -1, -1), got x={x}, y={y}", field=where)
        return None
    return x, y


def _at(where: str, key: str) -> str:
    """Field ``key`` of the record at ``where`` (:func:`_where`): ``record 3.route_panoids`` in
    a list, ``line 4: route_panoids`` in JSON lines (as the R2R reader names a line's field).

    Example:
        >>> _at("record 3", "route_panoids"), _at("line 4", "route_panoids")
        ('record 3.route_panoids', 'line 4: route_panoids')
    """
    return f"{where}: {key}" if where.startswith("line ") else f"{where}.{key}"


def _check_route(rec: Any, where: str, pc: ProblemCollector) -> bool:
    if not isinstance(rec, dict):
        pc.add(f"expected an object, got {type(rec).__name__}", field=where)
        return False
    ok = True
    rid = rec.get("route_id")
    if isinstance(rid, bool) or not isinstance(rid, int):
        pc.add(f"route_id must be an integer, got {brief(rid, 40)}", field=where)
        ok = False
    route = rec.get("route_panoids")
    if not isinstance(route, list) or not route or set(map(type, route)) != {str}:
        pc.add(
            "route_panoids must be a non-empty list of panorama ids",
            field=_at(where, "route_panoids"),
        )
        ok = False
    heading = rec.get("start_heading", 0.0)
    if isinstance(heading, str):
        try:
            heading = float(heading)
        except ValueError:
            heading = None
    if not is_finite(heading):
        pc.add(f"start_heading must be a finite number of degrees, got {brief(rec.get('start_heading'), 40)}",
               field=_at(where, "start_heading"))  # fmt: skip
        ok = False
    if not isinstance(rec.get("navigation_text", ""), str):
        pc.add("navigation_text must be a string", field=_at(where, "navigation_text"))
        ok = False
    return ok


def _add_sdr(
    rec: dict[str, Any],
    where: str,
    sdr: EpisodeBuilder,
    xy: list[tuple[float, float]],
    route_ids: list[str],
    pc: ProblemCollector,
) -> None:
    for kind in SDR_KINDS:
        key = f"{kind}_static_center"
        if key not in rec:
            continue
        center = _center(rec[key], key, where, pc)
        pano = rec.get(f"{kind}_pano")
        if center is None:
            continue
        if not isinstance(pano, str):
            pc.add(f"{kind}_pano must be a panorama id", field=where)
            continue
        city, text = str(rec.get("city", "nyc")), str(rec.get("td_location_text", ""))
        sdr.add(f"{rec['route_id']}_{kind}", city, [pano], None, 0.0, text)
        route_ids.append(str(rec["route_id"]))
        xy.append(center)


def load_touchdown_routes(
    path: str | Path, *, task: str = "touchdown", split: str = ""
) -> TouchdownRoutes:
    """Loads a Touchdown route file (JSON lines or a JSON list, optionally gzipped).

    Raises:
        InvalidInputError: every malformed route, named by its line (record) and field.
    """
    path = Path(path)
    source = str(path)
    pc = ProblemCollector(source)
    builder = EpisodeBuilder()
    sdr = EpisodeBuilder()
    xy: list[tuple[float, float]] = []
    route_ids: list[str] = []
    unique = UniqueIds("route_id", pc)
    lines = LineNumbers()
    routes = (_records(read_input(path), "Touchdown routes (JSON lines)", lone=True, lines=lines),)
    for k, rec in numbered(routes, pc, "routes"):
        line = lines.of(k)
        where = _where(k, line)
        if not _check_route(rec, where, pc):
            continue
        if not unique.first(rec["route_id"], k, line=line):
            continue
        _add_sdr(rec, where, sdr, xy, route_ids, pc)
        heading = math.radians(float(rec.get("start_heading", 0.0)))
        text = rec.get("navigation_text", "")
        builder.add(
            str(rec["route_id"]),
            str(rec.get("city", "nyc")),
            rec["route_panoids"],
            None,
            heading,
            text,
        )
    pc.raise_if_any()
    table = builder.build(task=task, split=split, source=source, id_field="route_id")
    table.int_ids = True  # route ids are JSON integers (checked above), named bare
    built = sdr.build(task=task, split=split, source=source, id_field="sdr_id")
    examples = SDRExamples(
        **{f.name: getattr(built, f.name) for f in fields(EpisodeTable) if f.init},
        route_ids=route_ids,
    )
    return TouchdownRoutes(table, examples, np.asarray(xy, dtype=np.float64).reshape(-1, 2))


def load_touchdown(path: str | Path, *, task: str = "touchdown", split: str = "") -> EpisodeTable:
    """The routes of a Touchdown file as an :class:`EpisodeTable` (the task registry's loader)."""
    return load_touchdown_routes(path, task=task, split=split).table


_UNREAD = object()  # a line not decoded yet (None is a JSON line's value)


def _keyed(key: str | None) -> Callable[[Mapping[Any, Any]], str]:
    """How to list the records of an object keyed by route id (:func:`keyed_fix`)."""
    return functools.partial(keyed_fix, id_field="route_id", key=key, integer=True)


def _sdr_keyed(value: Mapping[Any, Any]) -> str:
    """:func:`_keyed` of an object of SDR records only: an SDR prediction is no trajectory."""
    return _keyed(None)(value) if isinstance(next(iter(value.values()), None), Mapping) else ""


def _records(
    given: ReadInput,
    expected: str = "a JSON list of predictions",
    *,
    lone: bool = False,
    about: Callable[[dict[str, Any]], str] | None = None,
    lines: LineNumbers | None = None,
) -> Iterator[Any]:
    """The records of a JSON list or a JSON-lines file, decoded a chunk at a time (a large
    file's full object tree never exists at once); records in memory as they are. A file of
    one JSON object is one record when ``lone`` or named ``.jsonl``, else refused (as the R2R
    reader refuses it: an object keyed by id is no list of records). A record in memory is
    read with each numpy value as the Python value it holds (an agent's ``np.int64`` route id
    is the integer it holds), as the R2R reader reads it. ``about(obj)`` ends the refusal of
    one object (:func:`~vlneval.tasks.common.inputs.keyed_fix`). ``lines``, when given, learns
    where the records of JSON lines are, for a problem to name a record's line."""
    if given.text is None:
        yield from map(without_numpy, given.value)
        return
    source, raw = given.source, given.text
    if raw.lstrip()[:1] != b"{":
        for chunk in iter_records(raw, source, expected=expected, about=about):
            yield from chunk
        return
    decoder = msgspec.json.Decoder()
    text_lines = raw.splitlines()
    first = next(line for line in text_lines if line.strip())
    head: Any = _UNREAD  # the first line decoded here, once, and yielded by the loop below
    try:
        head = decoder.decode(first)
    except msgspec.DecodeError:
        try:  # a NaN or Infinity in a JSON line: read leniently, its field named by the checks
            head = explain(first, source)
        except InvalidInputError:
            whole = decode_json(raw, source)  # one multi-line JSON value, or a syntax error
            kind = "JSON object" if isinstance(whole, dict) else type(whole).__name__
            why = about(whole) if about is not None and isinstance(whole, dict) else ""
            raise InvalidInputError(
                f"expected {expected}, got a {kind}{why}", source=source
            ) from None
    except RecursionError:  # a JSON line too deep to decode: named by the loop below
        pass
    else:
        if not (lone or source.endswith((".jsonl", ".jsonl.gz"))) and raw.strip() == first.strip():
            why = about(head) if about is not None and isinstance(head, dict) else ""
            raise InvalidInputError(f"expected {expected}, got a JSON object{why}", source=source)
    del raw, given, first  # each line is freed once decoded: the text is not kept beside them
    for lineno, line in enumerate(text_lines, start=1):
        text_lines[lineno - 1] = b""  # free each line once decoded
        if not line.strip():
            continue
        if lines is not None:
            lines.note(lineno)
        if head is not _UNREAD:
            yield head
            head = _UNREAD
            continue
        try:  # NaN or Infinity (Python's json writes them) read: the record checks name it
            yield decode_line(decoder, line, lenient=True)
        except ValueError as exc:
            raise InvalidInputError(f"line {lineno}: {exc}", source=source) from None


class _IdTally(FieldTally):
    """File-level facts about ``route_id`` gathered while streaming, for one clear error."""

    def __init__(self) -> None:
        super().__init__("route_id")
        self.strings = 0
        self.first_string: str | None = None

    def see(self, rec: Any) -> None:
        super().see(rec)
        rid = rec.get("route_id") if isinstance(rec, dict) else None
        if isinstance(rid, str):
            self.strings += 1
            self.first_string = self.first_string if self.first_string is not None else rid

    def check(self, source: str) -> None:
        why = " (Touchdown predictions are keyed by the integer route_id of each route)"
        self.refuse(source, why, ID_LIKE)
        if self.with_field and self.strings == self.with_field:
            raise InvalidInputError(
                f"route_id is a string in all {self.strings} records (e.g. {self.first_string!r}); "
                "the route files use integers: write route_id as a JSON number",
                source=source,
            )


def _check_visited(tally: FieldTally, source: str) -> None:
    """One error when no navigation record has the trajectory: the records' keys, and an SDR
    file or the list field to pass as ``--trajectory-key`` said so."""
    fix = _use("touchdown-sdr") if {"x", "y"} <= tally.keys else tally.key_hint("route_id")
    tally.refuse(source, " (the panoramas visited, start included)", fix=fix)


def _use(task: str, kind: str = "") -> str:
    """The advice to score the file as ``task`` (``kind``: what it looks like, default ``task``)."""
    return hinted(
        f"; this looks like a {kind or task} file",
        hint("--task", f"use --task {task}", lead=": "),
    )


def _where(k: int, line: int | None) -> str:
    """Where record ``k`` is, as a problem names it: its ``line`` in JSON lines (1-based, blank
    lines counted, as the R2R reader names them), else (None) its place in the list.

    Example:
        >>> _where(0, None), _where(0, 2)
        ('record 0', 'line 2')
    """
    return f"record {k}" if line is None else f"line {line}"


def _route_id(rec: dict[str, Any], where: str, pc: ProblemCollector) -> int | None:
    if "route_id" not in rec:
        pc.add("missing field 'route_id'", field=where)
        return None
    rid = rec["route_id"]
    if isinstance(rid, bool) or not isinstance(rid, int):
        pc.add(f"route_id must be a JSON integer, got {shown_value(rid)}", field=where)
        return None
    return rid


class _NavParser:
    def __init__(
        self, table: EpisodeTable, graph: StreetGraph, source: str, form: str, key: str, skip: bool
    ) -> None:
        self.table, self.graph, self.form, self.key = table, graph, form, key
        self.summaries = SummarySkips("route_id", key, skip)
        self.pc = ProblemCollector(source)
        self.flat = array("i")
        self.rec_ep = array("q")
        self.rec_len = array("q")
        self.seen = np.zeros(len(table), dtype=np.bool_)
        self.unknown: list[str | int] = []  # route ids as written: JSON integers
        self.repeats = Repeats()

    def _panos(self, traj: Any, label: str) -> list[str] | None:
        if not isinstance(traj, list):  # worded as the R2R reader words it
            got = "null" if traj is None else type(traj).__name__
            self.pc.add(f"{self.key} must be a list, got {got}", episode=label, field=self.key)
            return None
        if not traj:
            empty = "empty trajectory (it must include the start panorama)"
            self.pc.add(empty, episode=label, field=self.key)
            return None
        if self.form == "auto":
            self.form = "plain" if isinstance(traj[0], str) else "triple"
        if self.form == "plain" and set(map(type, traj)) == {str}:
            return traj  # the common case, checked in one C-level pass
        for j, step in enumerate(traj):
            plain = self.form == "plain"
            pano = step if plain else (step[0] if isinstance(step, list) and step else None)
            if not isinstance(pano, str) or not (plain or _finite_rest(step)):
                expected = (
                    "a panorama id" if plain else "[panorama, heading, ...] with finite numbers"
                )
                self.pc.add(
                    f"expected {expected}, got {brief(step, 60)}",
                    episode=label,
                    field=f"{self.key}[{j}]",
                )
                return None
        return [step[0] for step in traj]

    def record(self, rec: Any, k: int, line: int | None = None) -> None:
        """Reads record ``k`` (on ``line`` of JSON lines, which a repeat's problem names)."""
        if not self.summaries.reads(rec, k, self.pc):
            return
        rid = _route_id(rec, _where(k, line), self.pc)
        if rid is None:
            return
        i = self.table.index.get(str(rid))
        if i is None:
            self.unknown.append(rid)
            return
        label = self.table.label(i)
        if self.seen[i]:
            self.repeats.see(i, line)
            return
        self.seen[i] = True
        self.repeats.first(i, line)
        if self.key not in rec:
            self.pc.add(f"missing field {self.key!r}", episode=label)
            return
        panos = self._panos(rec[self.key], label)
        if panos is None:
            return
        nodes = list(map(self.graph.index.get, panos))
        if None in nodes:
            j = nodes.index(None)
            self.pc.add(
                self.graph.describe_missing(panos[j]), episode=label, field=f"{self.key}[{j}]"
            )
            return
        self.flat.extend(nodes)  # type: ignore[arg-type]  # no None left
        self.rec_ep.append(i)
        self.rec_len.append(len(nodes))


def _finite_rest(step: list[Any]) -> bool:
    rest = step[1:]
    return all(map(is_finite, rest))


@gc_paused()  # the decoded records hold no cycle: no collection need walk them
def parse_touchdown_predictions(
    predictions: PredictionsInput,
    table: EpisodeTable,
    graph: StreetGraph,
    *,
    form: str = "auto",
    trajectory_key: str | None = None,
    skip_summaries: bool = False,
    collect: ProblemCollector | None = None,
) -> Predictions:
    """Reads navigation predictions and maps every panorama to a street-graph node.

    Args:
        predictions: a JSON list (or JSON lines) of ``{route_id, trajectory}``: the file,
            its bytes, or its records (the list ``json.loads`` of the file gives).
        table: the split's routes.
        graph: the street graph.
        form: ``auto``, ``plain`` (panorama ids) or ``triple`` (``[panorama, heading, ...]``).
        trajectory_key: the field holding the trajectory (default ``trajectory``).
        skip_summaries: skip, with a warning, records that look like the file's own summary
            (:mod:`~vlneval.tasks.common.summary_records`); else each is an error that
            suggests this option.
        collect: when given, the records' problems are added to it instead of raised, for the
            rule checks to add theirs (completeness first) and show them all together.

    Raises:
        InvalidInputError: every structural problem (file, route_id and field named).
    """
    if form not in ("auto", "plain", "triple"):
        if form == "nested":
            raise VLNEvalError(
                "trajectory form 'nested' does not apply to Touchdown (use plain or triple)"
            )
        raise UnknownNameError("trajectory form", form, ("auto", "plain", "triple"))
    source = source_name(predictions)
    p = _NavParser(table, graph, source, form, trajectory_key or "trajectory", skip_summaries)
    tally, visited = _IdTally(), FieldTally(p.key)
    keyed = _keyed(p.key)
    given, lines = read_input(predictions, about=keyed), LineNumbers()
    for k, rec in numbered((_records(given, about=keyed, lines=lines),), p.pc, "predictions"):
        tally.see(rec)
        visited.see(rec)
        p.record(rec, k, lines.of(k))
    tally.check(source)
    _check_visited(visited, source)
    p.repeats.report(p.pc, table.label)
    _raise_or_collect(p.pc, collect)
    return _assemble(p, source)


def _raise_or_collect(pc: ProblemCollector, collect: ProblemCollector | None) -> None:
    """Raises the problems of ``pc``, or adds them to ``collect`` when one is given."""
    if collect is None:
        pc.raise_if_any()
    else:
        collect.problems.extend(pc.problems)


def _assemble(p: _NavParser, source: str) -> Predictions:
    rec_ep = np.frombuffer(p.rec_ep, dtype=np.int64) if len(p.rec_ep) else np.zeros(0, np.int64)
    rec_len = np.frombuffer(p.rec_len, dtype=np.int64) if len(p.rec_len) else np.zeros(0, np.int64)
    flat = np.frombuffer(p.flat, dtype=np.int32) if len(p.flat) else np.zeros(0, np.int32)
    episodes, nodes, offsets = in_episode_order(rec_ep, rec_len, flat, len(p.seen))
    warnings = p.summaries.notes()
    if p.unknown:
        warnings.append(
            f"{len(p.unknown)} prediction(s) with route ids not in the split were ignored "
            f"(first: {', '.join(map(str, p.unknown[:5]))})"
        )
    missing = [p.table.ids[i] for i in np.flatnonzero(~p.seen)]
    return Predictions(
        source=source, form=p.form if p.form != "auto" else "plain", episodes=episodes,
        nodes=nodes, offsets=offsets, warnings=warnings, missing=missing, unknown=p.unknown,
    )  # fmt: skip


def _sdr_record(
    rec: Any, where: str, frame: tuple[float, float], pc: ProblemCollector
) -> tuple[int, str, tuple[float, float] | None] | None:
    """The route id, example id and pixels of one SDR record (at ``where``: its line or its
    place, see :func:`_where`; pixels None when they are malformed: the example is predicted,
    though not well); None without a valid id."""
    if not isinstance(rec, dict):
        pc.add(f"expected an object, got {type(rec).__name__}", field=where)
        return None
    rid = _route_id(rec, where, pc)
    if rid is None:
        return None
    kind = rec.get("pano", "main")
    label = f"route_id {rid}"  # a JSON integer, shown as written
    if kind not in SDR_KINDS:
        pc.add(
            f"pano must be one of {', '.join(SDR_KINDS)}, got {shown_value(kind)}",
            episode=label,
            field="pano",
        )
        return None
    return rid, f"{rid}_{kind}", _pixels(rec, f'SDR "{rid}_{kind}"', frame, pc)


def _pixels(
    rec: dict[str, Any], label: str, frame: tuple[float, float], pc: ProblemCollector
) -> tuple[float, float] | None:
    xy = []
    for c, limit in zip("xy", frame, strict=True):
        v = rec.get(c)
        if c not in rec:
            pc.add(f"missing field {c!r} (a pixel coordinate)", episode=label)
            return None
        if not is_finite(v):  # worded as the R2R reader words a heading
            why = f"is {shown_number(v)} (must be finite)" if is_number(v) else ""
            why = why or f"must be a finite number of pixels, got {shown_value(v)}"
            pc.add(f"{c} {why}", episode=label, field=c)
            return None
        if not 0 <= v <= limit:
            pc.add(
                f"{c} = {v} lies outside the {frame[0]:g} x {frame[1]:g} px panorama",
                episode=label,
                field=c,
            )
            return None
        xy.append(float(v))
    return xy[0], xy[1]


@gc_paused()  # the decoded records hold no cycle: no collection need walk them
def parse_sdr_predictions(
    predictions: PredictionsInput,
    examples: EpisodeTable,
    *,
    frame: tuple[float, float],
    routes: EpisodeTable,
    collect: ProblemCollector | None = None,
) -> tuple[Predictions, np.ndarray]:
    """Reads SDR predictions ``{route_id, pano, x, y}`` (pixels of a ``frame`` = (width, height)
    panorama; a file, its bytes or its records) and aligns them to ``examples``: the predicted
    examples (``episodes``, ascending; no trajectories) and their ``(k, 2)`` pixel coordinates
    ``(x, y)``. The route ids of the records whose route is not one of the split's ``routes``
    (its route table) are ``unknown``: a route of the split none of whose panoramas has a
    known location has no example, yet is no stray. ``collect``: as for
    :func:`parse_touchdown_predictions`.

    Raises:
        InvalidInputError: every malformed record, duplicates, points outside the panorama.
    """
    source = source_name(predictions)
    tally, pixels = _IdTally(), FieldTally("x")
    pc = ProblemCollector(source)
    index = examples.index
    got: dict[int, tuple[float, float] | None] = {}
    unknown: list[str] = []
    route_index = routes.index
    strays: list[str | int] = []  # the route ids of the records for none of the split's routes
    repeats = Repeats()  # as the R2R reader words it: the label names the route and panorama
    keyed, lines = _sdr_keyed, LineNumbers()
    given = read_input(predictions, about=keyed)
    for k, rec in numbered((_records(given, about=keyed, lines=lines),), pc, "predictions"):
        tally.see(rec)
        pixels.see(rec)
        line = lines.of(k)
        parsed = _sdr_record(rec, _where(k, line), frame, pc)
        if parsed is None:
            continue
        rid, eid, xy = parsed
        i = index.get(eid)
        if i is None:
            unknown.append(eid)
            if str(rid) not in route_index:
                strays.append(rid)
        elif i in got:
            repeats.see(eid, line)
        else:
            repeats.first(eid, line)
            got[i] = xy  # None when malformed: named above, and not reported missing
    repeats.report(pc, lambda eid: f'SDR "{eid}"')
    tally.check(source)
    why = " (SDR predictions are {route_id, pano, x, y} in pixels)"  # a navigation file?
    fix = _use("touchdown", "touchdown (navigation)") if pixels.lists else ""
    pixels.refuse(source, why, fix=fix)
    _raise_or_collect(pc, collect)
    order = np.array(sorted(i for i, xy in got.items() if xy is not None), dtype=np.int64)
    points = np.array([got[i] for i in order.tolist()], dtype=np.float64).reshape(-1, 2)
    warnings: list[str] = (  # which panoramas show the target is a label: a server hides it
        [LabelNote(f"{len(unknown)} SDR prediction(s) for routes/panoramas without a known "
                   f"location were ignored (first: {', '.join(unknown[:5])})")] if unknown else []
    )  # fmt: skip
    missing = [eid for i, eid in enumerate(examples.ids) if i not in got]
    preds = Predictions(
        source, "points", order, np.zeros(0, np.int32), np.zeros(len(order) + 1, np.int64),
        warnings=warnings, missing=missing, unknown=strays,
    )  # fmt: skip
    return preds, points
