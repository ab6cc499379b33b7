"""Records that look like a predictions file's own summary (NaviLLM's compact files start with
one): no id field, no trajectory field, only scalar values.

A reader that meets one either skips it (``skip_summaries``, ``--skip-summary-records``) and
says so with :func:`skipped_note`, or refuses it with :func:`summary_problem`, which suggests
the option: every reader does both through one :class:`SummarySkips`. Its file-level checks look past such records (:func:`without_summaries`). Tasks
whose readers cannot tell a summary from a prediction refuse the option
(``Task.summary_records``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vlneval.errors import Hinted, ProblemCollector, hint, hinted
from vlneval.io import clip
from vlneval.tasks.common.prediction_structs import TRAJECTORY_KEYS

__all__ = [
    "looks_like_summary", "summary_problem", "SkippedNote", "skipped_note", "is_skipped_note",
    "without_summaries", "SummarySkips",
]  # fmt: skip


def looks_like_summary(rec: Any, id_field: str, key: str | None = None) -> bool:
    """A record without ``id_field`` and the trajectory field ``key`` (default: any of
    ``trajectory``, ``path``, ``pred_path``) whose values are all scalars.

    Example:
        >>> looks_like_summary({"spl": 0.5, "success_rate": 0.6}, "instr_id")
        True
        >>> looks_like_summary({"trajectory": ["a"]}, "instr_id"), looks_like_summary({}, "id")
        (False, False)
    """
    keys = (key,) if key else TRAJECTORY_KEYS
    if not isinstance(rec, dict) or not rec or id_field in rec or any(k in rec for k in keys):
        return False
    return all(v is None or isinstance(v, (int, float, str)) for v in rec.values())


def summary_problem(rec: dict[str, Any], id_field: str) -> str:
    """What a reader says of a summary record it was not asked to skip.

    Example:
        >>> summary_problem({"spl": 0.5}, "instr_id")
        "missing field 'instr_id'; the record looks like a summary (fields spl); pass --skip-summary-records to skip it"
    """
    return hinted(
        f"missing field {id_field!r}; the record looks like a summary (fields "
        f"{', '.join(clip(k, 40) for k in sorted(rec)[:6])})",
        hint("--skip-summary-records", "pass --skip-summary-records to skip it"),
    )


class SkippedNote(Hinted):
    """The warning of the summary records a reader skipped (:func:`skipped_note`): marked by
    its type, so that it is told from other warnings without reading its text."""


def skipped_note(id_field: str, skipped: Sequence[int]) -> SkippedNote:
    """The warning of the summary records skipped (their record numbers).

    Example:
        >>> skipped_note("route_id", [0])
        "1 record(s) without 'route_id' that look like a summary were skipped (--skip-summary-records; record 0)"
    """
    note = hinted(
        f"{len(skipped)} record(s) without {id_field!r} that look like a summary were skipped (",
        hint("--skip-summary-records", "--skip-summary-records; ", lead="", spelt=True),
        f"record {', '.join(map(str, skipped[:5]))})",
    )
    return SkippedNote(note, note.hints)


def is_skipped_note(warning: str) -> bool:
    """Whether a result's warning is :func:`skipped_note` (the file's own, which a blind check
    shows, unlike the warnings about a public copy's stand-in values).

    Example:
        >>> note = skipped_note("instr_id", [0])
        >>> is_skipped_note(note), is_skipped_note(str(note)), is_skipped_note("3 stand-ins")
        (True, False, False)
    """
    return isinstance(warning, SkippedNote)


def without_summaries(records: list[Any], id_field: str, key: str | None = None) -> list[Any]:
    """``records`` without those that look like a summary, for file-level checks (the reader
    then skips or refuses each); all of them when every one does (not a summary, then, but a
    file of records with the wrong fields).

    Example:
        >>> recs = [{"sr": 0.5}, {"instr_id": "1_0", "trajectory": ["a"]}]
        >>> without_summaries(recs, "instr_id") == recs[1:], without_summaries(recs[:1], "x")
        (True, [{'sr': 0.5}])
    """
    kept = [r for r in records if not looks_like_summary(r, id_field, key)]
    return kept or records


class SummarySkips:
    """A reader's screen: a record that is no object is refused, a summary skipped or refused.

    Example:
        >>> s, pc = SummarySkips("route_id", None, skip=True), ProblemCollector("p.json")
        >>> s.reads({"sr": 0.5}, 0, pc), s.reads({"route_id": 1}, 1, pc), s.notes()[0][:12]
        (False, True, '1 record(s) ')
    """

    def __init__(self, id_field: str, key: str | None, skip: bool) -> None:
        self.id_field, self.key, self.skip = id_field, key, skip
        self.skipped: list[int] = []

    def reads(self, rec: Any, k: int, pc: ProblemCollector) -> bool:
        """Whether record ``k`` is read (else it is refused in ``pc``, or skipped if a summary)."""
        if not isinstance(rec, dict):
            pc.add(f"expected an object, got {type(rec).__name__}", field=f"record {k}")
            return False
        if not looks_like_summary(rec, self.id_field, self.key):
            return True
        if self.skip:
            self.skipped.append(k)
        else:
            pc.add(summary_problem(rec, self.id_field), field=f"record {k}")
        return False

    def notes(self) -> list[str]:
        """The warning of the records skipped (:func:`skipped_note`), if any."""
        return [skipped_note(self.id_field, self.skipped)] if self.skipped else []
