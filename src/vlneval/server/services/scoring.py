"""Scoring one submission into a result that is safe to show.

The score is what ``vlneval score`` gives for the same file (a :class:`vlneval.Scorer` on the
phase's hidden episodes and graphs, opened once per phase and worker). Only aggregates are
kept, never a per-episode value: per-episode success over many submissions would map out the
goals. A refused file gets the blind validation messages of
:mod:`vlneval.server.services.validation`; anything that is not the submitter's fault gets a
generic message with an incident id, and the detail goes to the log with hidden values redacted.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
import tempfile
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from vlneval.errors import InvalidInputError, LabelNote, Problem, VLNEvalError
from vlneval.evaluation import Scorer
from vlneval.graph.distances import cache_dir
from vlneval.io import to_json_bytes
from vlneval.server.models import FAILED, FINISHED, Phase
from vlneval.server.services.admin import episodes_sha256, phase_profile
from vlneval.server.services.budget import StepBudget, TooManyRecords
from vlneval.server.services.intervals import metric_intervals
from vlneval.server.services.redact import Redactor, raw_redactor, secrets_of
from vlneval.server.services.storage import sha256_hex
from vlneval.server.services.uploads import UploadLimits, check_upload
from vlneval.server.services.validation import (
    ServerPaths,
    SplitIndex,
    for_phase,
    public_problems,
    public_view,
    render_problems,
    sibling_splits,
)
from vlneval.tasks import get_task
from vlneval.tasks.common.blind import (
    PublicScorer,
    checks_publicly,
    na_lead,
    split_file,
    wrong_split,
)
from vlneval.tasks.common.inputs import source_name
from vlneval.tasks.common.public_file import has_public_copy
from vlneval.tasks.common.request import SplitRequest
from vlneval.tasks.common.root import data_root
from vlneval.tasks.common.scoring import load_split

__all__ = [
    "PhaseSpec", "PhaseData", "Outcome", "score_file", "load_phase_data", "raw_redactor",
    "SUMMARY_KEYS",
]  # fmt: skip

log = logging.getLogger("vlneval.server.services.scoring")

SUMMARY_KEYS = (
    "vlneval_version", "task", "split", "data_version", "profile", "profile_rules",
    "trajectory_form", "n_episodes", "n_expected", "partial", "metrics", "averaged_over",
    "unavailable", "checks", "warnings", "protocol",
)  # fmt: skip


@dataclass(frozen=True)
class PhaseSpec:
    """What a phase scores and where its hidden data lives (server-side only)."""

    task: str
    split: str
    profile: str
    episodes_file: str | None
    graphs_dir: str | None
    data_sha256: str | None
    primary_metric: str
    options: str = "{}"  # task options for the Scorer, as sorted JSON (hashable)
    # the phase's names, for the organisers' log and commands; phases of the same data share it
    challenge: str = field(default="", compare=False)
    phase: str = field(default="", compare=False)

    @classmethod
    def of(cls, ph: Phase, *, named: bool = False) -> PhaseSpec:
        """The spec of a stored phase; ``named``: with its challenge's and its own name (the
        phase is in an open session)."""
        options = json.dumps(ph.options or {}, sort_keys=True)
        names = (ph.challenge.slug, ph.slug) if named else ("", "")
        return cls(
            ph.task, ph.split, ph.profile, ph.episodes_file, ph.graphs_dir, ph.data_sha256,
            ph.primary_metric, options, *names,
        )  # fmt: skip

    def option_dict(self) -> dict[str, Any]:
        """The task options as a dict."""
        return dict(json.loads(self.options or "{}"))


@dataclass
class PhaseData:
    """A phase's data loaded once per worker.

    Attributes:
        public: the public view of the episodes (None for a task with its own scorer, whose
            files the public view cannot check yet).
        graphs: the navigation graphs (None with ``public``).
        profile: the scoring profile.
        redactor: hides the phase's hidden values in log lines.
        splits: the public ids of the task's other splits (for a wrong-split file).
        checker: for a task with its own reader, its scorer on the public copy of the split
            (:class:`~vlneval.tasks.common.blind.PublicScorer`), which checks a file with
            the task's own messages and never sees a hidden value; None for the R2R family
            (``public``) and for a task that declares no public copy.
        paths: the server's folders a submitter is never shown (:func:`server_paths`).
    """

    public: Any
    graphs: Any
    profile: Any
    redactor: Redactor
    splits: SplitIndex | None = None
    checker: Any = None
    paths: ServerPaths = field(default_factory=ServerPaths)
    _scorer: Scorer | None = field(default=None, repr=False)

    def scorer(self, spec: PhaseSpec) -> Scorer:
        """The phase's scorer on its hidden episodes, opened on first use and kept: the split
        and graphs load once per worker, not once per submission (a failed opening is tried
        again by the next submission)."""
        if self._scorer is None:
            self._scorer = Scorer(
                spec.task, spec.split, profile=spec.profile, episodes=spec.episodes_file,
                graphs=spec.graphs_dir, name_episodes=False, **spec.option_dict(),
            )  # hidden: the organiser's file is named on no card  # fmt: skip
        return self._scorer

    def close(self) -> None:
        """Removes the public copy of the split, if any (the worker calls it when it stops)."""
        for held in (self.checker, self._scorer):
            close = getattr(held, "close", None)
            if close is not None:
                close()


@dataclass
class Outcome:
    """The outcome of scoring one submission."""

    status: str
    error_kind: str | None = None
    messages: list[str] = field(default_factory=list)
    metrics: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    primary_value: float | None = None
    n_episodes: int = 0
    intervals: dict[str, list[float]] | None = None


class DataChangedError(VLNEvalError):
    """The hidden episodes file is not the one the phase was created with."""


# per hidden file: the (size, mtime_ns) it was hashed at, its content and byte SHA-256s
_DIGESTS: dict[str, tuple[tuple[int, int], tuple[str, str]]] = {}


def check_unchanged(spec: PhaseSpec) -> None:
    """Refuses to score against a hidden episodes file that changed since the phase was made:
    its content, so the same episodes gzipped again pass (a phase made before content hashes
    recorded the file's bytes, which still pass too).

    Raises:
        DataChangedError: its SHA-256 is not the phase's.
    """
    if not (spec.episodes_file and spec.data_sha256):
        return
    if spec.data_sha256 not in _digests(spec.episodes_file):
        raise DataChangedError(
            "the hidden episodes file changed since the phase was created (its SHA-256 differs); "
            f"run `vlneval admin update-phase --challenge {spec.challenge or 'CHALLENGE'} "
            f"--phase {spec.phase or 'PHASE'} --rehash` if the change is intended"
        )


def _digests(path: str) -> tuple[str, str]:
    """The content and byte SHA-256 of the file ``path``: decompressed and hashed once per
    size and modification time, not for every submission (a change to the file sets both)."""
    st = Path(path).stat()
    stamp = (st.st_size, st.st_mtime_ns)
    known = _DIGESTS.get(path)
    if known is None or known[0] != stamp:
        raw = Path(path).read_bytes()
        known = _DIGESTS[path] = (stamp, (episodes_sha256(raw), sha256_hex(raw)))
    return known[1]


def load_phase_data(spec: PhaseSpec) -> PhaseData:
    """Loads a phase's hidden episodes (checked against the phase's checksum) and graphs."""
    check_unchanged(spec)
    task = get_task(spec.task)
    prof = phase_profile(spec.profile)  # a phase scores complete files only
    if not checks_publicly(task):
        return _own_reader_phase(task, spec, prof)
    episodes, store = load_split(
        task, spec.split, prof, episodes_file=spec.episodes_file, graphs=spec.graphs_dir
    )
    splits = sibling_splits(task, spec.split, spec.episodes_file, prof)
    redactor = Redactor(secrets_of(episodes))
    paths = server_paths(spec)
    return PhaseData(public_view(episodes), store, prof, redactor, splits, paths=paths)


def server_paths(spec: PhaseSpec, copy: str | Path | None = None) -> ServerPaths:
    """The folders of a phase's data a submitter is never shown: those of its episodes file and
    graphs and the ones above them (where a task finds more of its data, REVERIE's boxes), the
    data root, the cache (distance tables, twin worlds), and the folder of the public copy ``copy`` (a folder of its own in the temporary
    folder); and its hidden files by name, the episodes file and the boxes (``bboxes``).

    Example:
        >>> spec = PhaseSpec("r2r", "val", "r2r", "/srv/data/r2r/R2R_val.json", None, None, "SPL")
        >>> paths = server_paths(spec, "/tmp/vlneval-public-x/r2r/R2R_val.json")
        >>> sorted(f for f in paths.folders if f.startswith(("/srv", "/tmp/vlneval-public")))
        ['/srv/data', '/srv/data/r2r', '/srv/data/r2r/R2R_val.json', '/tmp/vlneval-public-x']
        >>> from vlneval.graph.distances import cache_dir
        >>> str(cache_dir()) in paths.folders
        True
    """
    folders: list[str | Path | None] = [data_root(None), cache_dir(), spec.episodes_file]
    folders.append(spec.option_dict().get("bboxes"))
    for given in (spec.episodes_file, spec.graphs_dir):
        if given:
            folders += [Path(given).parent, Path(given).parent.parent]
    if spec.graphs_dir:
        folders.append(Path(spec.graphs_dir))
    if copy is not None:
        temp = Path(tempfile.gettempdir())
        folders += [p for p in Path(copy).parents if p.parent == temp]
    return ServerPaths(folders)


def _own_reader_phase(task: Any, spec: PhaseSpec, prof: Any) -> PhaseData:
    """The data of a phase of a task with its own reader: its scorer on the public copy of
    the split checks uploads (when the task declares one), the hidden file only scores them."""
    episodes_file = _episodes_path(task, spec, prof)
    redactor = raw_redactor(episodes_file)
    if not has_public_copy(task) or episodes_file is None:
        paths = server_paths(dataclasses.replace(spec, episodes_file=episodes_file))
        return PhaseData(None, None, prof, redactor, paths=paths)
    checker = PublicScorer(
        task, spec.split, prof, episodes_file, graphs=spec.graphs_dir,
        options=spec.option_dict(),
    )  # fmt: skip
    splits = sibling_splits(task, spec.split, episodes_file, prof)
    paths = server_paths(dataclasses.replace(spec, episodes_file=episodes_file), checker.copy)
    return PhaseData(None, None, prof, redactor, splits, checker, paths)


def _episodes_path(task: Any, spec: PhaseSpec, prof: Any) -> str | None:
    """The hidden episodes file of a phase, wherever the task's scorer finds it (that of the
    phase's data version for a phase stored without one)."""
    request = SplitRequest(
        task, spec.split, prof, episodes_file=spec.episodes_file, options=spec.option_dict()
    )
    try:
        return str(split_file(request))
    except Exception:  # noqa: BLE001 - not found: nothing to redact from it
        return spec.episodes_file


def _sanitise(
    summary: Mapping[str, Any],
    display_name: str,
    source: str,
    paths: ServerPaths | None = None,
) -> dict[str, Any]:
    """The summary's aggregate parts, the server's path of the upload named as the submitter
    named it, the hints of its warnings and reasons put for the phase (:func:`for_phase`).
    Warnings and checks are counts, means and public ids: nothing to redact; a warning whose
    words depend on the labels (:class:`~vlneval.errors.LabelNote`) is left out. A warning that
    names another file of the server (``paths``) is about the phase's data, advice for the
    organisers: it goes to the log, not to the submitter; anywhere else in the summary (a
    reason, a check, the protocol card's ``object_boxes``) such a file shows as
    ``[server file]``."""
    paths = paths or ServerPaths()

    def named(text: Any) -> str:  # the text itself: its marked hints (str() would drop them)
        return for_phase(text if isinstance(text, str) else str(text)).replace(source, display_name)

    out = {k: summary.get(k) for k in SUMMARY_KEYS}
    out["predictions"] = display_name
    warnings: list[str] = []
    for said in summary.get("warnings", []):
        text = named(said)
        if isinstance(said, LabelNote):  # its ids or count tell the hidden labels
            continue
        if paths.named_in(text):
            log.warning("a warning about the phase's data, not shown to the submitter: %s", text)
        else:
            warnings.append(text)
    out["warnings"] = warnings
    out["unavailable"] = {k: named(v) for k, v in (summary.get("unavailable") or {}).items()}
    out["checks"] = [{**c, "detail": named(c.get("detail", ""))} for c in summary.get("checks", [])]
    return paths.redact_all(msgspec.json.decode(to_json_bytes(out, indent=False)))


def internal_failure(
    reason: str,
    redactor: Redactor | None,
    exc: BaseException | None = None,
    *,
    spec: PhaseSpec | None = None,
) -> Outcome:
    """A failure on the organisers' side: logged (redacted) with the phase of ``spec`` when it
    is named, a generic message for the submitter."""
    incident = secrets.token_hex(4)
    detail = "".join(traceback.format_exception(exc)) if exc is not None else ""
    where = f" (phase {spec.challenge}/{spec.phase})" if spec is not None and spec.phase else ""
    text = f"incident {incident}{where}: {reason}\n{detail}".rstrip()
    log.error(redactor.strict(text) if redactor is not None else text)
    return Outcome(
        FAILED,
        "internal",
        [
            f"the server could not score this submission because of a problem on the organisers' "
            f"side (incident {incident}); it is not counted against your quota, and the "
            "organisers can score it again once it is fixed"
        ],
    )


def _unexplained(display_name: str, task: str) -> Outcome:
    """A refusal of a task whose files the public view cannot check yet: the same words for
    every such file, whatever the hidden data holds."""
    return Outcome(
        FAILED,
        "invalid",
        [
            f"{display_name}: the {task} scorer refused this file; this server cannot yet say why "
            f"without quoting the hidden labels. `vlneval score --task {task}` on a public split "
            "names every problem of the file"
        ],
    )


def score_file(
    path: Path,
    raw: bytes,
    display_name: str,
    spec: PhaseSpec,
    data: PhaseData,
    *,
    declared: Mapping[str, Any] | None = None,
    limits: UploadLimits | None = None,
    budget: StepBudget | None = None,
) -> Outcome:
    """Scores one submission for the phase ``spec``: its stored file ``path``, whose bytes
    ``raw`` the worker has read and verified once.

    Never raises: every failure becomes an :class:`Outcome` with status ``failed``.
    """
    try:
        return _score_file(path, raw, display_name, spec, data, declared, limits, budget)
    except Exception as exc:  # noqa: BLE001 - a bug: the organisers' side, never the submitter's
        return internal_failure("scoring raised an error", data.redactor, exc, spec=spec)


def _score_file(
    path: Path,
    raw: bytes,
    display_name: str,
    spec: PhaseSpec,
    data: PhaseData,
    declared: Mapping[str, Any] | None,
    limits: UploadLimits | None,
    budget: StepBudget | None,
) -> Outcome:
    try:
        text = check_upload(raw, display_name, limits, budget)
    except TooManyRecords as exc:  # a bigger split's file, most often: which comes first
        told = _split_told(exc.text, display_name, data)
        return Outcome(FAILED, "invalid", [*told, *(str(p) for p in exc.problems)])
    except InvalidInputError as exc:
        return Outcome(FAILED, "invalid", [str(p) for p in exc.problems])
    paths = data.paths.adding(path.parent)
    messages, unranked = _public_messages(
        text, path, display_name, data, paths, spec.primary_metric
    )
    if messages:
        return Outcome(FAILED, "invalid", messages)
    try:  # every task's reader takes the checked text: the upload is not read again
        result = data.scorer(spec).score(text, declared=declared)
    except InvalidInputError as exc:
        if data.public is None and data.checker is None:
            log.info(
                "submission refused by the %s scorer: %s", spec.task, data.redactor.strict(str(exc))
            )
            return _unexplained(display_name, spec.task)
        return internal_failure(
            "the scorer refused a file the public checks accepted", data.redactor, exc, spec=spec
        )
    summary = _sanitise(result.to_dict(), display_name, source_name(text), paths)
    intervals = _intervals(result, data.redactor)
    del result  # the per-episode rows go no further
    metrics = summary["metrics"]
    value = metrics.get(spec.primary_metric)
    if unranked and not isinstance(value, (int, float)):  # never ranked: refused, not counted
        return Outcome(FAILED, "invalid", unranked)
    return Outcome(
        FINISHED,
        metrics=metrics,
        summary=summary,
        primary_value=float(value) if isinstance(value, (int, float)) else None,
        n_episodes=int(summary["n_episodes"]),
        intervals=intervals,
    )


def _split_told(text: bytes, display_name: str, data: PhaseData) -> list[str]:
    """The problem of a file made for another split of the task, found in its JSON ``text``
    (every record's public id compared, as for any refused file:
    :func:`~vlneval.tasks.common.blind.wrong_split`; the budget has bounded its bytes), for a
    file the record limit refused before its ids were read; none when they name the phase's
    episodes or no other split's."""
    episodes = data.public if data.public is not None else getattr(data.checker, "episodes", None)
    if episodes is None or data.splits is None:
        return []
    found = wrong_split(text, episodes, data.splits, display_name)
    return [] if found is None else [str(found)]


def _public_messages(
    text: bytes,
    path: Path,
    display_name: str,
    data: PhaseData,
    paths: ServerPaths | None = None,
    primary: str | None = None,
) -> tuple[list[str], list[str]]:
    """The blind validation's messages about the upload (none: it may be scored), a file of
    the server's own (``paths``, default the phase's) named ``[server file]``; and the refusal
    of a file that the task's own reader accepts but whose content leaves the phase's ranking
    metric ``primary`` n/a (a REVERIE file without ``predObjId``: no RGSPL), for when the
    score lacks it too (a public copy also lacks what its stand-ins cannot give: VLN-CE's
    distances): such a file could never be ranked."""
    source, unranked = str(path), []
    if data.public is not None:
        problems = public_problems(
            text, source, data.public, data.graphs, data.profile, splits=data.splits
        )
    elif data.checker is not None:  # the task's own reader checks the text it will score
        source = source_name(text)
        problems, notes = data.checker.check(text, splits=data.splits)
        unranked = [
            Problem(source, f"this phase ranks by {primary}: {w}") for w in _na(notes, primary)
        ]
    else:
        return [], []
    shown = paths or data.paths

    def rendered(found: list[Problem]) -> list[str]:
        return render_problems(found, source=source, display_name=display_name, paths=shown)

    return rendered(problems), rendered(unranked)


def _na(notes: list[str], primary: str | None) -> list[str]:
    """Why ``primary`` will be n/a, from the public check's notes (``RGSPL will be n/a: why``),
    its hints put for the phase (:func:`for_phase`) before the slice, which would drop them."""
    if not primary:
        return []
    lead = na_lead(primary)
    return [for_phase(n)[len(lead) :] for n in notes if n.startswith(lead)][:1]


def _intervals(result: Any, redactor: Redactor) -> dict[str, list[float]]:
    """The metrics' bootstrap bounds; none (logged) if they cannot be computed."""
    try:
        return metric_intervals(result)
    except Exception as exc:  # noqa: BLE001 - the scores stand without their intervals
        log.warning("no intervals: %s", redactor.strict(str(exc)))
        return {}
