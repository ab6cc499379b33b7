"""Small checks of the explaining pass that the task readers share (a record's fields, a
heading), each adding its problem, with the record's place, to a :class:`ProblemCollector`."""

from __future__ import annotations

import math
import numbers
import sys
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from itertools import chain
from typing import Any, TypeGuard

import numpy as np

from vlneval.errors import InvalidInputError, Problem, ProblemCollector, hint, hinted
from vlneval.io import brief, clip

__all__ = [
    "is_number", "is_finite", "check_fields", "check_heading", "numbered", "FieldTally", "ID_LIKE",
    "shown_value", "angle_problem", "shown_id", "Repeats", "as_list", "is_bool", "UniqueIds",
]  # fmt: skip

#: Fields that look like a record's id, which a problem of a missing id field names.
ID_LIKE = (
    "id", "idx", "inst_id", "inst_idx", "instr_id", "instruction_id", "episode_id", "path_id",
)  # fmt: skip


def is_number(value: Any) -> TypeGuard[float]:
    """An int or a float, not a bool (JSON ``true`` is not a number); a numpy scalar that is a
    real number counts (records built in memory from an agent's arrays hold them).

    Example:
        >>> import numpy as np
        >>> is_number(2), is_number(2.5), is_number(True), is_number("2"), is_number(np.float32(1))
        (True, True, False, False, True)
    """
    if isinstance(value, (int, float)):
        return not isinstance(value, bool)
    return isinstance(value, numbers.Real)  # numpy's floats and ints, not its bool_


def as_list(value: Any) -> Any:
    """A numpy array as the (nested) list of Python values it holds, anything else as it is:
    records built in memory from an agent's arrays hold them where JSON has a list.

    Example:
        >>> as_list(np.array([1.5, 2.0])), as_list(np.array(["a", "b"], dtype=object)), as_list(3)
        ([1.5, 2.0], ['a', 'b'], 3)
    """
    return value.tolist() if isinstance(value, np.ndarray) else value


def is_bool(value: Any) -> bool:
    """A bool, or numpy's ``bool_`` (an element of an agent's ``done`` array).

    Example:
        >>> is_bool(True), is_bool(np.bool_(False)), is_bool(0)
        (True, True, False)
    """
    return isinstance(value, (bool, np.bool_))


def shown_number(value: float) -> str:
    """A number for a message; an integer beyond a double's range by its size (its digits
    cut to 40 would read as a finite value).

    Example:
        >>> shown_number(float("nan")), shown_number(10**1000)
        ('nan', "an integer of 1,001 digits, beyond a double's range")
    """
    if isinstance(value, int) and abs(value) > sys.float_info.max:
        return f"an integer of {math.floor(math.log10(abs(value))) + 1:,} digits, beyond a double's range"
    return f"{value!s:.40}"


def angle_problem(step: list[Any]) -> str | None:
    """What is wrong with the heading and elevation of a step ``[viewpoint, heading,
    elevation]`` (either may be left out): the first that is not a number, or not finite (a
    huge integer by its size, :func:`shown_number`); None when both are fine.

    Example:
        >>> angle_problem(["a", 0.5]), angle_problem(["a", 0, "up"])
        (None, "elevation must be a number, got 'up'")
        >>> angle_problem(["a", 10**400, 0])
        "heading is an integer of 401 digits, beyond a double's range (must be finite)"
    """
    for name, v in zip(("heading", "elevation"), step[1:3], strict=False):
        if not is_number(v):
            return f"{name} must be a number, got {brief(v, 40)}"
        if not is_finite(v):
            return f"{name} is {shown_number(v)} (must be finite)"
    return None


def shown_value(value: Any) -> str:
    """A value of the wrong type (an id that is a list, say) for a message: ``null``, or its
    type and its first 80 characters, a value cut telling its size (:func:`~vlneval.io.brief`:
    only what is shown is written, however large or deep the value).

    Example:
        >>> shown_value([1]), shown_value(None), shown_value([7] * 10**5)[-21:]
        ('list [1]', 'null', '7, 7… (100,000 items)')
    """
    return "null" if value is None else f"{type(value).__name__} {brief(value, 80, sized=True)}"


