"""Score inside a training loop or over a sweep: load a split once, score many predictions.

:class:`Scorer` resolves the task, split, profile and options once (an unknown name is an
error that suggests the closest one), loads the split's episodes and graphs once, and scores
any number of predictions: a file path, its bytes, or the records an agent just produced.
:func:`evaluate` is ``Scorer(...).score(...)`` for one file. Every task goes through this one
path: the task's own scorer (``Task.open_scorer``), found through the task registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from vlneval.tasks import get_task
from vlneval.tasks.common.protocol import given_episodes
from vlneval.tasks.common.request import PredictionsInput, ScoreOptions, SplitRequest, TaskScorer
from vlneval.tasks.common.result import Result

__all__ = ["Scorer", "evaluate"]


class Scorer:
    """A task's split, loaded once, scoring any number of predictions.

    Args:
        task: a registered task (``r2r``, ``r4r``, ``rxr``, ``reverie``, ``demo``...).
        split: the split (default: the task's default split).
        profile: the scoring profile (default: the task's).
        root: the data root (default ``$VLNEVAL_DATA``); ``episodes`` and ``graphs`` override
            the episodes file and the connectivity folder found there (an ``episodes`` file
            given is named on every result's card, see
            :func:`~vlneval.tasks.common.protocol.given_episodes`).
        name_episodes: name a given ``episodes`` file on the cards, and warn when its name
            names another split (the evaluation server turns it off: its file is hidden).
        **options: task-specific options (``data_version``, ``path_type``, ``angle_units``,
            ``distance``...), checked once (``Task.check_options``).

    Raises:
        VLNEvalError: an unknown task, profile, option or option value (with the closest
            name), an option that does not apply to the task, missing data or a bad episodes
            file.

    Example:
        >>> from vlneval.tasks.common.root import demo_root
        >>> scorer = Scorer("demo")
        >>> path = demo_root() / "demo" / "predictions_val.json"
        >>> a, b = scorer.score(path), scorer.score(path.read_bytes())
        >>> a.metrics == b.metrics, a.n_episodes == len(scorer.episodes)
        (True, True)
        >>> Scorer("demo", path_typ="trusted_path")
        Traceback (most recent call last):
        ...
        vlneval.errors.UnknownNameError: unknown option 'path_typ'; did you mean 'path_type'? ...
    """

    def __init__(
        self,
        task: str,
        split: str | None = None,
        *,
        profile: str | None = None,
        root: str | Path | None = None,
        episodes: str | Path | None = None,
        graphs: str | Path | None = None,
        name_episodes: bool = True,
        **options: Any,
    ) -> None:
        t = get_task(task)
        prof = t.scoring_profile(profile)
        request = SplitRequest(
            t, split or t.default_split, prof, root=root, episodes_file=episodes, graphs=graphs,
            options=options,
        )  # fmt: skip
        self.task, self.split, self.profile = t, request.split, prof
        self._split: TaskScorer = t.open(request)
        self._given = None
        if episodes and name_episodes:
            self._given = given_episodes(episodes, request.split, t.splits)

    @property
    def episodes(self) -> Any:
        """The split's episodes."""
        return self._split.episodes

    @property
    def episodes_warning(self) -> str | None:
        """The warning of a given episodes file whose name names another split, else None (a
        refusal shows it too: every id missing is then likely the wrong file's doing)."""
        return None if self._given is None else self._given.warning

    @property
    def graphs(self) -> Any:
        """The split's navigation graphs, for tasks on the Matterport3D graphs (else None)."""
        return getattr(self._split, "graphs", None)

    @property
    def split_scorer(self) -> TaskScorer:
        """The task's own scorer of the split (for callers that need its parts)."""
        return self._split

    def score(
        self,
        predictions: PredictionsInput,
        *,
        subset: bool = False,
        form: str = "auto",
        trajectory_key: str | None = None,
        declared: Mapping[str, Any] | None = None,
        run: Mapping[str, Any] | None = None,
        skip_summaries: bool = False,
    ) -> Result:
        """Scores one predictions input exactly as the profile's official scorer does.

        Args:
            predictions: a file (``.json``/``.jsonl``, optionally gzipped), its bytes (read
                as the file would be), or its records as ``json.loads`` of the file gives them
                (a list of records; VLN-CE's ``r2r-ce`` form: the dict keyed by episode id),
                for every task; messages name bytes ``<bytes>`` and records ``<records>``.
            subset: score only the predicted episodes (the summary says "partial").
            form, trajectory_key: how to read trajectories (see ``parse_predictions``).
            declared: protocol fields the submitter declares; ``run``: fields an online run
                observed.
            skip_summaries: skip records that look like a file's own summary, with a warning.

        Raises:
            VLNEvalError: bad input (every problem with file, id and field), a missing file;
                ``skip_summaries`` for a task whose reader cannot skip summary records.
        """
        self.task.check_skip_summaries(skip_summaries)
        how = ScoreOptions(subset, form, trajectory_key, declared, run, skip_summaries)
        result = self._split.score(predictions, how)
        return result if self._given is None else self._given.mark(result)

    def close(self) -> None:
        """Stops any background loading (the scorer stays usable)."""
        close = getattr(self._split, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Scorer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def evaluate(
    task: str,
    split: str | None,
    predictions: PredictionsInput,
    *,
    profile: str | None = None,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    subset: bool = False,
    form: str = "auto",
    trajectory_key: str | None = None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    skip_summaries: bool = False,
) -> Result:
    """Scores one predictions input: ``Scorer(task, split, ...).score(predictions, ...)``.

    Args:
        task, split, profile, root, graphs: as for :class:`Scorer`; ``episodes_file`` is its
            ``episodes``; ``options``: its task-specific options.
        predictions, subset, form, trajectory_key, declared, run, skip_summaries: as for
            :meth:`Scorer.score`.

    Raises:
        VLNEvalError: bad input, unknown names or missing data; the message says where.
    """
    with Scorer(
        task, split, profile=profile, root=root, episodes=episodes_file, graphs=graphs,
        **dict(options or {}),
    ) as scorer:  # fmt: skip
        return scorer.score(
            predictions, subset=subset, form=form, trajectory_key=trajectory_key,
            declared=declared, run=run, skip_summaries=skip_summaries,
        )  # fmt: skip
