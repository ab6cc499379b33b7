"""Keeping hidden reference data out of log lines and internal errors.

Messages for submitters never need this module: they are built from the public view of a phase
(:mod:`vlneval.server.services.validation`). Redaction is the second line, for what only
organisers read: log lines, incident tracebacks, errors raised while the hidden data itself was
being loaded or scored. A string shorter than 5 characters is never hidden (it would turn every
``the`` of a line into ``[hidden]``), nor is a number shown with fewer than 3 decimals (counts
and timings stay readable); keys, scans, episode ids and public fields stay as they are, so a
log line still says what went wrong and where.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from vlneval.io import read_bytes

__all__ = [
    "Redactor", "HIDDEN", "secrets_of", "secrets_in_raw", "PUBLIC_KEYS",
    "companion_files", "read_json_values", "raw_redactor",
]  # fmt: skip

HIDDEN = "[hidden]"
TOKEN = re.compile(r"[A-Za-z0-9_\-]+")
NUMBER = re.compile(r"(?<![\w.])-?\d+\.(\d{3,})(?:[eE][-+]?\d+)?(?![\w.])")
MIN_TOKEN = 5
MIN_DECIMALS, MAX_DECIMALS = 3, 8
# Fields of an episodes file whose values are public (a benchmark's public test file has them).
PUBLIC_KEYS = frozenset({
    "scan", "scan_id", "house_id", "instructions", "instruction", "instr_id", "instruction_id",
    "path_id", "episode_id", "id", "heading", "language", "split", "instr_encoding",
    # VLN-CE: a public test file holds the scene, the start pose and the vocabulary too
    "scene_id", "trajectory_id", "start_position", "start_rotation", "instruction_vocab",
})  # fmt: skip


def secrets_of(episodes: Any) -> set[str]:
    """The hidden values of an episode table: every reference-path and goal viewpoint."""
    out: set[str] = set()
    for path in getattr(episodes, "paths", ()):
        out.update(path)
    for goals in getattr(episodes, "goals", ()):
        out.update(goals)
    return out


def _values(value: Any) -> Iterator[str | float]:
    """Every string and float of a decoded JSON value, except under a public field."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (str, float)):
            yield v
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(x for k, x in v.items() if k not in PUBLIC_KEYS)


def secrets_in_raw(value: Any) -> tuple[set[str], set[float]]:
    """The values of a decoded episodes file an organiser's log must not show, when the file
    could not be loaded as episodes: every string and non-integer number that is not a key and
    not under a public field (:data:`PUBLIC_KEYS`). A public value that is also a hidden one
    (a start position is a reference path's first point, and another episode's goal) is hidden.

    Example:
        >>> strings, numbers = secrets_in_raw(
        ...     [{"scan": "s1", "start_position": [0.5, 2.0], "path": ["vpA", "vpB"],
        ...       "goal": [1.25, 0.0], "reference_path": [[0.75, 2.0], [1.25, 0.0]]}]
        ... )
        >>> sorted(strings), sorted(numbers)
        (['vpA', 'vpB'], [0.75, 1.25])
    """
    strings: set[str] = set()
    numbers: set[float] = set()
    for v in _values(value):
        if isinstance(v, str):
            strings.add(v)
        elif math.isfinite(v) and v != int(v):
            numbers.add(v)
    return strings, numbers


def read_json_values(path: str | Path) -> Any:
    """A JSON or JSON-lines file (gzipped or not), decoded; None when it cannot be read."""
    try:
        raw = read_bytes(Path(path))
        try:
            return msgspec.json.decode(raw)
        except msgspec.DecodeError:  # JSON lines (RxR)
            return [msgspec.json.decode(line) for line in raw.splitlines() if line.strip()]
    except Exception:  # noqa: BLE001 - unreadable: its error quotes no values
        return None