def shown_id(value: str | int) -> str:
    """An id not in the split, for a message: a string as it is (clipped when it was noted), a
    number clipped as a long id is, one beyond a double's range by its size.

    Example:
        >>> shown_id("4332_0 "), shown_id(4332), shown_id(10**400)
        ('4332_0 ', '4332', "an integer of 401 digits, beyond a double's range")
    """
    if isinstance(value, str):
        return value
    return clip(str(value)) if is_finite(value) else shown_number(value)


def is_finite(value: Any) -> TypeGuard[float]:
    """A finite :func:`is_number` (no NaN, no infinity, no integer beyond a float's range,
    which JSON allows and ``math.isfinite`` cannot take).

    Example:
        >>> is_finite(2), is_finite(float("nan")), is_finite(10**400), is_finite(True)
        (True, False, False, False)
    """
    try:
        return is_number(value) and math.isfinite(value)
    except OverflowError:
        return False


def check_fields(
    rec: dict[str, Any], fields: tuple[tuple[str, Any], ...], where: str, pc: ProblemCollector
) -> bool:
    """Whether ``rec`` has each ``(key, type)`` of ``fields`` (a bool is never an int); one
    problem per missing or mistyped field.

    Example:
        >>> pc = ProblemCollector("f.json")
        >>> check_fields({"scan": 3}, (("id", int), ("scan", str)), "record 0", pc)
        False
        >>> [p.message for p in pc.problems]
        ["missing field 'id'", "field 'scan' has type int"]
    """
    ok = True
    for key, kind in fields:
        if key not in rec:
            pc.add(f"missing field {key!r}", field=where)
            ok = False
        elif isinstance(rec[key], bool) or not isinstance(rec[key], kind):
            pc.add(f"field {key!r} has type {type(rec[key]).__name__}", field=where)
            ok = False
    return ok


def check_heading(rec: dict[str, Any], where: str, pc: ProblemCollector) -> bool:
    """Whether ``rec``'s ``heading`` (default 0) is a finite number; else one problem."""
    heading = rec.get("heading", 0.0)
    if is_finite(heading):
        return True
    pc.add(f"heading must be a finite number, got {heading!r}", field=f"{where}.heading")
    return False


def numbered(
    chunks: Iterable[Iterable[Any]], pc: ProblemCollector, what: str
) -> Iterator[tuple[int, Any]]:
    """Each record of ``chunks`` (a reader's lists of records) with its position; a file
    without records is the problem "the file holds no ``what``".

    Example:
        >>> pc = ProblemCollector("f.json")
        >>> list(numbered([["a"], ["b"]], pc, "routes")), list(numbered([], pc, "routes"))
        ([(0, 'a'), (1, 'b')], [])
        >>> [p.message for p in pc.problems]
        ['the file holds no routes']
    """
    k = -1
    for k, rec in enumerate(chain.from_iterable(chunks)):
        yield k, rec
    if k < 0:
        pc.add(f"the file holds no {what}")


