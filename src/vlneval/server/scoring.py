"""Scoring one submission into a result that is safe to show.

The score is exactly what ``vlneval score`` gives for the same file: :func:`vlneval.evaluation.
evaluate` with the phase's task, split and profile, the hidden episodes file (``episodes_file=``)
and the graphs (``graphs=``). What is kept is aggregate only: the summary's metrics, checks,
warnings and protocol card, never a per-episode value (per-episode success over many
submissions would map out the goals). A refused file gets the blind validation messages of
:mod:`vlneval.server.validation`; anything that is not the submitter's fault gets a generic
message with an incident id, and the detail goes to the log with every hidden value redacted.
"""

from __future__ import annotations

import logging
import secrets
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlneval.errors import InvalidInputError, Problem, VLNEvalError
from vlneval.server.models import FAILED, FINISHED
from vlneval.server.redact import Redactor, secrets_of
from vlneval.server.storage import sha256_hex
from vlneval.server.uploads import UploadLimits, check_upload
from vlneval.server.validation import OwnStrings, blind_problems, public_view, render_problems

__all__ = ["PhaseSpec", "PhaseData", "Outcome", "score_file", "load_phase_data", "SUMMARY_KEYS"]

log = logging.getLogger("vlneval.server.scoring")

SUMMARY_KEYS = (
    "vlneval_version", "task", "split", "data_version", "profile", "profile_rules",
    "trajectory_form", "n_episodes", "n_expected", "partial", "metrics", "unavailable",
    "checks", "warnings", "protocol",
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
    options: str = "{}"  # task options for evaluate(), as sorted JSON (hashable)

    def option_dict(self) -> dict[str, Any]:
        """The task options as a dict."""
        import json

        return dict(json.loads(self.options or "{}"))


@dataclass
class PhaseData:
    """A phase's episodes loaded once per worker: the public view and the redactor."""

    public: Any
    graphs: Any
    profile: Any
    redactor: Redactor


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


class DataChangedError(VLNEvalError):
    """The hidden episodes file is not the one the phase was created with."""


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes."""
    return sha256_hex(Path(path).read_bytes())


def check_unchanged(spec: PhaseSpec) -> None:
    """Refuses to score against a hidden episodes file that changed since the phase was made.

    Raises:
        DataChangedError: its SHA-256 is not the phase's.
    """
    if (
        spec.episodes_file
        and spec.data_sha256
        and file_sha256(spec.episodes_file) != spec.data_sha256
    ):
        raise DataChangedError(
            "the hidden episodes file changed since the phase was created (its SHA-256 differs); "
            "run `vlneval admin update-phase --rehash` if the change is intended"
        )


def load_phase_data(spec: PhaseSpec) -> PhaseData:
    """Loads a phase's hidden episodes (checked against the phase's checksum) and graphs."""
    from vlneval.tasks import get_task
    from vlneval.tasks.common.scoring import load_split
    from vlneval.tasks.profiles import get_profile

    check_unchanged(spec)
    task = get_task(spec.task)
    prof = get_profile(spec.profile)
    episodes, store = load_split(
        task, spec.split, prof, episodes_file=spec.episodes_file, graphs=spec.graphs_dir
    )
    return PhaseData(public_view(episodes), store, prof, Redactor(secrets_of(episodes)))


def _sanitise(
    summary: Mapping[str, Any], display_name: str, redact: Callable[[str], str]
) -> dict[str, Any]:
    import msgspec

    from vlneval.reports.tables import to_json_bytes

    out = {k: summary.get(k) for k in SUMMARY_KEYS}
    out["predictions"] = display_name
    out["warnings"] = [redact(str(w)) for w in summary.get("warnings", [])]
    out["checks"] = [
        {**c, "detail": redact(str(c.get("detail", "")))} for c in summary.get("checks", [])
    ]
    return msgspec.json.decode(to_json_bytes(out, indent=False))  # type: ignore[no-any-return]


def internal_failure(
    reason: str, redactor: Redactor | None, exc: BaseException | None = None
) -> Outcome:
    """A failure on the organisers' side: logged (redacted), a generic message for the submitter."""
    incident = secrets.token_hex(4)
    detail = "".join(traceback.format_exception(exc)) if exc is not None else ""
    text = f"incident {incident}: {reason}\n{detail}".rstrip()
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


def _own_source(p: Problem, source: str) -> Problem:
    """A problem raised as ``"<file>: message"`` without a source, given its source back."""
    prefix = f"{source}: "
    if p.source != source and p.message.startswith(prefix):
        return Problem(source, p.message[len(prefix) :], p.episode, p.field)
    return p


def _refused(
    exc: InvalidInputError,
    path: Path,
    text: bytes,
    display: str,
    spec: PhaseSpec,
    data: PhaseData,
    form: str,
) -> Outcome:
    source = str(path)
    exc = InvalidInputError([_own_source(p, source) for p in exc.problems])
    if any(p.source != source for p in exc.problems):
        return internal_failure("the scorer refused the phase's own data", data.redactor, exc)
    problems = blind_problems(path, data.public, data.graphs, data.profile, form=form)
    if not problems:  # a rule the blind view cannot check (e.g. a task with its own scorer)
        problems = list(exc.problems)
    public = data.public
    own = OwnStrings(text, public.id_field)
    starts = {eid: path[0] for eid, path in zip(public.ids, public.paths, strict=True) if path}
    messages = render_problems(
        problems,
        source=source,
        display_name=display,
        redactor=data.redactor,
        own=own,
        starts=starts,
    )
    return Outcome(FAILED, "invalid", messages)


def score_file(
    path: Path,
    display_name: str,
    spec: PhaseSpec,
    data: PhaseData,
    *,
    declared: Mapping[str, Any] | None = None,
    limits: UploadLimits | None = None,
    form: str = "auto",
) -> Outcome:
    """Scores the stored file ``path`` of one submission for the phase ``spec``.

    Never raises: every failure becomes an :class:`Outcome` with status ``failed``.
    """
    from vlneval.evaluation import evaluate

    try:
        text = check_upload(path.read_bytes(), display_name, limits)
    except InvalidInputError as exc:
        return Outcome(FAILED, "invalid", [str(p) for p in exc.problems])
    try:
        result = evaluate(
            spec.task,
            spec.split,
            path,
            profile=spec.profile,
            episodes_file=spec.episodes_file,
            graphs=spec.graphs_dir,
            form=form,
            declared=declared,
            options=spec.option_dict() or None,
        )
    except InvalidInputError as exc:
        return _refused(exc, path, text, display_name, spec, data, form)
    except Exception as exc:  # noqa: BLE001 - a bug or a data problem, never the submitter's
        return internal_failure("scoring raised an error", data.redactor, exc)
    own = OwnStrings(text, data.public.id_field)
    summary = _sanitise(
        result.to_dict(), display_name, lambda s: data.redactor.for_submitter(s, lambda: own.of(None))
    )
    metrics = summary["metrics"]
    value = metrics.get(spec.primary_metric)
    return Outcome(
        FINISHED,
        metrics=metrics,
        summary=summary,
        primary_value=float(value) if isinstance(value, (int, float)) else None,
        n_episodes=int(summary["n_episodes"]),
    )
