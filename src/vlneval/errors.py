"""Errors raised by vlneval.

Every error a user can cause is a :class:`VLNEvalError`. Messages say what was expected, what
came, and where (file, episode id, field). Input problems are collected into one
:class:`InvalidInputError` so that a user sees every problem of a file at once.
"""

from __future__ import annotations

import dataclasses
import difflib
import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "VLNEvalError",
    "InvalidInputError",
    "HiddenSplitError",
    "UnknownNameError",
    "MissingDataError",
    "InvalidActionError",
    "AgentError",
    "Problem",
    "ProblemCollector",
    "Hint",
    "Hinted",
    "LabelNote",
    "hint",
    "hinted",
    "edit_hinted",
    "did_you_mean",
    "check_seed",
    "more_not_shown",
]

MAX_SHOWN = 20


class VLNEvalError(Exception):
    """Base class of every error vlneval raises on purpose (exit code 2 in the CLI)."""


@dataclass(frozen=True)
class Problem:
    """One problem found in an input file.

    Attributes:
        source: the file (or other input) the problem is in.
        message: what is wrong, including the id and field where known (a :class:`Hinted`
            message marks where it advises a command-line option).
        episode: the episode id the problem belongs to, if any.
        field: the field path, e.g. ``trajectory[3]``.
    """

    source: str
    message: str
    episode: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        parts = [self.source] if self.source else []
        if self.episode is not None:
            parts.append(self.episode)
        if self.field is not None:
            parts.append(self.field)
        parts.append(self.message)
        return ": ".join(parts)


@dataclass(frozen=True)
class Hint:
    """Where a message advises a command-line option (made by :func:`hint`), so that a server,
    whose phases fix their options, can say instead what the phase does, without reading prose.

    Attributes:
        start, end: the clause in its message, ``lead`` and ``tail`` included.
        option: the option named, e.g. ``--subset``.
        lead, tail: the punctuation around the clause's words (``" ("``, ``")"``: an aside).
        spelt: the clause only spells an option that was given; it is no advice.
    """

    start: int
    end: int
    option: str
    lead: str = ""
    tail: str = ""
    spelt: bool = False


class LabelNote(str):
    """A warning whose words depend on the split's labels (which examples it has, e.g. the
    Touchdown panoramas that show the target): a server, which hides a test split's labels,
    does not show it to the submitter. As a string, just the warning.

    Example:
        >>> LabelNote("3 ignored") == "3 ignored"
        True
    """


class Hinted(str):
    """A message with its option hints marked (:func:`hinted`); as a string, just the message."""

    hints: tuple[Hint, ...] = ()

    def __new__(cls, text: str, hints: tuple[Hint, ...] = ()) -> Hinted:
        out = super().__new__(cls, text)
        out.hints = hints
        return out


def hint(
    option: str, words: str, *, lead: str = "; ", aside: bool = False, spelt: bool = False
) -> Hinted:
    """The clause ``lead + words`` of a message (``" (" + words + ")"``: an ``aside``), marked
    as a hint naming ``option``; ``spelt``: it only spells an option that was given.

    Example:
        >>> h = hint("--subset", "use --subset", aside=True)
        >>> h, h.hints[0].end
        (' (use --subset)', 15)
    """
    lead, tail = (" (", ")") if aside else (lead, "")
    text = f"{lead}{words}{tail}"
    return Hinted(text, (Hint(0, len(text), option, lead, tail, spelt),))


def hinted(*parts: str) -> Hinted:
    """``parts`` joined into one message, the hints of each kept where they land.

    Example:
        >>> m = hinted("2 files", hint("--subset", "use --subset", aside=True), ".")
        >>> m, m[m.hints[0].start : m.hints[0].end]
        ('2 files (use --subset).', ' (use --subset)')
    """
    text, hints = "", []
    for part in parts:
        hints += [dataclasses.replace(h, start=h.start + len(text), end=h.end + len(text))
                  for h in getattr(part, "hints", ())]  # fmt: skip
        text += part
    return Hinted(text, tuple(hints))