class FieldTally:
    """Whether any record of a file has one of ``fields``, and the keys of the records that
    lack them, gathered while the records stream: when none has it, that is one problem of
    the file (:meth:`problem`) instead of one per record.

    Example:
        >>> t = FieldTally("trajectory", "path")
        >>> for rec in ({"instr_id": "1_0", "traj": []}, {"instr_id": "1_1", "traj": []}, 3):
        ...     t.see(rec)
        >>> t.none_has(), t.lists
        (True, {'traj'})
        >>> print(t.problem(" (the executed viewpoints)"))
        no record has the field 'trajectory' or 'path' (the executed viewpoints); the records have 'instr_id', 'traj'
    """

    def __init__(self, *fields: str) -> None:
        self.fields = fields
        self.dicts = self.with_field = 0
        self.keys: set[str] = set()
        self.lists: set[str] = set()  # keys of those records that hold a list
        self.each: list[Problem] = []  # the records' problems the file's replaces

    @classmethod
    def of(cls, records: Iterable[Any], *fields: str) -> FieldTally:
        """The tally of ``records`` already in memory."""
        tally = cls(*fields)
        for rec in records:
            tally.see(rec)
        return tally

    def see(self, rec: Any) -> None:
        """Counts one record (a record that is not an object is not counted)."""
        if not isinstance(rec, dict):
            return
        self.dicts += 1
        if any(f in rec for f in self.fields):
            self.with_field += 1
        elif len(self.keys) < 64:
            self.keys.update(rec)
            self.lists.update(k for k, v in rec.items() if isinstance(v, list))

    def none_has(self) -> bool:
        """Some record was an object and none had any of the fields."""
        return self.dicts > 0 and not self.with_field

    def problem(self, why: str, like: Iterable[str] = (), fix: str = "") -> str:
        """The file's problem: no record has the field (``why`` follows its name), the keys
        the records have (those in ``like`` if any, else the first six), then ``fix``."""
        found = sorted(k for k in self.keys if k in like) or sorted(self.keys)[:6]
        return hinted(
            f"no record has the field {' or '.join(map(repr, self.fields))}{why}; the records "
            f"have {', '.join(map(repr, found)) or 'no field'}",
            fix,
        )

    def refuse(self, source: str, why: str, like: Iterable[str] = (), fix: str = "") -> None:
        """Raises the file's :meth:`problem` when no record has the field.

        Example:
            >>> FieldTally.of([{"id": 1}], "inst_idx").refuse("p.json", "", ID_LIKE)
            Traceback (most recent call last):
            ...
            vlneval.errors.InvalidInputError: error: p.json: no record has the field 'inst_idx'; the records have 'id'
        """
        if self.none_has():
            raise InvalidInputError(self.problem(why, like, fix), source=source)

    def missing(self, pc: ProblemCollector, message: str, **where: str) -> None:
        """Adds to ``pc`` one record's problem of a missing field, which :meth:`collapse`
        replaces (``where``: its ``episode`` or ``field``)."""
        pc.add(message, **where)
        self.each.append(pc.problems[-1])

    def collapse(
        self, pc: ProblemCollector, why: str, like: Iterable[str] = (), fix: str = ""
    ) -> None:
        """When no record has the field: the file's :meth:`problem` first in ``pc``, in place
        of the records' problems :meth:`missing` added.

        Example:
            >>> t, pc = FieldTally("instr_id"), ProblemCollector("p.json")
            >>> for k, rec in enumerate([{"id": "1_0"}, {"id": "1_1"}]):
            ...     t.see(rec)
            ...     t.missing(pc, "missing field 'instr_id'", field=f"record {k}")
            >>> t.collapse(pc, "", ID_LIKE)
            >>> [str(p) for p in pc.problems]
            ["p.json: no record has the field 'instr_id'; the records have 'id'"]
        """
        if not self.none_has():
            return
        each = set(map(id, self.each))
        pc.problems = [q for q in pc.problems if id(q) not in each]
        pc.add_first(self.problem(why, like, fix))

    def key_hint(self, id_field: str, like: Collection[str] = ()) -> str:
        """The hint to pass a list field the records have as ``--trajectory-key``: one of
        ``like`` if given (else ""), or one named like a path (``traj``, ``path`` in its name);
        the option alone when the records hold lists of other names (a dialogue, say), "" when
        they hold none.

        Example:
            >>> t = FieldTally.of([{"inst_idx": 1, "dialog_history": ["hi"]}], "trajectory")
            >>> t.key_hint("inst_idx")
            ' (name the field with --trajectory-key)'
            >>> FieldTally.of([{"id": 1, "traj": ["a"]}], "trajectory").key_hint("id")
            " (to score the field 'traj', pass --trajectory-key traj)"
        """
        others = self.lists - {id_field}
        lists = sorted(k for k in others if k in like or not like and _path_like(k))
        if lists:
            words = f"to score the field {lists[0]!r}, pass --trajectory-key {lists[0]}"
        elif others and not like:
            words = "name the field with --trajectory-key"
        else:
            return ""
        return hint("--trajectory-key", words, aside=True)


