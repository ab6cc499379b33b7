"""Public validation: what is wrong with a submission, found without the hidden labels.

A submission is first checked against the *public view* of its phase
(:mod:`vlneval.tasks.common.blind`, which ``vlneval validate`` runs too): what a benchmark's
public test file holds, no reference path beyond the start and no goal. The messages can only
quote what the submitter wrote and public facts, so nothing needs redacting: a message is the
same whether or not a viewpoint the submitter wrote is on a reference path. A file whose ids
match another split of the task is told which (:class:`SplitIndex`).
"""

from __future__ import annotations

import functools
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from vlneval.errors import Hint, Problem, edit_hinted, more_not_shown
from vlneval.tasks.common.blind import SplitIndex, public_problems, public_view, submitted_ids

__all__ = [
    "public_view",
    "public_problems",
    "render_problems",
    "for_phase",
    "ServerPaths",
    "SplitIndex",
    "MAX_MESSAGES",
    "MAX_CHARS",
]

MAX_MESSAGES = 50
MAX_CHARS = 600
#: What a phase offers instead of an option the scorer's hints name (the phase fixes its
#: profile and options); a hint naming any other option is dropped.
PHASE_TEXT = {
    "--subset": "this phase scores complete files only",
    "--skip-summary-records": "remove that record from the file",
}


def for_phase(message: str) -> str:
    """``message`` with each hint the library marked in it (:class:`~vlneval.errors.Hint`) put
    as the phase puts it: its option's ``PHASE_TEXT`` between the hint's punctuation, or
    nothing (another option, or a hint that only spells the option). The rest of the message,
    the submitter's words among it, stays as written.

    Example:
        >>> from vlneval.errors import hint, hinted
        >>> for_phase(hinted("2 of 3 have no prediction (first: --subset)",
        ...                  hint("--subset", "use --subset to score them", aside=True)))
        '2 of 3 have no prediction (first: --subset) (this phase scores complete files only)'
        >>> for_phase(hinted("a jump (the scorer rejects jumps",
        ...                  hint("--profile", "use --profile r4r to score them"), ")"))
        'a jump (the scorer rejects jumps)'
    """

    def put(h: Hint, _words: str) -> str:
        text = None if h.spelt else PHASE_TEXT.get(h.option)
        return "" if text is None else f"{h.lead}{text}{h.tail}"

    return str(edit_hinted(message, str, put))


class ServerPaths:
    """The server's own folders (its data, the uploads, the public copies): each file under
    one, wherever a message names it (after a colon too, ``x:/srv/...``, ``file:///srv/...``),
    is shown as ``[server file]``. They are known by value, so anything else, the submitter's
    words among it (a viewpoint written as ``/srv/x.json``), stays as written; ``/`` and the
    temporary folder's root (``/tmp``) hold others' files too and are not folders here, but a
    top folder of the server's data (``/hidden``) is one. A file (the hidden episodes) given
    here is redacted by its exact name.

    Example:
        >>> paths = ServerPaths(["/srv/data", "/srv/up/"])
        >>> paths.redact("boxes at /srv/data/BBox.tar.gz. Put v2 (SDR@40/80) there")
        'boxes at [server file]. Put v2 (SDR@40/80) there'
        >>> paths.redact("see https://a.org/srv/data/x, not /srv/up/p.json or /srv/database/x")
        'see https://a.org/srv/data/x, not [server file] or /srv/database/x'
        >>> ServerPaths(["/", "/hidden"]).redact("read /hidden/REVERIE_test.json, not /a/b")
        'read [server file], not /a/b'
    """

    def __init__(self, folders: Iterable[str | Path | None] = ()) -> None:
        temp = Path(tempfile.gettempdir())
        shared = {Path("/"), temp, temp.resolve()}
        names = set()
        for folder in (f for f in folders if f):
            for p in (Path(folder), Path(folder).resolve()):
                if p.is_absolute() and p not in shared:
                    names.add(str(p))
        alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        self._pattern = (
            re.compile(
                rf"""(?:(?<![\w.~/-])|(?<=file://))(?:{alternatives})(?![\w~-])"""
                r"""(?:/[^\s'"(),;:]*)?(?<!\.)"""
            )
            if names
            else None
        )
        self.folders = frozenset(names)

    def adding(self, *folders: str | Path | None) -> ServerPaths:
        """These folders and ``folders`` (a submission's upload folder)."""
        return ServerPaths([*self.folders, *folders])

    def redact(self, text: str) -> str:
        """``text`` with each file under the folders as ``[server file]``."""
        return text if self._pattern is None else self._pattern.sub("[server file]", text)

    def named_in(self, text: str) -> bool:
        """Whether ``text`` names a file under the folders."""
        return self._pattern is not None and self._pattern.search(text) is not None

    def redact_all(self, value: Any) -> Any:
        """``value`` with every string in it redacted (keys stay: the summary's own).

        Example:
            >>> ServerPaths(["/srv/data"]).redact_all({"a": ["/srv/data/x", 1], "b": "/srv/data"})
            {'a': ['[server file]', 1], 'b': '[server file]'}
        """
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self.redact_all(v) for v in value]
        if isinstance(value, dict):
            return {k: self.redact_all(v) for k, v in value.items()}
        return value


