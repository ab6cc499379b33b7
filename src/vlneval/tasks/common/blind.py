"""Blind validation: a predictions file checked without the split's hidden values.

A task read by the shared R2R reader (``Task.graph_trajectories``) is checked on the *public
view* of its split (ids, scans, starts and graphs; :func:`public_problems`): the scorer's own
parser and rule checks, worded from data the submitter may see. A task with its own reader is
checked by its own scorer run on the *public copy* of the split
(:mod:`vlneval.tasks.common.public_file`, :class:`PublicScorer`). The evaluation server checks
every upload this way; ``vlneval validate`` does for a goal-less test split. A file made for
another split is told which split its ids belong to (:class:`SplitIndex`, public ids only).
"""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from vlneval.errors import (
    InvalidInputError,
    Problem,
    ProblemCollector,
    VLNEvalError,
    hint,
    hinted,
)
from vlneval.io import json_text
from vlneval.tasks import get_task
from vlneval.tasks.common.arrays import build_arrays
from vlneval.tasks.common.checks import check_rules, no_match
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.goal_scoring import release_file
from vlneval.tasks.common.inputs import ReadInput, read_input
from vlneval.tasks.common.predictions import parse_predictions
from vlneval.tasks.common.public_file import has_public_copy, public_text, write_public_copy
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, SplitRequest
from vlneval.tasks.common.root import data_root
from vlneval.tasks.common.scoring import load_split
from vlneval.tasks.common.summary_records import is_skipped_note
from vlneval.tasks.profiles import Profile

if TYPE_CHECKING:
    from vlneval.graph.store import GraphStore
    from vlneval.tasks.base import Task


__all__ = [
    "na_lead",
    "public_view",
    "public_problems",
    "public_check",
    "SplitIndex",
    "submitted_ids",
    "other_splits",
    "split_hint",
    "twin_hint",
    "split_ids",
    "read_text",
    "read_again",
    "BlindCheck",
    "checks_publicly",
    "open_public",
    "blind_check",
    "PublicScorer",
    "file_ids",
    "open_blind",
    "split_file",
    "own_blind_check",
]


def na_lead(label: str) -> str:
    """How a blind check's note that metric ``label`` will be n/a begins (the reason follows):
    the one wording that :func:`~vlneval.tasks.common.verdict.blind_refusal` and the server's
    phase check read back.

    Example:
        >>> na_lead("RGSPL") + "no predObjId"
        'RGSPL will be n/a: no predObjId'
    """
    return f"{label} will be n/a: "


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
    kept = {f.name: getattr(episodes, f.name) for f in dataclasses.fields(EpisodeTable) if f.init}
    return EpisodeTable(  # the base table: a task's own columns (goal objects) stay behind
        **{
            **kept,
            "source": "<public view>",
            "paths": [tuple(p[:1]) for p in episodes.paths],
            "goals": [() for _ in episodes.goals],
            "headings": np.asarray(episodes.headings).copy(),
            "left_out": list(episodes.left_out),
            "scorable": False,
        }
    )


@dataclass
class SplitIndex:
    """The public ids of a task's other splits, loaded on first use.

    Args:
        loaders: split name -> a function returning that split's episode ids.

    Example:
        >>> idx = SplitIndex({"val_seen": lambda: ["1_0", "1_1"], "train": lambda: ["2_0"]})
        >>> idx.best_match({"1_0", "1_1", "9_9"})
        ('val_seen', 2)
    """

    loaders: Mapping[str, Callable[[], Sequence[str]]]
    _ids: dict[str, frozenset[str]] = field(default_factory=dict)

    def ids(self, split: str) -> frozenset[str]:
        """The ids of ``split`` (empty when its file cannot be read)."""
        if split not in self._ids:
            try:
                self._ids[split] = frozenset(self.loaders[split]())
            except Exception:  # noqa: BLE001 - an unreadable public file only loses the hint
                self._ids[split] = frozenset()
        return self._ids[split]

    def best_match(self, ids: set[str]) -> tuple[str, int] | None:
        """The split holding most of ``ids``, and how many; None when none holds any."""
        best: tuple[str, int] | None = None
        for split in self.loaders:
            n = len(ids & self.ids(split))
            if n and (best is None or n > best[1]):
                best = (split, n)
        return best


