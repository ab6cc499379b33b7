"""Blind validation: what is wrong with a submission, said without touching hidden labels.

When the scorer refuses a file, the server does not show the scorer's own messages, which may
quote reference data ("not at the episode's start X"). It validates the file again against the
*public view* of the episodes, what a benchmark's public test file holds: ids, scans, start
viewpoints, headings and instructions, with no reference path beyond the start and no goals.
Messages built from that view can only quote the submitter's own file and public facts (ids,
scans, the navigation graphs). Each message then passes :meth:`Redactor.for_submitter`, which
hides any hidden value the submitter did not write themselves (the start, here), and names the
upload as the submitter called it, never by its path on the server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from vlneval.errors import InvalidInputError, Problem
from vlneval.graph.store import GraphStore
from vlneval.server.redact import Redactor, strings_in
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.profiles import Profile

__all__ = [
    "public_view",
    "blind_problems",
    "render_problems",
    "OwnStrings",
    "episode_of",
    "MAX_MESSAGES",
    "MAX_CHARS",
]

MAX_MESSAGES = 50
MAX_CHARS = 600
# The scorer's hints name command-line options; on the server the phase fixes them.
SERVER_HINTS = (
    (re.compile(r" \(use --subset to score only the predicted ones, reported as partial\)"),
     " (this phase scores complete files only)"),
    (re.compile(r"; use --profile [\w.-]+ to score them with their shortest distance\)"), ")"),
    (re.compile(r" \(use --profile [\w.-]+, which scores repeats\)"), ""),
    (re.compile(r"; pass --skip-summary-records to skip it"), "; remove that record from the file"),
)  # fmt: skip


def public_view(episodes: EpisodeTable) -> EpisodeTable:
    """The episodes as a public test file gives them: reference paths cut to the start, no goals.

    Example:
        >>> import numpy as np
        >>> t = EpisodeTable("demo", "val", "x.json", "instr_id", ["1_0"], ["scanA"],
        ...                  [("s", "a", "g")], [("g",)], np.zeros(1), ["go"])
        >>> v = public_view(t)
        >>> v.paths, v.goals, v.source, v.scorable
        ([('s',)], [()], '<public view>', False)
    """
    return EpisodeTable(
        episodes.task,
        episodes.split,
        "<public view>",
        episodes.id_field,
        list(episodes.ids),
        list(episodes.scans),
        [tuple(p[:1]) for p in episodes.paths],
        [() for _ in episodes.goals],
        np.asarray(episodes.headings).copy(),
        list(episodes.instructions),
        left_out=list(episodes.left_out),
        scorable=False,
    )


def blind_problems(
    predictions: str | Path,
    public: EpisodeTable,
    graphs: GraphStore,
    profile: Profile,
    *,
    form: str = "auto",
    trajectory_key: str | None = None,
) -> list[Problem]:
    """The problems of a predictions file found with the public view only.

    Runs the scorer's own parser and rule checks (types, ids, viewpoints, start, adjacency,
    repeats, completeness) on ``public``: the same problems the scorer finds, worded from data
    the submitter may see.
    """
    from vlneval.tasks.common.arrays import build_arrays
    from vlneval.tasks.common.checks import check_rules
    from vlneval.tasks.common.predictions import parse_predictions

    try:
        preds = parse_predictions(
            predictions, public, graphs, form=form, trajectory_key=trajectory_key
        )
        arr = build_arrays(public, preds, graphs)
        check_rules(public, preds, arr, graphs, profile, subset=False)
    except InvalidInputError as exc:
        return list(exc.problems)
    return []


class OwnStrings:
    """What the submitter wrote: the strings of the whole file, and of each record by its id.

    Decoded on first use only (most files need no redaction at all).

    Example:
        >>> own = OwnStrings(b'[{"instr_id": "1_0", "trajectory": [["vpA", 0, 0]]}]', "instr_id")
        >>> sorted(own.of("1_0")), "vpA" in own.of(None)
        (['1_0', 'instr_id', 'trajectory', 'vpA'], True)
    """

    def __init__(self, text: bytes, id_field: str) -> None:
        self.text, self.id_field = text, id_field
        self._file: set[str] | None = None
        self._by_id: dict[str, set[str]] = {}

    def _load(self) -> None:
        from vlneval.errors import VLNEvalError
        from vlneval.io import decode_json

        try:
            value = decode_json(self.text, "<upload>")
        except VLNEvalError:
            value = None
        self._file = strings_in(value)
        for rec in value if isinstance(value, list) else []:
            if isinstance(rec, dict) and isinstance(rec.get(self.id_field), (str, int)):
                self._by_id.setdefault(str(rec[self.id_field]), set()).update(strings_in(rec))

    def of(self, episode_id: str | None) -> set[str]:
        """The strings of the record ``episode_id`` (of the whole file when None)."""
        if self._file is None:
            self._load()
        if episode_id is None:
            return self._file or set()
        return self._by_id.get(episode_id, set())


def episode_of(p: Problem, id_field: str) -> str | None:
    """The episode id a problem names (``instr_id "1_0"`` -> ``1_0``), or None.

    Example:
        >>> episode_of(Problem("f", "m", 'instr_id "1_0"'), "instr_id")
        '1_0'
    """
    prefix = f'{id_field} "'
    if p.episode and p.episode.startswith(prefix) and p.episode.endswith('"'):
        return p.episode[len(prefix) : -1]
    return None


def render_problems(
    problems: Sequence[Problem],
    *,
    source: str,
    display_name: str,
    redactor: Redactor,
    own: OwnStrings,
    starts: Mapping[str, str],
) -> list[str]:
    """Problems as the submitter sees them: named by the upload's name, hidden values redacted.

    A message about an episode may show a hidden value only if that episode's own record holds
    it, and never the episode's start (the one reference value the public view has). At most
    ``MAX_MESSAGES`` lines of at most ``MAX_CHARS`` characters, then a count.

    Example:
        >>> p = [Problem("/srv/up/ab.json", "the trajectory starts at aaaaa1, not at the "
        ...      "episode's start sssss1", 'instr_id "1_0"', "trajectory[0]")]
        >>> own = OwnStrings(b'[{"instr_id": "1_0", "trajectory": ["aaaaa1", "sssss1"]}]', "instr_id")
        >>> [line] = render_problems(p, source="/srv/up/ab.json", display_name="preds.json",
        ...     redactor=Redactor({"sssss1"}), own=own, starts={"1_0": "sssss1"})
        >>> print(line)
        preds.json: instr_id "1_0": trajectory[0]: the trajectory starts at aaaaa1, not at the episode's start [hidden]
    """
    out = []
    for p in problems[:MAX_MESSAGES]:
        shown_source = display_name if p.source == source else p.source
        text = str(Problem(shown_source, p.message, p.episode, p.field)).replace(
            source, display_name
        )
        for pattern, replacement in SERVER_HINTS:
            text = pattern.sub(replacement, text)
        eid = episode_of(p, own.id_field)
        always = (starts[eid],) if eid is not None and eid in starts else ()
        text = redactor.for_submitter(text, lambda eid=eid: own.of(eid), always)  # type: ignore[misc]
        out.append(text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…")
    hidden = len(problems) - len(out)
    if hidden > 0:
        out.append(f"{hidden} more problem{'s' if hidden != 1 else ''} not shown")
    return out