def edit_hinted(
    text: str, edit: Callable[[str], str], clause: Callable[[Hint, str], str] | None = None
) -> str:
    """``edit`` (a path replaced by a name) applied to each part of ``text`` between its hints,
    and ``clause(hint, words)`` (default: ``edit(words)``) to each hint's clause, the hints kept
    marked around their new words: the one walk over a message's hints.

    Example:
        >>> m = edit_hinted(hinted("/tmp/a", hint("--x", "--x")), lambda t: t.replace("/tmp/", ""))
        >>> m, m.hints[0].start
        ('a; --x', 1)
        >>> edit_hinted(hinted("a", hint("--x", "--x")), str, lambda h, words: f"; no {h.option}")
        'a; no --x'
    """
    pieces, last = [], 0
    for h in getattr(text, "hints", ()):
        words = clause(h, text[h.start : h.end]) if clause else edit(text[h.start : h.end])
        pieces += [
            edit(text[last : h.start]),
            Hinted(words, (dataclasses.replace(h, start=0, end=len(words)),)),
        ]
        last = h.end
    return hinted(*pieces, edit(text[last:])) if pieces else edit(text)


class InvalidInputError(VLNEvalError):
    """One or more problems in an input file.

    Args:
        problems: the problems found; ``str(error)`` shows the first 20 and a count.
    """

    def __init__(self, problems: Sequence[Problem] | str, *, source: str = "") -> None:
        if isinstance(problems, str):
            problems = [Problem(source, problems)]
        self.problems: list[Problem] = list(problems)
        super().__init__(self.render())

    def render(self, limit: int | None = MAX_SHOWN) -> str:
        """The error text: one line per problem, then a count of the ones not shown."""
        shown = self.problems if limit is None else self.problems[:limit]
        lines = [f"error: {p}" for p in shown]
        if len(shown) < len(self.problems):
            lines.append(f"error: {more_not_shown(self.problems[len(shown) :])}")
        return "\n".join(lines)


def more_not_shown(
    hidden: Sequence[Problem],
    *,
    name: Callable[[str], str] = str,
    advice: str = " (--all-errors lists them all)",
) -> str:
    """The line counting the problems ``hidden`` (not shown), naming their file when they are
    all of one (``name``: how a file is shown, e.g. by the name it was uploaded as).

    Example:
        >>> print(more_not_shown([Problem("preds.json", "bad")] * 12))
        preds.json: 12 more problems not shown (--all-errors lists them all)
        >>> print(more_not_shown([Problem("a", "x"), Problem("b", "y")], advice=""))
        2 more problems not shown
    """
    sources = {p.source for p in hidden}
    where = f"{name(sources.pop())}: " if len(sources) == 1 and "" not in sources else ""
    n = len(hidden)
    return f"{where}{n} more problem{'s' if n != 1 else ''} not shown{advice}"


class HiddenSplitError(InvalidInputError):
    """A split without goals (a hidden test split): it cannot be scored locally, only by its
    benchmark's evaluation server.

    Args:
        message: why; ``episodes_file``: the split's file (the problem's source).

    Example:
        >>> e = HiddenSplitError("split test has no goals", episodes_file="R2R_test.json")
        >>> isinstance(e, InvalidInputError), e.episodes_file, e.problems[0].source
        (True, 'R2R_test.json', 'R2R_test.json')
    """

    def __init__(self, message: str, *, episodes_file: str) -> None:
        self.episodes_file = episodes_file
        super().__init__(message, source=episodes_file)