def submitted_ids(table: Any) -> tuple[str, Sequence[str]]:
    """The field a predictions file names a split's episodes by, and their ids in it (the
    table's own ``submitted_ids``: the episode ids, SOON's instruction ids, Touchdown SDR's
    route ids)."""
    return table.submitted_ids()  # type: ignore[no-any-return]


_UNREADABLE = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
"""What :func:`file_ids` skips: msgspec recurses into a record even to skip it as raw JSON,
so one nested too deeply raises RecursionError (the scorer has named it; the hint is lost)."""


def file_ids(text: bytes, id_field: str) -> set[str]:
    """The ids a predictions file holds, as text: the ``id_field`` of the records of a JSON
    list or of JSON lines, or the keys of a JSON object keyed by episode id (VLN-CE).

    Example:
        >>> sorted(file_ids(b'[{"instr_id": "1_0"}, {"instr_id": 7}]', "instr_id"))
        ['1_0', '7']
        >>> sorted(file_ids(b'{"4": [], "9": []}', "episode_id"))
        ['4', '9']
        >>> sorted(file_ids(b'{"instruction_id": 3}\\n{"instruction_id": 4}\\n', "instruction_id"))
        ['3', '4']
    """
    records: list[dict[str, Any]] = []
    try:
        records = msgspec.json.decode(text, type=list[dict[str, msgspec.Raw]])
    except _UNREADABLE:
        try:
            keyed = msgspec.json.decode(text, type=dict[str, msgspec.Raw])
        except _UNREADABLE:
            records = _lines(text)
        else:
            return set(keyed) if id_field not in keyed else set()
    out: set[str] = set()
    for rec in records:
        raw = rec.get(id_field)
        if raw is None:
            continue
        try:
            value = msgspec.json.decode(raw)
        except _UNREADABLE:
            continue
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            out.add(str(value))
    return out


def _lines(text: bytes) -> list[dict[str, Any]]:
    """The records of JSON lines (bad lines skipped)."""
    out = []
    for line in bytes(text).splitlines():
        try:
            out.append(msgspec.json.decode(line, type=dict[str, msgspec.Raw]))
        except _UNREADABLE:
            continue
    return out


def _other_split(text: bytes, episodes: Any, splits: SplitIndex) -> tuple[str, int, int] | None:
    """The other split most of the file's ids are episodes of, how many are, and how many ids
    the file has; None when one of its ids is an episode of ``episodes`` (a split's), or no
    other split holds any. Only public ids are compared."""
    id_field, ids_of_split = submitted_ids(episodes)
    ids = file_ids(text, id_field)
    if not ids or ids & set(ids_of_split):
        return None
    match = splits.best_match(ids)
    return None if match is None else (*match, len(ids))


def wrong_split(
    text: bytes | None, public: Any, splits: SplitIndex | None, source: str
) -> Problem | None:
    """The problem of a file none of whose ids is an episode of the split of ``public`` (a
    split's episodes) and most of whose ids are episodes of another split; None when the file
    has ids of the split, no other split holds any, or there is no text or ``splits`` to compare
    (nothing is then decoded). Only public ids are compared."""
    if text is None or splits is None or (found := _other_split(text, public, splits)) is None:
        return None
    split, n, total = found
    return Problem(
        source,
        f"{no_match(public.task, public.split)} ({len(public):,} "
        f"episodes); {n:,} of the file's {total:,} ids are episodes of {public.task} "
        f"{split}: this phase scores {public.split}, was the file made for {split}?",
    )


def other_splits(request: SplitRequest) -> SplitIndex:
    """The ids of the other splits of ``request``'s task whose files the scorer finds (as
    :func:`split_file` does, under the data root, with the request's data version), each
    read on first use; a split without a file is left out."""
    out: dict[str, Callable[[], Sequence[str]]] = {}
    for other in request.task.splits:
        if other == request.split:
            continue
        try:
            path = split_file(dataclasses.replace(request, split=other, episodes_file=None))
        except VLNEvalError:
            continue
        out[other] = functools.partial(split_ids, request.task, path, other, request.profile)
    return SplitIndex(out)


