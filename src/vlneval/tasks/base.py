"""What a task is: its data (folder, file patterns, splits), its profiles, its options and how it
opens its scorer.

A benchmark is one folder under ``vlneval/tasks/`` (``format.py`` reads its files,
``profiles.py`` holds its official scorers' rules, ``score.py`` scores a split) whose
``__init__.py`` defines a :class:`Task`; :mod:`vlneval.tasks` registers it with one line. The
task's reader and scorer are entry-point strings (``package.module:NAME``), imported the first
time the task loads or scores a split, so listing tasks imports no reader.

A task declares its :class:`Option` s once (``data_version``, ``path_type``, ``angle_units``,
``distance``...): :class:`vlneval.evaluation.Scorer`, the command line and the server read them
from here; the task's scorer checks the values it is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlneval.errors import MissingDataError, UnknownNameError, VLNEvalError
from vlneval.registry import Registry, load_entry_point
from vlneval.tasks.common.root import demo_root, find_file
from vlneval.tasks.profiles import get_profile

if TYPE_CHECKING:
    from vlneval.tasks.common.episodes import EpisodeTable
    from vlneval.tasks.common.request import SplitRequest, TaskScorer
    from vlneval.tasks.profiles import Profile

__all__ = ["Task", "Option", "TASKS"]

#: Once a scorer opens, the check of its episodes' scans against its graphs: it lives with
#: the scoring of graph trajectories (it knows their tables and graphs, which this module does
#: not load: the CLI reads it to print its help) and is resolved as ``open_scorer`` is.
SCAN_CHECK = "vlneval.tasks.common.scoring:check_opened"


@dataclass(frozen=True)
class Option:
    """A task-specific scoring option, declared once by the task.

    Attributes:
        name: the keyword of :class:`~vlneval.evaluation.Scorer` (``path_type``); the command
            line spells it ``--path-type``.
        help: one line for ``--help`` and the server's forms.
        choices: the allowed values (empty: any text, e.g. a path).
        default: the value used when none is given (None: the task decides, e.g. the first
            data version present).
        cli: offered as a flag by ``vlneval score``/``report``/``compare`` (False: set by the
            library or by ``vlneval run`` only).
        label: what messages call one value (``SOON angle unit``; default: the task's name
            and the option's, ``reverie data version``).

    Example:
        >>> Option("angle_units", "SOON angles", ("normalised", "radians"), "normalised").flag
        '--angle-units'
    """

    name: str
    help: str
    choices: tuple[str, ...] = ()
    default: str | None = None
    cli: bool = True
    label: str = ""

    @property
    def flag(self) -> str:
        """The command-line flag."""
        return "--" + self.name.replace("_", "-")

    def resolve(self, value: str, task: str = "") -> str:
        """The declared choice ``value`` means (any case); any value when there are no choices.

        Raises:
            UnknownNameError: not a choice (with the closest one and the choices).

        Example:
            >>> o = Option("data_version", "release", ("v2", "v1"), "v2")
            >>> o.resolve("V1")
            'v1'
            >>> o.resolve("v3", "reverie")
            Traceback (most recent call last):
            ...
            vlneval.errors.UnknownNameError: unknown reverie data version 'v3' (known: v1, v2)
        """
        if not self.choices or not isinstance(value, str):
            return value
        folded = {c.casefold(): c for c in self.choices}
        if value.casefold() in folded:
            return folded[value.casefold()]
        kind = self.label or f"{task} {self.name.replace('_', ' ')}".strip()
        raise UnknownNameError(kind, value, self.choices)


Factory = Callable[..., Any]


@dataclass(frozen=True)
class Task:
    """A benchmark as vlneval knows it.

    Attributes:
        name: the task id used on the command line.
        description: one line for ``vlneval tasks``.
        default_profile: the profile used unless ``--profile`` says otherwise.
        profiles: the profiles that may score this task.
        folder: the task's folder under the data root.
        file_names: file-name patterns for a split (``{split}`` is replaced).
        loader: reads a split file into an :class:`EpisodeTable` (``package.module:NAME`` or
            the function); called as ``loader(path, task=, split=)``, plus
            ``max_instructions=`` when the profile limits the instructions scored.
        splits: the splits known to exist (others may still be given with ``--episodes``).
        default_split: used when no ``--split`` is given.
        open_scorer: the task's scorer (``package.module:NAME`` or the callable):
            :class:`vlneval.evaluation.Scorer` calls it once with a
            :class:`~vlneval.tasks.common.request.SplitRequest` and it returns a
            ``TaskScorer`` whose ``score`` returns a ``Result``.
        options: the task-specific options it accepts (see :class:`Option`).
        embedded: the task's data ships inside the package (the demo).
        notes: warnings every result of the task carries (the demo: synthetic data).
        street_routes: for tasks whose agents run on a street graph, the function (entry
            point) that opens a split's routes and graph for them (``vlneval run`` then picks
            the street environment); empty for other tasks.
        object_boxes: for tasks whose runs observe objects, the function (entry point) that
            opens a split's episodes, graphs and object boxes; empty for other tasks.
        run_records: for tasks whose scorer does not read R2R records, the function (entry
            point) that writes an agent run's R2R records in the task's predictions format,
            ``(episodes, records) -> (records, note)``; empty for other tasks.
        graph_trajectories: its predictions are R2R-style viewpoint trajectories read and
            rule-checked by the shared reader (``tasks/common``), so a public view of the
            episodes (ids, scans, starts) can check a file without its labels (the server and
            blind validation do).
        run_env: for tasks whose agents run in a continuous environment, the environment id
            ``vlneval run`` uses unless ``--env`` names another continuous one; empty for
            tasks run on a graph.
        version_files: for tasks with several data releases, ``(version, file-name pattern)``
            of each (patterns as ``file_names``): a split missing under one release is answered
            with the splits of that release and the release that has it, opening with
            ``release_lead`` when given (``{split}`` and ``{version}`` filled in).
        public_copy: the function (entry point) ``(src, dest) -> None`` that writes the public
            copy of an episodes file (every hidden value replaced by a public stand-in, see
            :mod:`vlneval.tasks.common.public_file`), on which the task's own scorer checks
            a file blind (the server and ``vlneval validate`` on a test split do).
        summary_records: its reader skips, when asked (``skip_summaries``,
            ``--skip-summary-records``), records that look like the file's own summary
            (:mod:`vlneval.tasks.common.summary_records`); a task whose reader cannot tell one
            from a prediction refuses the option (:meth:`check_skip_summaries`).
        metrics: the metrics its results hold, when fewer than its profiles report (the two
            Touchdown tasks share profiles; empty: all of the profile's).
        primary_metric: the metric its benchmark ranks by (empty: SPL, or the first metric
            when there is no SPL); a server phase ranks by it unless told otherwise.
    """

    name: str
    description: str
    default_profile: str
    profiles: tuple[str, ...]
    folder: str
    file_names: tuple[str, ...]
    loader: str | Factory
    splits: tuple[str, ...]
    default_split: str
    open_scorer: str | Factory
    options: tuple[Option, ...] = ()
    embedded: bool = False
    notes: tuple[str, ...] = ()
    street_routes: str = ""
    object_boxes: str = ""
    run_records: str = ""
    graph_trajectories: bool = False
    run_env: str = ""
    version_files: tuple[tuple[str, str], ...] = ()
    release_lead: str = ""
    public_copy: str = ""
    summary_records: bool = False
    metrics: tuple[str, ...] = ()
    primary_metric: str = ""

    @property
    def data_versions(self) -> tuple[str, ...]:
        """The releases of the data (the ``data_version`` option's choices; the first is the
        default), or () when the task has one release."""
        return self.option("data_version").choices if self.has_option("data_version") else ()

    @property
    def option_names(self) -> tuple[str, ...]:
        """The names of the task's options."""
        return tuple(o.name for o in self.options)

    def has_option(self, name: str) -> bool:
        """Whether the task declares option ``name``."""
        return name in self.option_names

    def option(self, name: str) -> Option:
        """The declared option ``name``.

        Raises:
            KeyError: the task has no such option.
        """
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)

    def check_options(self, given: Mapping[str, object]) -> dict[str, object]:
        """The options set in ``given`` (those not None), each value resolved to its declared
        choice (any case). Every way to score (library, command line, server) checks here.

        Raises:
            UnknownNameError: a name no task declares, or a value that is not one of the
                option's choices (with the closest).
            VLNEvalError: options of other tasks that this task does not declare.

        Example:
            >>> t = Task("t", "", "p", ("p",), "t", ("{split}.json",), "m:f", ("val",), "val",
            ...          "m:g", options=(Option("path_type", "", ("planner_path", "player_path")),))
            >>> t.check_options({"path_type": "Player_Path", "bboxes": None})
            {'path_type': 'player_path'}
            >>> t.check_options({"path_type": "planer_path"})
            Traceback (most recent call last):
            ...
            vlneval.errors.UnknownNameError: unknown t path type 'planer_path'; did you mean 'planner_path'? (known: planner_path, player_path)
            >>> t.check_options({"angle_units": "radians"})
            Traceback (most recent call last):
            ...
            vlneval.errors.VLNEvalError: option angle_units (--angle-units) does not apply to task t (its options: path_type)
        """
        out = {k: v for k, v in given.items() if v is not None}
        extra = sorted(set(out) - set(self.option_names))
        if extra:
            known = sorted({n for task in TASKS.values() for n in task.option_names})
            for name in extra:
                if name not in known:
                    raise UnknownNameError("option", name, known)
            names = ", ".join(f"{n} (--{n.replace('_', '-')})" for n in extra)
            raise VLNEvalError(
                f"option{'s' if len(extra) > 1 else ''} {names} "
                f"{'do' if len(extra) > 1 else 'does'} not apply to task {self.name} "
                f"(its options: {', '.join(self.option_names) or 'none'})"
            )
        for name, value in out.items():
            out[name] = self.option(name).resolve(value, self.name)  # type: ignore[arg-type]
        return out

    def check_skip_summaries(self, skip_summaries: bool) -> None:
        """Refuses ``skip_summaries`` for a task whose reader does not skip summary records
        (:attr:`summary_records`), before any file is read. Every way to score (library,
        command line, reports) checks here.

        Raises:
            VLNEvalError: the option asked of such a task (named as registered).

        Example:
            >>> from vlneval.tasks import get_task
            >>> get_task("r2r").check_skip_summaries(True)
            >>> get_task("touchdown-sdr").check_skip_summaries(True)
            Traceback (most recent call last):
            ...
            vlneval.errors.VLNEvalError: skip_summaries (--skip-summary-records) does not apply to task touchdown-sdr: its reader cannot skip summary records; remove the summary record from the file
        """
        if skip_summaries and not self.summary_records:
            raise VLNEvalError(
                f"skip_summaries (--skip-summary-records) does not apply to task {self.name}: "
                "its reader cannot skip summary records; remove the summary record from the file"
            )

    def scoring_profile(self, name: str | None = None) -> Profile:
        """The profile ``name`` (any case; default: the task's own), which must score this
        task. Every way to score (library, command line) checks here.

        Raises:
            UnknownNameError: no such profile (with the closest name).
            VLNEvalError: a profile of another task (with this task's profiles).

        Example:
            >>> from vlneval.tasks import get_task
            >>> get_task("hanna").scoring_profile("HANNA").name
            'hanna'
            >>> get_task("hanna").scoring_profile("r2r")
            Traceback (most recent call last):
            ...
            vlneval.errors.VLNEvalError: profile r2r does not score task hanna (its profiles: hanna)
        """
        prof = get_profile(name or self.default_profile)
        if prof.name not in self.profiles:
            raise VLNEvalError(
                f"profile {prof.name} does not score task {self.name} (its profiles: "
                f"{', '.join(self.profiles)})"
            )
        return prof

    def metric_labels(self, profile: Profile) -> tuple[str, ...]:
        """The metrics a result of this task holds under ``profile``, in the profile's order.

        Example:
            >>> from vlneval.tasks import get_profile, get_task
            >>> get_task("touchdown-sdr").metric_labels(get_profile("touchdown"))
            ('SDR@40', 'SDR@80', 'SDR@120', 'SDR_dist')
        """
        return tuple(m for m in profile.metrics if not self.metrics or m in self.metrics)

    def ranking_metric(self, profile: Profile) -> str:
        """The metric a leaderboard of this task ranks by (:attr:`primary_metric`).

        Example:
            >>> from vlneval.tasks import get_profile, get_task
            >>> [get_task(t).ranking_metric(get_profile(p)) for t, p in
            ...  [("r2r", "r2r"), ("reverie", "reverie"), ("touchdown", "touchdown")]]
            ['SPL', 'RGSPL', 'TC']
        """
        labels = self.metric_labels(profile)
        return self.primary_metric or ("SPL" if "SPL" in labels else labels[0])

    def episodes_file(self, root: Path | None, split: str, version: str | None = None) -> Path:
        """The episodes file of ``split`` under ``root`` (an embedded task: its packaged data),
        the first of ``file_names`` found, or that of release ``version`` (``version_files``).

        Example:
            >>> from vlneval.tasks import get_task
            >>> get_task("demo").episodes_file(None, "val").name
            'DEMO_val.json'
        """
        base = demo_root() if self.embedded else root
        if base is None:
            raise MissingDataError(
                f"task {self.name} needs its data: pass --data-root DIR (or set VLNEVAL_DATA), "
                "or --episodes FILE and --graphs DIR"
            )
        patterns = [dict(self.version_files)[version]] if version else self.file_names
        names = [n.format(split=split) for n in patterns]
        return find_file(base / self.folder, names, f"{self.name} {split} episodes")

    def load(self, path: Path, split: str, profile: Profile, **options: Any) -> EpisodeTable:
        """Loads ``path`` with the task's loader under ``profile``'s rules; ``options``: the
        task options the loader takes (NDH's ``path_type``)."""
        limit = profile.max_instructions  # passed only to limit, so readers need not take it
        extra = {} if limit is None else {"max_instructions": limit}
        table: EpisodeTable = _resolve(self.loader)(
            path, task=self.name, split=split, **extra, **options
        )
        return table

    def open(self, request: SplitRequest) -> TaskScorer:
        """The task's scorer of the split ``request`` names (loaded once, scores many), its
        options checked (:meth:`check_options`)."""
        request = dataclasses.replace(request, options=self.check_options(request.options))
        scorer: TaskScorer = _resolve(self.open_scorer)(request)
        load_entry_point(SCAN_CHECK)(scorer)
        return scorer


def _resolve(target: str | Factory) -> Factory:
    if isinstance(target, str):
        return load_entry_point(target)  # type: ignore[no-any-return]
    return target


#: Every benchmark, by name: filled by :mod:`vlneval.tasks` (one line per task), defined here
#: beside :class:`Task` so that a task's own checks (:meth:`Task.check_options`) read it
#: without importing the package that imports this module.
TASKS: Registry[Task] = Registry("task")