def render_problems(
    problems: Sequence[Problem],
    *,
    source: str,
    display_name: str,
    paths: ServerPaths | None = None,
) -> list[str]:
    """Problems as the submitter sees them: named by the upload's name, with server hints.

    The problems come from the public view, so no hidden value can be in them, and they are
    shown as ``vlneval score`` words them: an episode's start is public (the split file teams
    download holds it) and is what a file that misses it needs; a file of the server's own
    (``paths``) is shown as ``[server file]``, the rest as written. At most ``MAX_MESSAGES`` lines
    of at most ``MAX_CHARS`` characters, then a count.

    Example:
        >>> p = [Problem("/srv/up/ab.json", "the trajectory starts at aaaaa1, not at the "
        ...      "episode's start sssss1", 'instr_id "1_0"', "trajectory[0]")]
        >>> [line] = render_problems(p, source="/srv/up/ab.json", display_name="preds.json")
        >>> print(line)
        preds.json: instr_id "1_0": trajectory[0]: the trajectory starts at aaaaa1, not at the episode's start sssss1
    """
    out = []
    for p in problems[:MAX_MESSAGES]:
        shown_source = display_name if p.source == source else p.source
        text = str(Problem(shown_source, for_phase(p.message), p.episode, p.field)).replace(
            source, display_name
        )
        text = (paths or ServerPaths()).redact(text)
        out.append(text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…")
    if len(problems) > len(out):
        hidden = problems[len(out) :]
        line = more_not_shown(hidden, name=lambda s: display_name if s == source else s, advice="")
        out.append((paths or ServerPaths()).redact(line))
    return out


def sibling_splits(task: Any, split: str, episodes_file: str | None, profile: Any) -> SplitIndex:
    """The ids of ``task``'s other splits whose files lie where the task's file patterns put
    them relative to ``episodes_file`` (beside it, or in a sibling folder for a pattern such as
    ``{split}/{split}.json``), each read by the task's loader on first use."""
    out: dict[str, Callable[[], Sequence[str]]] = {}
    if not episodes_file:
        return SplitIndex(out)
    here = Path(episodes_file)
    for other in getattr(task, "splits", ()):
        if other == split:
            continue
        for pattern in getattr(task, "file_names", ()):
            found = [c for c in _candidates(here, pattern, split, other) if c.is_file()]
            if found:
                out[other] = functools.partial(_ids, task, found[0], other, profile)
                break
    return SplitIndex(out)


def _ids(task: Any, path: Path, split: str, profile: Any) -> Sequence[str]:
    return submitted_ids(task.load(path, split, profile))[1]


def _candidates(here: Path, pattern: str, split: str, other: str) -> list[Path]:
    """Where ``pattern``'s file of split ``other`` is, if ``here`` is its file of ``split``.

    Example:
        >>> [str(p) for p in _candidates(Path("/d/val/val.json.gz"), "{split}/{split}.json",
        ...                               "val", "test")]
        ['/d/test/test.json', '/d/test/test.json.gz', '/d/val/test.json', '/d/val/test.json.gz']
    """
    mine, theirs = Path(pattern.format(split=split)), Path(pattern.format(split=other))
    base = here.parent
    depth = len(mine.parts) - 1
    out: list[Path] = []
    if (
        depth
        and len(here.parents) > depth
        and list(here.parent.parts[-depth:]) == list(mine.parent.parts)
    ):
        root = here.parents[depth]
        out += [root / theirs, root / f"{theirs}.gz"]
    out += [base / theirs.name, base / f"{theirs.name}.gz"]
    return out