def companion_files(episodes_file: str | Path) -> list[Path]:
    """The hidden files that go with an episodes file: a VLN-CE split's dense reference
    (``val_unseen.json.gz`` -> ``val_unseen_gt.json.gz``), when it is there.

    Example:
        >>> companion_files("/nowhere/val_unseen.json.gz")
        []
    """
    p = Path(episodes_file)
    stem = p.name.split(".", 1)[0]
    names = (f"{stem}_gt.json", f"{stem}_gt.json.gz")
    return [p.parent / n for n in names if not stem.endswith("_gt") and (p.parent / n).is_file()]


def raw_redactor(episodes_file: str | Path | None) -> Redactor:
    """A redactor of every non-public value of an episodes file read as plain JSON (for a file
    that could not be loaded as episodes, or a task whose episodes are not viewpoint tables),
    and of the hidden files that go with it (:func:`companion_files`: a VLN-CE dense reference)."""
    if not episodes_file or (values := read_json_values(episodes_file)) is None:
        return Redactor(())  # unreadable: its error quotes no values
    strings, numbers = secrets_in_raw(values)
    for path in companion_files(episodes_file):
        s, n = secrets_in_raw(read_json_values(path))
        strings |= s
        numbers |= n
    return Redactor(strings, numbers)


class Redactor:
    """Replaces hidden values in text (for logs and internal errors only).

    Args:
        secrets: hidden strings of at least 5 characters (shorter ones are kept); token-like
            ones (letters, digits, ``_``, ``-``) are matched as whole tokens, others as
            substrings.
        numbers: hidden numbers (e.g. goal positions); a number written with 3 or more
            decimals is hidden when one of them rounds to it.

    Example:
        >>> r = Redactor({"goalvp123"}, numbers={-3.21137})
        >>> r.strict("stopped at abcdef1, goal goalvp123 at (-3.211, 0.50)")
        'stopped at abcdef1, goal [hidden] at ([hidden], 0.50)'
    """

    def __init__(self, secrets: Iterable[str], numbers: Iterable[float] = ()) -> None:
        self.tokens: set[str] = set()
        self.phrases: list[str] = []
        for s in secrets:
            if len(s) < MIN_TOKEN:
                continue
            if TOKEN.fullmatch(s):
                self.tokens.add(s)
            else:
                self.phrases.append(s)
        self.phrases.sort(key=len, reverse=True)
        # sorted, for a look-up by interval: a float array, not a set of printed forms
        self.numbers = np.unique(np.fromiter((x for x in numbers if math.isfinite(x)), float))

    def __len__(self) -> int:
        return len(self.tokens) + len(self.phrases) + len(self.numbers)

    def _hidden_number(self, m: re.Match[str]) -> bool:
        """Whether a hidden number is shown as ``m`` (rounds to it at the shown precision)."""
        decimals = min(len(m.group(1)), MAX_DECIMALS)
        try:
            shown = float(m.group(0))
        except ValueError:  # pragma: no cover - the pattern only matches numbers
            return False
        half = 0.5 * 10.0**-decimals * (1 + 1e-9)
        i = int(np.searchsorted(self.numbers, shown - half))
        return i < len(self.numbers) and float(self.numbers[i]) <= shown + half

    def found(self, text: str) -> list[str]:
        """The hidden values that occur in ``text``."""
        hits = [m.group(0) for m in TOKEN.finditer(text) if m.group(0) in self.tokens]
        if len(self.numbers):
            hits += [m.group(0) for m in NUMBER.finditer(text) if self._hidden_number(m)]
        return hits + [p for p in self.phrases if p in text]

    def strict(self, text: str) -> str:
        """``text`` with every hidden value replaced."""
        if not self.found(text):
            return text
        out = TOKEN.sub(lambda m: HIDDEN if m.group(0) in self.tokens else m.group(0), text)
        if len(self.numbers):
            out = NUMBER.sub(lambda m: HIDDEN if self._hidden_number(m) else m.group(0), out)
        for p in self.phrases:
            out = out.replace(p, HIDDEN)
        return out