class Repeats:
    """The episodes a file predicts more than once, counted while the records stream, for one
    problem per repeated id with its count (:meth:`report`): one id copied 2,000 times is one
    problem, which leaves room for the file's others among the problems shown.

    Example:
        >>> repeats = Repeats()
        >>> for row in (3, 3, 5):  # each record after the first of its episode
        ...     repeats.see(row)
        >>> pc = ProblemCollector("p.json")
        >>> repeats.report(pc, lambda row: f"id {row}")
        >>> for problem in pc.problems:
        ...     print(problem)
        p.json: id 3: duplicate id: the file has 3 predictions for it
        p.json: id 5: duplicate id: the file has two predictions for it
        >>> repeats.first(3, line=1)  # JSON lines: the line of episode 3's first record
        >>> repeats.see(3, line=4)  # and of a repeat
        >>> repeats.report(pc, lambda row: f"id {row}")
        >>> print(pc.problems[-1])
        p.json: line 4: id 3: duplicate id: the file has two predictions for it (first on line 1)
    """

    def __init__(self, what: str = "duplicate id: the file has {times} predictions for it") -> None:
        self.what = what  # the problem, with the number of predictions as ``{times}``
        self.again: Counter[Hashable] = Counter()  # episode row -> records after its first
        self.first_lines: dict[Hashable, int] = {}  # row -> the JSON line of its first record
        self.lines: dict[Hashable, tuple[int, int]] = {}  # row -> its first line, first repeat's

    def first(self, row: Hashable, line: int | None) -> None:
        """Notes the line (JSON lines; None: the records have none) of the first record of
        episode ``row``, which a repeat's problem names."""
        if line is not None:
            self.first_lines[row] = line

    def see(self, row: Hashable, line: int | None = None) -> None:
        """Counts one more record of episode ``row`` (its row, or an id where a reader keys
        by id), which an earlier record predicted; ``line``: this record's, in JSON lines (the
        problem names the first repeat's line and, when :meth:`first` noted it, the first)."""
        self.again[row] += 1
        if line is not None and row not in self.lines and row in self.first_lines:
            self.lines[row] = (self.first_lines[row], line)

    def report(self, pc: ProblemCollector, label: Callable[[Any], str]) -> None:
        """Adds one problem per repeated episode (named by ``label(row)`` and, in JSON lines,
        by the line of its first repeat and its first line), in the order of their first
        repeat."""
        for row, n in self.again.items():
            times = "two" if n == 1 else f"{n + 1:,}"
            what, episode = self.what.format(times=times), label(row)
            if row in self.lines:
                first, again = self.lines[row]
                what, episode = f"{what} (first on line {first})", f"line {again}: {episode}"
            pc.add(what, episode=episode)
        self.again.clear()
        self.lines.clear()
        self.first_lines.clear()


class UniqueIds:
    """The ids an episodes file's records have given so far, ``field`` naming them: every
    reader's one duplicate check and wording, at the record that repeats an id (``unit``:
    what the file's records are, ``line`` for JSON lines).

    Example:
        >>> pc = ProblemCollector("f.json")
        >>> ids = UniqueIds("path_id", pc)
        >>> [ids.first(pid, k) for k, pid in enumerate([7, 8, 7])]
        [True, True, False]
        >>> print(pc.problems[0])
        f.json: record 2: duplicate path_id 7 (also record 0)
        >>> ids.first(9, 3, line=4), ids.first(9, 4, line=6)  # JSON lines: the lines named too
        (True, False)
        >>> print(pc.problems[1])
        f.json: line 6: duplicate path_id 9 (also line 4)
    """

    def __init__(self, field: str, pc: ProblemCollector, unit: str = "record") -> None:
        self.field, self.pc, self.unit = field, pc, unit
        self.seen: dict[str, int] = {}  # id (as text) -> the record that gave it first
        self.lines: dict[str, int] = {}  # id (as text) -> the JSON line of that record

    def first(self, value: str | int, k: int, line: int | None = None) -> bool:
        """Whether record ``k``'s id ``value`` is new (then noted); a repeat is a problem.
        ``line``: the record's line, where the records are JSON lines that ``unit`` does not
        already number (a repeat then names its line and its first's)."""
        key = str(value)
        if key in self.seen:
            if line is not None and key in self.lines:  # JSON lines: named by lines alone
                what = f"duplicate {self.field} {value} (also line {self.lines[key]})"
                where = f"line {line}"
            else:
                what = f"duplicate {self.field} {value} (also {self.unit} {self.seen[key]})"
                where = f"{self.unit} {k}"
            self.pc.add(what, field=where)
            return False
        self.seen[key] = k
        if line is not None:
            self.lines[key] = line
        return True


def _path_like(name: str) -> bool:
    """Whether a field's name says it holds a path (``traj``, ``path`` in it)."""
    low = name.lower()
    return "traj" in low or "path" in low