def split_ids(task: Task, path: Path, split: str, profile: Profile) -> Sequence[str]:
    """The ids a predictions file names the episodes of ``split`` by (:func:`submitted_ids`),
    from its episodes file ``path``."""
    return submitted_ids(task.load(path, split, profile))[1]


def split_hint(request: SplitRequest, episodes: Any, predictions: PredictionsInput) -> str | None:
    """The command line's hint for a file refused by the scorer of ``request``'s split (its
    ``episodes``) when none of its ids is an episode of the split and most are episodes of
    another split of the task (:func:`other_splits`); None otherwise. For an error path only:
    it reads the file again (:func:`read_again`), and the other splits when no id matches."""
    read = read_again(predictions)
    text = None if read is None else read.text
    found = None if text is None else _other_split(text, episodes, other_splits(request))
    if found is None:
        return None
    split, n, total = found
    return hinted(
        f"{n:,} of the file's {total:,} ids are episodes of {request.task.name} {split}, none "
        f"of {request.split}: was the file made for {split}?",
        hint("--split", f"score it with --split {split}", aside=True),
    )


def twin_hint(request: SplitRequest, predictions: PredictionsInput) -> str | None:
    """The command line's hint for a file refused by r2r-ce whose keys are mostly R2R
    instruction ids of the split (``"4332_0"``: what an r2r-twin run writes); None otherwise.
    For an error path only: it reads the file again (not a FIFO or device, see
    :func:`read_again`), and the R2R split's file. Beside :func:`split_hint`, so that the
    score command's path imports no continuous task."""
    if request.task.name != "r2r-ce" or (read := read_again(predictions)) is None:
        return None  # unreadable (the error says why), or records in memory: no hint
    twin = get_task("r2r-twin")
    prof = twin.scoring_profile(None)
    try:
        path = split_file(SplitRequest(twin, request.split, prof, request.root))
        r2r = set(split_ids(twin, path, request.split, prof))
    except VLNEvalError:  # no R2R file: no hint
        return None
    keys = file_ids(read.text or b"", "episode_id")  # read_text: never None
    n = len(keys & r2r)
    if not n or 2 * n < len(keys):
        return None
    return hinted(
        f"{n:,} of the file's {len(keys):,} keys are R2R instruction ids of {request.split} "
        f"(e.g. {min(keys & r2r)!r}), not VLN-CE episode ids: the output of an r2r-twin run?",
        hint("--task", "use --task r2r-twin", aside=True),
    )


def public_check(
    text: bytes | ReadInput,
    source: str,
    public: EpisodeTable,
    graphs: GraphStore,
    profile: Profile,
    *,
    form: str = "auto",
    splits: SplitIndex | None = None,
    skip_summaries: bool = False,
) -> tuple[list[Problem], list[str]]:
    """The problems (see :func:`public_problems`) and the warnings (ids not in the split,
    ignored records, skipped summary records) of a predictions file (``text``: its bytes, or
    the file already read; ``source``: its name), found with the public view only;
    ``skip_summaries`` as for :func:`~vlneval.tasks.common.predictions.parse_predictions`."""
    pc = ProblemCollector(source)
    warnings: list[str] = []
    try:
        given = text if isinstance(text, ReadInput) else ReadInput(source, json_text(text, source))
        preds = parse_predictions(
            given, public, graphs, form=form, collect=pc, skip_summaries=skip_summaries
        )
        warnings = list(preds.warnings)
        if len(preds.episodes):
            arr = build_arrays(public, preds, graphs)
            check_rules(public, preds, arr, graphs, profile, subset=False, pc=pc)
        elif not pc.problems:
            found = wrong_split(given.text, public, splits, source)
            pc.problems.append(found or Problem(source, no_match(public.task, public.split)))
    except InvalidInputError as exc:
        return list(exc.problems), warnings
    return list(pc.problems), warnings


def public_problems(*args: Any, **kwargs: Any) -> list[Problem]:
    """The problems of a predictions file that the scorer's parser and rule checks (types,
    ids, viewpoints, start, adjacency, repeats, completeness) find on the public view (the
    arguments of :func:`public_check`)."""
    return public_check(*args, **kwargs)[0]


