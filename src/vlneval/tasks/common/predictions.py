"""Prediction files: parsed, validated against a split's episodes, mapped to node indices.

Accepted forms (``form``), detected from the first trajectory step or set explicitly:

- ``triple``: ``[[viewpoint, heading, elevation], ...]`` (the R2R form);
- ``nested``: ``[[vp], [vp, vp, ...], ...]``, one inner list per action, flattened in order;
- ``plain``: ``[vp, vp, ...]``.

Every problem is collected (file, id, field, what was expected) and raised together.
"""

from __future__ import annotations

import functools
import threading
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

import msgspec
import numpy as np

from vlneval.errors import (
    InvalidInputError,
    Problem,
    ProblemCollector,
    UnknownNameError,
    hint,
    hinted,
)
from vlneval.graph.store import GraphStore
from vlneval.io import LineRecord, brief, clip, gc_paused
from vlneval.io.limits import MIB
from vlneval.metrics._kernels import offsets_of, reorder
from vlneval.tasks.common import prediction_structs as typed
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.inputs import ReadInput, keyed_fix, read_input
from vlneval.tasks.common.record_checks import (
    ID_LIKE,
    FieldTally,
    Repeats,
    angle_problem,
    as_list,
    shown_id,
    shown_value,
)
from vlneval.tasks.common.summary_records import SummarySkips

if TYPE_CHECKING:
    from vlneval.tasks.common.request import PredictionsInput

__all__ = ["Predictions", "parse_predictions", "in_episode_order", "FORMS", "TRAJECTORY_KEYS"]

FORMS = ("auto", "triple", "nested", "plain")
TRAJECTORY_KEYS = typed.TRAJECTORY_KEYS