class UnknownNameError(VLNEvalError, KeyError):
    """A task, profile, agent, scan or split name that is not registered.

    Args:
        kind, name: what was asked for.
        known: the names the closest one is suggested from.
        listed: the names the message lists (up to 30), when not ``known`` (versioned ids).
    """

    def __init__(
        self, kind: str, name: str, known: Iterable[str], *, listed: Iterable[str] | None = None
    ) -> None:
        self.kind, self.name = kind, name
        self.known = sorted(known)
        shown = self.known if listed is None else sorted(listed)
        hint = did_you_mean(name, self.known)
        msg = f"unknown {kind} {name!r}"
        msg += f"; did you mean {hint!r}?" if hint else ""
        msg += f" (known: {', '.join(shown)})" if len(shown) <= 30 else ""
        super().__init__(msg)

    def __str__(self) -> str:
        return str(self.args[0])


class MissingDataError(VLNEvalError):
    """A data file or folder that the command needs is not there."""


class InvalidActionError(VLNEvalError):
    """An agent chose an action outside its environment's action space (any env family)."""


class AgentError(VLNEvalError):
    """The agent under evaluation raised (its bug, not vlneval's). ``agent_traceback`` is the
    agent's exception with its own frames, as text (kept when the error crosses processes)."""

    def __init__(self, message: str, agent_traceback: str = "") -> None:
        super().__init__(message, agent_traceback)
        self.agent_traceback = agent_traceback

    def __str__(self) -> str:
        return str(self.args[0])


class ProblemCollector:
    """Collects problems of one input file, then raises them together.

    Example:
        >>> pc = ProblemCollector("preds.json")
        >>> pc.add("trajectory must be a list", episode='instr_id "1_0"', field="trajectory")
        >>> try:
        ...     pc.raise_if_any()
        ... except InvalidInputError as e:
        ...     print(e)
        error: preds.json: instr_id "1_0": trajectory: trajectory must be a list
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []

    def add(self, message: str, *, episode: str | None = None, field: str | None = None) -> None:
        """Records one problem."""
        self.problems.append(Problem(self.source, message, episode, field))

    def add_first(self, message: str) -> None:
        """Records one problem of the whole file before the others (it explains them).

        Example:
            >>> pc = ProblemCollector("preds.json")
            >>> pc.add("step 3 is no viewpoint", episode="7")
            >>> pc.add_first("the file was made for another split")
            >>> [p.message for p in pc.problems]
            ['the file was made for another split', 'step 3 is no viewpoint']
        """
        self.problems.insert(0, Problem(self.source, message))

    def __len__(self) -> int:
        return len(self.problems)

    def raise_if_any(self) -> None:
        """Raises :class:`InvalidInputError` when any problem was recorded."""
        if self.problems:
            raise InvalidInputError(self.problems, source=self.source)


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """The closest known name to ``name``, or None.

    Example:
        >>> did_you_mean("r2r-duett", ["r2r", "r2r-duet", "r4r"])
        'r2r-duet'
        >>> did_you_mean("r2x", ["r2r", "rxr"]), did_you_mean("VALUNSEEN", ["val_unseen"])
        ('r2r', 'val_unseen')
    """
    folded = {k.casefold(): k for k in known}
    close = difflib.get_close_matches(name.casefold(), list(folded), n=3, cutoff=0.6)
    if not close:
        return None
    # equally close names (r2x: r2r, rxr): the one sharing the longest start with the name
    ratio = difflib.SequenceMatcher(None, name.casefold(), close[0]).ratio()
    tied = [c for c in close if difflib.SequenceMatcher(None, name.casefold(), c).ratio() == ratio]
    best = max(tied, key=lambda c: len(os.path.commonprefix([name.casefold(), c])))
    return folded[best]


def check_seed(seed: object, name: str = "seed") -> None:
    """Refuses a seed numpy cannot take (an integer >= 0), before anything runs: the one check
    and wording of a run's seed (the library's, ``vlneval run --seed`` and the resampling seed
    of ``report`` and ``compare``); ``name`` is the argument or option.

    Example:
        >>> check_seed(-1, "--seed")
        Traceback (most recent call last):
        vlneval.errors.VLNEvalError: --seed must be a non-negative integer, got -1
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise VLNEvalError(f"{name} must be a non-negative integer, got {seed!r:.40}")