@dataclass(frozen=True)
class BlindCheck:
    """What a blind check found.

    Attributes:
        source: the predictions file; ``task``, ``split``: what it was checked against.
        n_episodes: the split's episodes; ``problems``: every problem found (empty: valid).
    """

    source: str
    task: str
    split: str
    n_episodes: int
    problems: list[Problem]
    warnings: list[str] = field(default_factory=list)
    checks: str = "ids, scans, starts, adjacency, completeness"


def checks_publicly(task: Task) -> bool:
    """Whether the public view reproduces every check of ``task``'s scorer: the task reads
    R2R-style viewpoint trajectories with the shared reader (``Task.graph_trajectories``).

    Example:
        >>> from vlneval.tasks import get_task
        >>> checks_publicly(get_task("r2r")), checks_publicly(get_task("reverie"))
        (True, False)
    """
    return task.graph_trajectories


def open_public(request: SplitRequest) -> tuple[EpisodeTable, GraphStore] | None:
    """The public view of the split ``request`` names and its graphs when the split has no
    goals (a hidden test split), else None: the split can be scored, or the task's scorer
    checks more than the public view can (:func:`checks_publicly`; its own scorer then says
    why it cannot score). The request's task options are not used.

    Raises:
        MissingDataError: the data root or the split's file cannot be found.
        InvalidInputError: the split's file cannot be read.
    """
    r = request
    if not checks_publicly(r.task):
        return None
    episodes, store = load_split(
        r.task, r.split, r.profile, root=r.root, episodes_file=r.episodes_file, graphs=r.graphs
    )
    if episodes.scorable:
        return None
    return public_view(episodes), store


def blind_check(
    public: EpisodeTable,
    graphs: GraphStore,
    profile: Profile,
    predictions: str | Path,
    *,
    form: str = "auto",
    skip_summaries: bool = False,
) -> BlindCheck:
    """Checks a predictions file against a public view (:func:`open_public`), as the server
    does: every problem, none of them needing a hidden value (``skip_summaries``: skip the
    file's own summary records, with a warning)."""
    source = str(predictions)
    problems, warnings = public_check(
        read_input(predictions), source, public, graphs, profile, form=form,
        skip_summaries=skip_summaries,
    )  # fmt: skip
    return BlindCheck(source, public.task, public.split, len(public), problems, warnings)


#: Task options that name a file of hidden labels (never passed to a public scorer).
HIDDEN_FILES = frozenset({"gt_file"})


class PublicScorer:
    """A task's own scorer opened on the public copy of a split
    (:mod:`vlneval.tasks.common.public_file`): it checks a predictions file with the task's
    reader, options and messages, and never sees a hidden value.

    Attributes:
        task, split: what it checks against; ``episodes``: the public copy's episodes (public
            ids and scans); ``id_field``: the field that names a prediction's episode.
    """

    def __init__(
        self,
        task: Task,
        split: str,
        profile: Profile,
        episodes_file: str | Path,
        *,
        root: str | Path | None = None,
        graphs: str | Path | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="vlneval-public-")
        self.task, self.split = task, split
        # an option naming a hidden file (VLN-CE's dense _gt) would hand it to the public
        # scorer: the copy's own stand-in beside the copied episodes is used instead
        kept = {k: v for k, v in (options or {}).items() if v is not None and k not in HIDDEN_FILES}
        try:
            self.copy = write_public_copy(task, episodes_file, self._folder.name)
            self.originals = {str(Path(episodes_file)): "<public view>"}
            request = SplitRequest(
                task, split, profile, root=root, episodes_file=self.copy, graphs=graphs,
                options=kept,
            )  # fmt: skip
            self._scorer = task.open(request)
        except BaseException:
            self._folder.cleanup()
            raise
        self.episodes = self._scorer.episodes
        self.id_field = str(self.episodes.id_field)

    def __len__(self) -> int:
        return len(self.episodes)

    def _public(self, text: str) -> str:
        return public_text(text, self.copy, self.originals)

    def check(
        self,
        predictions: PredictionsInput,
        *,
        form: str = "auto",
        trajectory_key: str | None = None,
        splits: SplitIndex | None = None,
        skip_summaries: bool = False,
    ) -> tuple[list[Problem], list[str]]:
        """:meth:`problems`, and for a valid file what its score will lack: each metric the
        file's own content leaves n/a (a REVERIE file without ``predObjId``: no RGS), with its
        reason. Warnings about the split's stand-in values are not the file's and are left out;
        the numbers themselves are never shown, but the file's skipped summary records
        (``skip_summaries``) are. A file or bytes are read (gunzipped) once, for the scorer and
        (only when it refuses the file) the split hint."""
        read = read_text(predictions)
        try:
            result = self._scorer.score(
                predictions if read is None else read,
                ScoreOptions(
                    form=form, trajectory_key=trajectory_key, skip_summaries=skip_summaries
                ),
            )
        except VLNEvalError as exc:  # a file made for another split is told so, and alone
            if read and (hint := wrong_split(read.text, self.episodes, splits, read.source)):
                return [hint], []
            if not isinstance(exc, InvalidInputError):
                raise
            return [
                Problem(self._public(p.source), self._public(p.message), p.episode, p.field)
                for p in exc.problems
            ], []
        notes = [w for w in result.warnings if is_skipped_note(w)]
        notes += [hinted(na_lead(label), why) for label, why in result.unavailable.items()]
        return [], [self._public(n) for n in notes]

    def problems(self, *args: Any, **kwargs: Any) -> list[Problem]:
        """Every problem the task's scorer finds in ``predictions`` on the public copy (a file
        made for another split is said so first); empty: the file is valid (the arguments of
        :meth:`check`)."""
        return self.check(*args, **kwargs)[0]

    def close(self) -> None:
        """Removes the public copy."""
        close = getattr(self._scorer, "close", None)
        if close is not None:
            close()
        self._folder.cleanup()