@dataclass
class Predictions:
    """Trajectories aligned to a split's episodes.

    Attributes:
        source: the file read.
        form: the trajectory form read (``triple``, ``nested`` or ``plain``).
        episodes: indices (into the episode table) of the episodes that have a prediction,
            ascending.
        nodes: flat node indices (scan-local) of all trajectories, in ``episodes`` order.
        offsets: ``offsets[k]:offsets[k+1]`` is the trajectory of ``episodes[k]``.
        extra: other per-record fields kept by name (e.g. ``predObjId``), by episode index.
        warnings: problems that do not stop scoring (unknown ids, ignored ids).
        missing: the ids of the split's episodes without a prediction.
        unknown: the ids of the records not in the split, as the file writes them (a number
            stays a number), for the completeness problem to name.
        key: the trajectory field messages name (``agent_pose`` for HANNA, a given key).
        key_read: the field the trajectories were read from (the summary records it), when
            this reader read them (the key given, or the one the records hold; the sorted
            list of them when records used several).
    """

    source: str
    form: str
    episodes: np.ndarray
    nodes: np.ndarray
    offsets: np.ndarray
    extra: dict[str, dict[int, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unknown: list[str | int] = field(default_factory=list)
    key: str = "trajectory"
    key_read: str | list[str] | None = None


def two_trajectories(held: Sequence[str], who: str = "") -> str:
    """The problem of a record holding more than one of the fields a trajectory is read from
    by default: a record merged with its episode holds the reference ``path`` beside the
    agent's, and scoring either one silently could score the reference.

    Example:
        >>> print(two_trajectories(["path", "pred_path"]))
        holds both 'path' and 'pred_path': which one is the prediction is not clear (name it with --trajectory-key, trajectory_key= in Python)
    """
    return hinted(
        f"{who}holds both {' and '.join(map(repr, held))}: which one is the prediction is not "
        "clear",
        hint("--trajectory-key", "name it with --trajectory-key, trajectory_key= in Python",
             aside=True),
    )  # fmt: skip


def _detect(traj: list[Any]) -> str:
    """The form of a file, from its first trajectory; ``[vp, "0", "0"]`` is a triple whose
    angles are written as text (named as such), not three viewpoints: a file's other records
    were otherwise all blamed for not being lists of viewpoints.

    Example:
        >>> _detect([["a", "1.5", "0"]]), _detect([["a", "b", "c"]]), _detect(["a"])
        ('triple', 'nested', 'plain')
    """
    first = traj[0]
    if isinstance(first, str):
        return "plain"
    if isinstance(first, list) and first:
        if len(first) == 3 and isinstance(first[0], str) and _angle_like(first[1]):
            return "triple"
        if all(isinstance(v, str) for v in first):
            return "nested"
    return "triple"


def _angle_like(value: Any) -> bool:
    """Not a string, or a short string that reads as a number (no viewpoint id does)."""
    if not isinstance(value, str):
        return True
    try:
        return len(value) < 40 and float(value) == float(value)
    except ValueError:
        return False


#: A viewpoint's code is its scan's slot times this plus its node index.
STRIDE_BITS = 20
STRIDE = 1 << STRIDE_BITS


def local_nodes(code: np.ndarray, slot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The node index of each viewpoint code, and where the code is not one of the scan
    ``slot`` expects (another scan's, or -1: not coded).

    Example:
        >>> nodes, elsewhere = local_nodes(np.array([STRIDE + 3, 5, -1]), np.array([1, 1, 0]))
        >>> nodes.tolist()[:2], elsewhere.tolist()
        ([3, 5], [False, True, True])
    """
    return (code & (STRIDE - 1)).astype(np.int32), (code >> STRIDE_BITS) != slot


class _ViewpointCodes:
    """Viewpoint id -> ``slot * STRIDE + node`` over the graphs of one store, kept for the
    store's life (a scorer reads the same graphs for every file): each scan's nodes are added
    the first time a prediction of that scan is read. An id two graphs share keeps the code
    of the first; a step of the other scan then finds its node by a lookup of its own."""

    def __init__(self) -> None:
        # No reference to the store: the codes live in a WeakKeyDictionary keyed by it.
        self.slot: dict[str, int] = {}
        self.code: dict[str, int] = {}
        self.lock = threading.Lock()

    def slots(self, graphs: GraphStore, names: list[str]) -> np.ndarray:
        """The slot of each scan of ``names`` in ``graphs`` (its nodes coded on first use;
        one thread at a time adds scans, so two scans never share a slot)."""
        out = []
        for name in names:
            k = self.slot.get(name)
            if k is None:
                with self.lock:
                    k = self.slot.get(name)
                    if k is None:
                        k = self._add(graphs, name)
            out.append(k)
        return np.array(out, dtype=np.int64)

    def _add(self, graphs: GraphStore, name: str) -> int:
        index = graphs.graph(name).index
        k = len(self.slot)
        if len(index) < STRIDE:
            add = self.code.setdefault
            for vp, n in index.items():
                add(vp, k * STRIDE + n)
        self.slot[name] = k  # published last: a reader that sees the slot sees its codes
        return k


_CODES: WeakKeyDictionary[Any, _ViewpointCodes] = WeakKeyDictionary()
_CODES_LOCK = threading.Lock()


def codes_of(graphs: GraphStore) -> _ViewpointCodes:
    """The viewpoint codes of ``graphs`` (built once per store)."""
    try:
        found = _CODES.get(graphs)
        if found is None:
            with _CODES_LOCK:
                found = _CODES.get(graphs)
                if found is None:
                    found = _CODES[graphs] = _ViewpointCodes()
    except TypeError:  # a store that cannot be weakly referenced: codes for this file only
        return _ViewpointCodes()
    return found


class _Rejected(Exception):
    """The typed records hold a problem their types do not express."""


class _Parser:
    """One pass over a predictions file."""

    def __init__(
        self,
        source: str,
        episodes: EpisodeTable,
        graphs: GraphStore,
        form: str,
        trajectory_key: str | None,
        keep_fields: tuple[str, ...],
        skip_summaries: bool = False,
    ) -> None:
        self.source = source
        self.summaries = SummarySkips(episodes.id_field, trajectory_key, skip_summaries)
        self.ep = episodes
        self.graphs = graphs
        self.form = form
        self.key = trajectory_key
        self.field = trajectory_key or "trajectory"  # the name messages give the trajectory
        self.keep_fields = keep_fields
        self.pc = ProblemCollector(source)
        self.flat: Any = array("i")
        self.rec_ep: Any = array("q")
        self.rec_len: Any = array("q")
        self.seen = np.zeros(len(episodes), dtype=np.bool_)
        self.unknown: list[str | int] = []
        self.left_out: set[str] = set(episodes.left_out)
        self.ignored: list[str] = []
        self.extra: dict[str, dict[int, Any]] = {k: {} for k in keep_fields}
        self.codes = codes_of(graphs)
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.n_steps = 0
        self.not_nodes: dict[int, str] = {}  # flat step -> a viewpoint that is not a node
        self.n_typed = 0
        self.traj_tally = FieldTally(*((trajectory_key,) if trajectory_key else TRAJECTORY_KEYS))
        self.id_tally = FieldTally(episodes.id_field)
        self.repeats = Repeats()
        self.read: set[str] = {trajectory_key} if trajectory_key else set()  # fields read
        self.n_read = 0  # records whose trajectory fields were looked at (explaining pass)
        self.doubled: list[tuple[Problem, list[str]]] = []  # records holding two trajectories

    def _id(self, rec: dict[str, Any], k: int) -> str | None:
        idf = self.ep.id_field
        where = f"line {rec.line}" if isinstance(rec, LineRecord) else f"record {k}"
        if idf not in rec:
            self.id_tally.missing(self.pc, f"missing field {idf!r}", field=where)
            return None
        value = rec[idf]
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            kind = "a JSON integer (or its string)" if self.ep.int_ids else "a string"
            self.pc.add(f"{idf} must be {kind}, got {shown_value(value)}", field=where)
            return None
        try:
            return str(value)
        except ValueError:  # an integer of more digits than Python writes: no split's id
            self.unknown.append(value)
            return None

    def _trajectory(self, rec: dict[str, Any], label: str) -> list[Any] | None:
        key = self.key
        if key is None:
            held = [k for k in TRAJECTORY_KEYS if k in rec]
            self.n_read += 1
            first = typed.step_names(rec[held[0]]) if held else None
            if any(typed.step_names(rec[k]) != first for k in held[1:]):  # the same: read
                self.pc.add(two_trajectories(held), episode=label)
                self.doubled.append((self.pc.problems[-1], held))
                return None
            key = held[0] if held else "trajectory"
            self.field = key  # this record's problems name the field it uses (``path[3]``)
        if key not in rec:
            self.traj_tally.missing(self.pc, f"missing field {key!r}", episode=label)
            return None
        self.read.add(key)
        traj = as_list(rec[key])
        if not isinstance(traj, list):
            got = "null" if traj is None else type(traj).__name__
            self.pc.add(f"{key} must be a list, got {got}", episode=label, field=key)
            return None
        if not traj:
            self.pc.add(
                "empty trajectory (it must include the start viewpoint)", episode=label, field=key
            )
            return None
        return traj

    def _viewpoints(self, traj: list[Any], label: str) -> list[str] | None:
        form = self.form if self.form != "auto" else _detect(traj)
        if self.form == "auto":
            self.form = form
        out: list[str] = []
        ok = True
        for j, step in enumerate(traj):
            f = f"{self.field}[{j}]"
            if form == "plain":
                if type(step) is not str:
                    self.pc.add(
                        f"expected a viewpoint id string, got {brief(step)}", episode=label, field=f
                    )
                    ok = False
                    continue
                out.append(step)
            elif form == "nested":
                if type(step) is not list or not all(type(v) is str for v in step):
                    self.pc.add(
                        f"expected a list of viewpoint ids, got {brief(step)}",
                        episode=label,
                        field=f,
                    )
                    ok = False
                    continue
                out.extend(step)
            else:
                ok = self._triple(step, label, f, out) and ok
        if ok and not out:
            self.pc.add(
                "empty trajectory after flattening (it must include the start viewpoint)",
                episode=label,
                field=self.field,
            )
            return None
        return out if ok else None

    def _triple(self, step: Any, label: str, f: str, out: list[str]) -> bool:
        if type(step) is not list or not step or type(step[0]) is not str:
            self.pc.add(
                f"expected [viewpoint, heading, elevation], got {brief(step)}",
                episode=label,
                field=f,
            )
            return False
        problem = angle_problem(step)
        if problem is not None:
            self.pc.add(problem, episode=label, field=f)
            return False
        out.append(step[0])
        return True

    def record(self, rec: Any, k: int) -> None:
        """Checks one decoded record, then :meth:`accept` s it (the explaining pass)."""
        if not self.summaries.reads(rec, k, self.pc):
            return
        self.traj_tally.see(rec)  # a skipped summary is not a record without a trajectory
        self.id_tally.see(rec)
        eid = self._id(rec, k)
        if eid is None:
            return
        line = rec.line if isinstance(rec, LineRecord) else None
        label = self._known(eid, rec[self.ep.id_field], line)
        if label is None:
            return
        if line is not None:  # a JSON line: its line named too
            label = f"line {line}: {label}"
        traj = self._trajectory(rec, label)
        vps = self._viewpoints(traj, label) if traj is not None else None
        if vps is not None:
            self.accept(eid, label, vps, {n: rec[n] for n in self.keep_fields if n in rec})

    def file_level(self) -> None:
        """The repeated ids, one problem each; when no record has a trajectory field (then the
        fix), or none the id field, or each holds two different trajectories, one problem of the
        file (first) says so, instead of one per record (after the explaining pass)."""
        self.repeats.report(self.pc, self.ep.label)
        if len(self.doubled) > 1 and len(self.doubled) == self.n_read:  # each record: one
            each = {id(q) for q, _ in self.doubled}
            self.pc.problems = [q for q in self.pc.problems if id(q) not in each]
            first, held = self.doubled[0]
            who = f"each of the {self.n_read} records (first: {first.episode}) "
            self.pc.add_first(two_trajectories(held, who))
        trajs, ids = self.traj_tally, self.id_tally
        trajs.collapse(self.pc, " (the executed viewpoints)", fix=trajs.key_hint(self.ep.id_field))
        example = (
            f' (an episode id of the split, e.g. "{clip(self.ep.ids[0])}")' if len(self.ep) else ""
        )
        ids.collapse(self.pc, example, ID_LIKE)  # last: its problem comes first

    def _known(self, eid: str, raw: str | int, line: int | None = None) -> str | None:
        """The label of an id of the split not seen before; None (noted) otherwise. ``raw``:
        the id as the file writes it; ``line``: the record's, in JSON lines."""
        i = self.ep.index.get(eid)
        if i is None:
            self._stray(eid, raw)
            return None
        label = self.ep.label(i)
        if self.seen[i]:
            self.repeats.see(i, line)
            return None
        self.seen[i] = True
        self.repeats.first(i, line)
        return label

    def _stray(self, eid: str, raw: str | int) -> None:
        """Notes a record whose id is not one of the split's episodes."""
        if eid in self.left_out:
            self.ignored.append(clip(eid))
        else:
            self.unknown.append(clip(raw) if isinstance(raw, str) else raw)

    def accept(self, eid: str, label: str, vps: list[str], extra: dict[str, Any]) -> None:
        """Maps one trajectory of a known id to node indices."""
        i = self.ep.index[eid]
        for name, value in extra.items():
            self.extra[name][i] = value
        graph = self.graphs.graph(self.ep.scans[i])
        start = len(self.flat)
        try:
            self.flat.extend(map(graph.index.__getitem__, vps))
        except KeyError:
            del self.flat[start:]
            j = next(j for j, v in enumerate(vps) if v not in graph.index)
            self.pc.add(graph.describe_missing(vps[j]), episode=label, field=f"{self.field}[{j}]")
            return
        self.rec_ep.append(i)
        self.rec_len.append(len(self.flat) - start)

    def typed(self, records: list[Any]) -> None:
        """Takes the next records msgspec decoded (their types already checked), a column at a
        time; the viewpoints become node indices of their episodes' scans (see :meth:`nodes`).

        Raises:
            _Rejected: a record without viewpoints, for the explaining pass to name.
        """
        n_keys = 1 if self.key else len(TRAJECTORY_KEYS)
        cols = typed.columns(records, self.form, n_keys)
        if cols is None or (cols[1] and min(cols[1]) == 0):
            raise _Rejected
        ids, lengths, flat, used = cols
        if self.key is None and records:  # the fields used; messages name the first's
            self.read.update(used)
            self.field = self.field if self.n_typed else used[0]
        self.n_typed += len(ids)
        index = self.ep.index
        rows = np.fromiter(map(index.get, ids, repeat(-1)), np.int64, len(ids))
        keep = rows >= 0
        for k in np.flatnonzero(~keep).tolist():
            self._stray(ids[k], records[k].id)
        keep &= ~self._repeated(rows, keep)
        for row in rows[~keep & (rows >= 0)].tolist():
            self.repeats.see(row)
        self.seen[rows[keep]] = True
        size = np.array(lengths, dtype=np.int64)
        steps = None if keep.all() else np.repeat(keep, size)
        self.parts.append((rows[keep], size[keep], self.nodes(rows[keep], size[keep], flat, steps)))
        if self.keep_fields:
            for k in np.flatnonzero(keep).tolist():
                for x, name in enumerate(self.keep_fields):
                    if (value := getattr(records[k], f"x{x}")) is not msgspec.UNSET:
                        self.extra[name][int(rows[k])] = typed.without_numpy(value, 0)

    def nodes(
        self, rows: np.ndarray, sizes: np.ndarray, flat: Sequence[str], steps: np.ndarray | None
    ) -> np.ndarray:
        """The node index of each kept step (``flat[steps]``, every step when ``steps`` is
        None; records ``rows`` of ``sizes`` steps) in its episode's graph: one C-level lookup
        per step in the store's codes; -1 for a viewpoint that is not a node of that graph
        (named by :meth:`resolve`)."""
        names, position = self.ep.scans_of(rows)
        slots = self.codes.slots(self.graphs, names)
        codes = self.codes.code
        try:  # one pass; the slower lookup only when some viewpoint is in no coded graph
            code = np.fromiter(map(codes.__getitem__, flat), np.int64, len(flat))
        except KeyError:
            code = np.fromiter(map(codes.get, flat, repeat(-1)), np.int64, len(flat))
        if steps is not None:
            code = code[steps]
        nodes, other = local_nodes(code, np.repeat(slots[position], sizes))
        elsewhere = np.flatnonzero(other)
        if len(elsewhere):  # not a node of the first graph that has the id: its own graph's
            kept = np.arange(len(code)) if steps is None else np.flatnonzero(steps)
            owner = np.repeat(np.arange(len(rows)), sizes)
            for pos in elsewhere.tolist():
                vp = flat[int(kept[pos])]
                n = self.graphs.graph(names[int(position[owner[pos]])]).index.get(vp, -1)
                nodes[pos] = n
                if n < 0:
                    self.not_nodes[self.n_steps + pos] = vp
        self.n_steps += len(nodes)
        return nodes

    def _repeated(self, rows: np.ndarray, known: np.ndarray) -> np.ndarray:
        """Records whose episode an earlier record (of this chunk or before) predicted."""
        out = known.copy()
        out[known] = self.seen[rows[known]]
        order = np.flatnonzero(known)[np.argsort(rows[known], kind="stable")]
        again = np.zeros(len(order), dtype=np.bool_)
        again[1:] = rows[order[1:]] == rows[order[:-1]]
        out[order[again]] = True
        return out

    def resolve(self) -> None:
        """Joins the typed records' chunks; a viewpoint that is not a node of its episode's
        graph is named (each record once), after the repeated ids."""
        self.repeats.report(self.pc, self.ep.label)
        if not self.parts:
            return
        rows, sizes, nodes = (np.concatenate(c) for c in zip(*self.parts, strict=True))
        self.parts = []
        ok = np.ones(len(rows), dtype=np.bool_)
        if self.not_nodes:
            offsets = offsets_of(sizes)
            for pos in sorted(self.not_nodes):
                r = int(np.searchsorted(offsets, pos, side="right")) - 1
                if ok[r]:
                    ok[r] = False
                    graph = self.graphs.graph(self.ep.scans[int(rows[r])])
                    self.pc.add(
                        graph.describe_missing(self.not_nodes[pos]),
                        episode=self.ep.label(int(rows[r])),
                        field=f"{self.field}[{pos - int(offsets[r])}]",
                    )
        self.flat = nodes[np.repeat(ok, sizes)]
        self.rec_ep, self.rec_len = rows[ok], sizes[ok]


@gc_paused()  # the typed records live and die inside: no collection need walk them
def parse_predictions(
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
    """Reads predictions and maps every trajectory to node indices.

    ``predictions`` is a file path, the bytes of a file, records already in memory (a list
    of dicts as JSON decodes them; numpy scalars and arrays in them read as the Python values
    they hold), or one of them already read
    (:func:`~vlneval.tasks.common.inputs.read_input`, which names it in messages). They are
    decoded once with msgspec into typed records
    (:mod:`vlneval.tasks.common.prediction_structs`); only input the types reject is read again by the
    explaining pass, which checks each record and names every problem. Records in memory are
    converted directly, never through JSON text.

    Structural problems (types, NaN, unknown viewpoints, duplicate ids) are raised together as
    one :class:`~vlneval.errors.InvalidInputError`. Rule checks that depend on the profile
    (start, adjacency, completeness) are made by :func:`vlneval.tasks.common.checks.check_rules`.

    Args:
        predictions: the predictions file (``.json``/``.jsonl``, optionally gzipped: a JSON list
            of records or one record per line), its bytes, a list of records, or their
            :class:`~vlneval.tasks.common.inputs.ReadInput`.
        episodes: the split's episodes.
        graphs: the navigation graphs of their scans.
        form: ``auto`` or one of ``triple``, ``nested``, ``plain``.
        trajectory_key: the record field that holds the trajectory (default: the first of
            ``trajectory``, ``path``, ``pred_path`` present).
        keep_fields: other record fields to keep (by episode index).
        collect: when given, problems are added to it instead of raised, so that the caller
            can add the rule checks' problems and show them all together.
        skip_summaries: skip, with a warning, records that look like a summary: no id field,
            no trajectory field, and only scalar values (NaviLLM's compact files start with
            one). Without it such a record is an error that suggests this option.
    """
    if form not in FORMS:
        raise UnknownNameError("trajectory form", form, FORMS)
    if trajectory_key is not None and trajectory_key == episodes.id_field:
        raise InvalidInputError(
            f"--trajectory-key {trajectory_key} names the id field; give the field that holds "
            "the trajectory (trajectory, path, pred_path...)"
        )
    fields = {"id_field": episodes.id_field, "key": trajectory_key, "form": form,
              "keep": keep_fields}  # fmt: skip
    keyed = functools.partial(keyed_fix, id_field=episodes.id_field, key=trajectory_key)
    given = read_input(predictions, about=keyed)
    if given.text is not None:
        decoded = typed.decode(given.text, given.source, **fields)  # type: ignore[arg-type]
    else:
        converted = typed.convert(given.value, **fields)  # type: ignore[arg-type]
        if converted is None and (plain := typed.without_numpy(given.value)) is not given.value:
            given = ReadInput(given.source, value=plain)  # both passes read the plain copy
            converted = typed.convert(plain, **fields)  # type: ignore[arg-type]
        decoded = None if converted is None else (converted[0], iter([converted[1]]))
        del converted  # the typed pass frees each chunk of records as it goes
    source = given.source
    args = (source, episodes, graphs, form, trajectory_key, keep_fields, skip_summaries)
    p = _typed_pass(_Parser(*args), decoded)
    if p is not None and p.pc.problems and given.text is not None and _lines(given.text):
        p = None  # a refused file of JSON lines: the explaining pass names each problem's line
    if p is None:  # the explaining pass: every record checked, every problem named
        del decoded
        p = _Parser(*args)
        k = 0
        for chunk in given.record_chunks("a JSON list of predictions", keyed):
            for rec in chunk:
                p.record(rec, k)
                k += 1
        if k == 0:
            p.pc.add("the file holds no predictions")
        p.file_level()
    if p.pc.problems and given.text is not None:  # a refused file only: valid ones cost nothing
        p.pc.problems[:0] = _repeated_keys(given.text, source, episodes)
    if collect is None:
        p.pc.raise_if_any()
    else:
        collect.problems.extend(p.pc.problems)
    return _assemble(p, source)


def _repeated_keys(text: bytes, source: str, episodes: EpisodeTable) -> list[Problem]:
    """A problem for each record of a refused file that gives a field twice (JSON keeps the
    last copy: its problem names the value that was kept), first: it explains the others. Not
    looked for in a file too large or too deep for Python's ``json``."""
    import json

    out = ProblemCollector(source)
    idf = episodes.id_field

    where: list[str] = []  # the line being read, in JSON lines

    def record(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        again = [k for k, _ in items if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
        if again:
            rid = dict(items).get(idf)
            i = episodes.index.get(str(rid)) if isinstance(rid, (str, int)) else None
            label = ": ".join([*where, *([] if i is None else [episodes.label(i)])]) or None
            out.add(f"gives {again[0]!r} twice (JSON keeps only the last copy)", episode=label)
        return dict(items)

    lines = _lines(text)
    if len(text) > 64 * MIB:
        return []
    for n, part in enumerate(text.splitlines() if lines else [text], start=1):
        where[:] = [f"line {n}"] if lines else []
        try:
            json.loads(part, object_pairs_hook=record)
        except (ValueError, RecursionError):
            continue
    return out.problems


def _lines(text: bytes) -> bool:
    """Whether a predictions file is JSON lines (its first record opens an object)."""
    return text.lstrip()[:1] == b"{"


def _typed_pass(p: _Parser, decoded: tuple[str, Iterator[list[Any]]] | None) -> _Parser | None:
    """``p`` after taking the typed records, or None when they need the explaining pass."""
    try:
        if decoded is None:
            raise _Rejected
        p.form = decoded[0]
        for records in decoded[1]:
            p.typed(records)
        if p.n_typed == 0:
            raise _Rejected  # no record: the explaining pass says so
        p.resolve()
    except (_Rejected, msgspec.MsgspecError, RecursionError):
        return None
    return p


def _episode_order(rec_ep: np.ndarray, n_episodes: int) -> np.ndarray:
    """The records in order of episode (stable). Without repeats (always, once duplicates are
    refused) that is a pass over a mask instead of a sort."""
    mark = np.zeros(n_episodes, dtype=np.bool_)
    mark[rec_ep] = True
    if int(np.count_nonzero(mark)) != len(rec_ep):
        return np.argsort(rec_ep, kind="stable")
    record_of = np.empty(n_episodes, dtype=np.int64)
    record_of[rec_ep] = np.arange(len(rec_ep))
    return record_of[np.flatnonzero(mark)]


def in_episode_order(
    rec_ep: np.ndarray, rec_len: np.ndarray, flat: np.ndarray, n_episodes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records read (episode row, length, nodes of each, in file order) in episode order:
    :attr:`Predictions.episodes`, ``nodes`` and ``offsets`` (the end step of every reader).

    Example:
        >>> eps, nodes, offsets = in_episode_order(
        ...     np.array([2, 0]), np.array([1, 2]), np.array([7, 5, 6], np.int32), 3)
        >>> eps.tolist(), nodes.tolist(), offsets.tolist()
        ([0, 2], [5, 6, 7], [0, 2, 3])
    """
    order = _episode_order(rec_ep, n_episodes)
    nodes, offsets = reorder(flat, offsets_of(rec_len), order)
    return rec_ep[order], nodes, offsets


def _assemble(p: _Parser, source: str) -> Predictions:
    rec_ep = np.asarray(p.rec_ep, dtype=np.int64)
    rec_len = np.asarray(p.rec_len, dtype=np.int64)
    flat = np.asarray(p.flat, dtype=np.int32)
    episodes, nodes, offsets = in_episode_order(rec_ep, rec_len, flat, len(p.seen))
    warnings = p.summaries.notes()
    if p.unknown:
        warnings.append(
            f"{len(p.unknown)} prediction(s) with ids not in the split were ignored "
            f"(first: {', '.join(map(shown_id, p.unknown[:5]))})"
        )
    if p.ignored:
        warnings.append(
            f"{len(p.ignored)} prediction(s) for ids the profile does not score were ignored "
            f"({', '.join(p.ignored[:5])})"
        )
    missing_idx = np.flatnonzero(~p.seen)
    return Predictions(
        source=source,
        form=p.form if p.form != "auto" else "triple",
        episodes=episodes,
        nodes=nodes,
        offsets=offsets,
        extra=p.extra,
        warnings=warnings,
        missing=[p.ep.ids[i] for i in missing_idx],
        unknown=p.unknown,
        key=p.field,
        key_read=sorted(p.read) if len(p.read) > 1 else next(iter(p.read), p.field),
    )
