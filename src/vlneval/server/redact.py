"""Keeping hidden reference data out of every message, page and log line.

The hidden values of a phase are the viewpoints of its reference paths and goals (starts
included: a start is public in a benchmark's test file, but a message need not quote it).
A :class:`Redactor` replaces each of them in a text by ``[hidden]`` with two policies:

- for the submitter (:meth:`Redactor.for_submitter`): a value the submitter's own file contains
  is left as it is. Redacting it would itself answer "is this viewpoint on a reference path?",
  and the submitter already knows what they wrote; a value they did not write is always hidden.
- for logs and internal errors (:meth:`Redactor.strict`): every hidden value is replaced.

Redaction is the last of three layers (see :mod:`vlneval.server.validation`): messages are first
produced by validating against a public view of the episodes that does not hold the labels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable
from typing import Any

__all__ = ["Redactor", "HIDDEN", "strings_in", "secrets_of"]

HIDDEN = "[hidden]"
TOKEN = re.compile(r"[A-Za-z0-9_\-]+")
MIN_TOKEN = 5


def strings_in(value: Any) -> set[str]:
    """Every string (keys included) in a decoded JSON value.

    Example:
        >>> sorted(strings_in([{"instr_id": "1_0", "trajectory": [["vp1", 0.5, 0]]}]))
        ['1_0', 'instr_id', 'trajectory', 'vp1']
    """
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            out.update(k for k in v if isinstance(k, str))
            stack.extend(v.values())
    return out


def secrets_of(episodes: Any) -> set[str]:
    """The hidden values of an episode table: every reference-path and goal viewpoint."""
    out: set[str] = set()
    for path in episodes.paths:
        out.update(path)
    for goals in episodes.goals:
        out.update(goals)
    return out


class Redactor:
    """Replaces hidden values in text.

    Args:
        secrets: the hidden values; token-like ones (letters, digits, ``_``, ``-``; at least 5
            characters) are matched as whole tokens, others as substrings.

    Example:
        >>> r = Redactor({"goalvp123", "startvp00"})
        >>> r.strict("starts at abcdef1, not at startvp00")
        'starts at abcdef1, not at [hidden]'
        >>> r.for_submitter("goalvp123 is not a neighbour of startvp00", {"goalvp123"})
        'goalvp123 is not a neighbour of [hidden]'
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self.tokens: set[str] = set()
        self.phrases: list[str] = []
        for s in secrets:
            if not s or (len(s) < MIN_TOKEN and TOKEN.fullmatch(s)):
                continue
            if TOKEN.fullmatch(s):
                self.tokens.add(s)
            else:
                self.phrases.append(s)
        self.phrases.sort(key=len, reverse=True)

    def __len__(self) -> int:
        return len(self.tokens) + len(self.phrases)

    def found(self, text: str) -> list[str]:
        """The hidden values that occur in ``text``."""
        hits = [m.group(0) for m in TOKEN.finditer(text) if m.group(0) in self.tokens]
        return hits + [p for p in self.phrases if p in text]

    def _replace(self, text: str, keep: Callable[[str], bool]) -> str:
        def one(m: re.Match[str]) -> str:
            t = m.group(0)
            return HIDDEN if t in self.tokens and not keep(t) else t

        out = TOKEN.sub(one, text)
        for p in self.phrases:
            if p in out and not keep(p):
                out = out.replace(p, HIDDEN)
        return out

    def strict(self, text: str) -> str:
        """``text`` with every hidden value replaced (for logs and internal errors)."""
        if not self.found(text):
            return text
        return self._replace(text, lambda _: False)

    def for_submitter(
        self,
        text: str,
        own: Container[str] | Callable[[], Container[str]],
        always: Container[str] = (),
    ) -> str:
        """``text`` with the hidden values the submitter did not write replaced.

        Args:
            own: the strings of the submitter's file (or of the record the text is about), or a
                function that returns them (called only when ``text`` holds a hidden value).
            always: hidden values replaced even when the submitter wrote them (the start of the
                episode a message is about: a message may quote it as the reference).
        """
        if not self.found(text):
            return text
        strings = own() if callable(own) else own
        return self._replace(text, lambda s: s in strings and s not in always)