def read_text(predictions: PredictionsInput) -> ReadInput | None:
    """A file or bytes read once (their JSON text); None for records in memory, or input that
    cannot be read (the scorer then says why, after its own checks of the options)."""
    try:
        given = read_input(predictions, keyed=True)
    except VLNEvalError:
        return None
    return given if given.text is not None else None


def read_again(predictions: PredictionsInput) -> ReadInput | None:
    """:func:`read_text` for an error path, which reads a file the scorer read already: None
    for a path that is not a regular file (a FIFO or device: what it held is gone, and a
    second read waits for a writer that may never come)."""
    if isinstance(predictions, (str, Path)) and not Path(predictions).is_file():
        return None
    return read_text(predictions)


def split_file(request: SplitRequest) -> Path:
    """The episodes file the task's scorer reads for ``request``, found as it finds it (a
    missing file in its words), without reading it: the file given, else that of the data
    version the request names (REVERIE v1, the Touchdown releases), else the shared search.

    Raises:
        MissingDataError: no data root, or no such file under it.
        UnknownNameError: the data version is not one of the task's releases.
    """
    task, version = request.task, request.options.get("data_version")
    if request.episodes_file or not version or len(task.data_versions) < 2:
        return request.episodes_path(request.base())
    version = str(task.check_options(request.options)["data_version"])
    return release_file(task, request.split, data_root(request.root), None, version)[0]


def open_blind(request: SplitRequest) -> PublicScorer | None:
    """For a task with its own reader (not :func:`checks_publicly`) whose split has no goals
    (a hidden test split), its scorer on the public copy of the split; else None (the split
    is scored as usual).

    Raises:
        MissingDataError: the data root or the split's file cannot be found.
        InvalidInputError: the split's file cannot be read.
    """
    r = request
    if checks_publicly(r.task) or not has_public_copy(r.task):
        return None
    path = split_file(r)
    table = r.task.load(path, r.split, r.profile)
    if getattr(table, "scorable", True):
        return None
    return PublicScorer(
        r.task, r.split, r.profile, path, root=r.root, graphs=r.graphs, options=r.options
    )


def own_blind_check(
    checker: PublicScorer,
    predictions: str | Path,
    *,
    form: str = "auto",
    skip_summaries: bool = False,
) -> BlindCheck:
    """Checks a predictions file with a task's own scorer on the public copy of its split
    (:func:`open_blind`), as the server does (``skip_summaries``: skip the file's own summary
    records, with a warning)."""
    problems, warnings = checker.check(predictions, form=form, skip_summaries=skip_summaries)
    checks = f"every check of the {checker.task.name} scorer that needs no label"
    return BlindCheck(
        str(predictions), checker.task.name, checker.split, len(checker), problems, warnings,
        checks,
    )  # fmt: skip
