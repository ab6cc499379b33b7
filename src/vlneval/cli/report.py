"""``vlneval report``, ``vlneval compare`` and ``vlneval aggregate``.

Imported only when one of them runs (their arguments are :mod:`vlneval.cli.parsers.report`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from vlneval.cli.common import err, given_task_options, print_table, summary_kind, summary_kind_of
from vlneval.cli.parsers.report import FEW_RESAMPLES
from vlneval.cli.scoring import declared_for, open_scorer, plan_outputs, scorer_on_first_use
from vlneval.diagnostics import score_run
from vlneval.diagnostics.scored import run_label
from vlneval.errors import VLNEvalError, check_seed
from vlneval.io import load_json, to_json_bytes, write_outputs
from vlneval.reports.compare import RunComparison, aggregate_summaries, compare_many
from vlneval.reports.compare_terminal import (
    aggregate_notices,
    comparison_notices,
    not_compared_notices,
    p_floor_notice,
    render_aggregate,
    render_comparison,
    render_multi,
    run_notices,
)
from vlneval.reports.html import ReportOptions, build_report, identical_notes, jump_note
from vlneval.reports.tables import write_summary
from vlneval.reports.terminal import (
    SAME_RUN,
    level_label,
    print_notices,
    render_summary,
    same_results,
    short_names,
    summary_notices,
    warning_notices,
)

__all__ = ["cmd_report", "cmd_compare", "cmd_aggregate"]


def _check_stats(args: argparse.Namespace) -> None:
    """Refuses a negative ``--seed``; warns that an interval from few resamples is not the
    interval its heading names.

    Raises:
        VLNEvalError: ``--seed`` is negative.
    """
    check_seed(args.seed, "--seed")
    if args.resamples < FEW_RESAMPLES:
        err(
            f"warning: --resamples {args.resamples}: a percentile interval from fewer than "
            f"{FEW_RESAMPLES} resamples is not a reliable {level_label(args.confidence)} interval (its "
            "ends move with the seed, and may miss the estimate); the default is 2000"
        )


def _score(args: argparse.Namespace, scorer: Any, path: str, protocol: str | None = None) -> Any:
    try:
        return score_run(
            scorer,
            path,
            subset=args.subset,
            form=args.trajectory_form,
            trajectory_key=args.trajectory_key,
            declared=declared_for(
                protocol if protocol is not None else args.protocol,
                path,
                getattr(args, "quiet", False),
            ),
            skip_summaries=args.skip_summary_records,
        )
    except VLNEvalError as exc:
        instead = _not_predictions(path, exc)
        if instead is None:
            raise
        raise instead from exc


def _not_predictions(path: str, exc: VLNEvalError) -> VLNEvalError | None:
    """What the file is instead, when it is a summary or a table of vlneval's own (a report
    or a comparison pairs runs episode by episode, from predictions files), else None."""
    text = str(exc)
    if path.endswith(".csv") and "not valid JSON" in text:
        return VLNEvalError(
            f"{path}: a table (.csv, e.g. from `vlneval score --per-episode`), not a predictions "
            "file: give the predictions file it was scored from"
        )
    if summary_kind(path) is not None:  # one run's summary, or a sweep's list of them
        return VLNEvalError(
            f"{path}: a summary (from `vlneval score --json`), not a predictions file: a "
            "comparison pairs the runs episode by episode, so it needs the predictions files"
        )
    return None


@contextmanager
def _progress(total: int, label: str, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """A rich progress bar on stderr (none with ``quiet`` or off a terminal); yields a callback
    that advances it by one."""
    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(
        *columns, console=console, transient=True, disable=quiet or not console.is_terminal
    ) as p:
        task = p.add_task(label, total=total)

        def step(message: str) -> None:
            p.update(task, advance=1, description=f"{label}: {message}")

        yield step


#: The largest path-length budget (times d*): far beyond any path an agent walks, and b · d*
#: stays a finite number.
MAX_BUDGET = 1000.0


def _budgets(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        values = ()
    if not values or any(not 0 < v <= MAX_BUDGET for v in values):
        raise VLNEvalError(
            f"--budgets must be positive numbers, at most {MAX_BUDGET:g} (times d*), separated "
            f"by commas; got {text!r}"
        )
    return tuple(dict.fromkeys(values))  # a budget given twice is one row


def cmd_report(args: argparse.Namespace) -> int:
    """Scores the file (and the baseline), writes the HTML report."""
    _check_stats(args)
    plan = plan_outputs(args, {"--out": args.out, "--json": args.json})
    options = ReportOptions(
        n_worst=max(args.worst, 0),
        n_sample=max(args.sample, 0),
        seed=args.seed,
        n_resamples=args.resamples,
        n_permutations=args.permutations,
        confidence=args.confidence,
        cluster_by_scan=args.by_scan,
        by_episode=args.by_episode,
        budgets=_budgets(args.budgets),
        step_limit=args.step_limit,
        baseline_step_limit=args.compare_step_limit,
        force=args.force,
        title=args.title,
    )
    total = 1 + bool(args.compare) + options.steps(bool(args.compare))  # + the scoring
    with _progress(total, "report", args.quiet) as step, open_scorer(args) as scorer:
        run = _score(args, scorer, args.predictions)
        step("scored")
        baseline = None
        if args.compare:
            baseline = _score(args, scorer, args.compare, args.compare_protocol)
            step("scored the baseline")
            # two files of one name in different folders told apart, as `compare` names them
            baseline.label, run.label = _run_labels([args.compare, args.predictions])
        report = build_report(run, baseline=baseline, options=options, progress=step)
    page = report.html.encode("utf-8")
    items = [(plan.outputs["--out"], page)]
    if args.json:
        items.append((plan.outputs["--json"], to_json_bytes(report.data)))
    write_outputs(items)  # the page and its data replaced together
    summary = run.evaluation.to_dict()
    if plan.table is not None:
        print_table(render_summary(summary, color=sys.stdout.isatty(), fmt=plan.table))
    who = "" if baseline is None else f"B ({run.label}): "
    if baseline is not None:  # the baseline's checks and warnings, named
        print_notices(warning_notices(baseline.evaluation.to_dict(), f"A ({baseline.label}): "))
        print_notices(_yellow(f"A ({baseline.label}): ", [jump_note(baseline)]))
    print_notices(summary_notices(summary, who) + _yellow(who, [jump_note(run)]))
    if baseline is not None:
        print_notices(_yellow("", identical_notes(run, baseline)))
    if report.comparison is not None:
        print_notices(p_floor_notice([report.comparison]))
    print_notices(_step_notices(report.data, baseline is not None))
    where = "the report to stdout" if plan.outputs["--out"].is_stdout else args.out
    if not args.quiet:
        err(f"wrote {where} ({len(page) / 1e6:.1f} MB)")
    return 0


def _yellow(prefix: str, texts: Sequence[str | None]) -> list[tuple[str, str]]:
    """Notes for stderr, each after ``prefix`` (None: no note)."""
    return [(prefix + t, "yellow") for t in texts if t]


def _step_notices(data: dict[str, Any], compared: bool) -> list[tuple[str, str]]:
    """What the step counts say about each run's step limit (``step_notes``), after the run's
    name in a comparison, for stderr."""
    runs = [("B", data["diagnostics"])]
    if compared and data["baseline"] is not None:
        runs.insert(0, ("A", data["baseline"]["diagnostics"]))
    out = []
    for name, diag in runs:
        who = f"{name} ({diag['label']}): " if compared else ""
        for note in (diag["failures"] or {}).get("notes", []):
            note = note if note.startswith("warning") else f"note: {note}"
            out.append((who + note, "yellow"))
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    """Scores the files and prints the paired comparison(s) against the first."""
    plan = plan_outputs(args, {"--json": args.json})
    _check_stats(args)
    names = ["B", *(f"run {k}" for k in range(3, len(args.b) + 2))]
    with ExitStack() as stack, _progress(1 + 2 * len(args.b), "compare") as step:
        scorer_a = stack.enter_context(open_scorer(args))
        a = _score(args, scorer_a, args.a, args.protocol_a)
        step("scored A")
        scorer_b, b = scorer_a, args.profile_b and scorer_a.task.scoring_profile(args.profile_b)
        if b and b.name != scorer_a.profile.name:  # A's profile in any case: A's scorer
            scorer_b = stack.enter_context(open_scorer(args, profile=args.profile_b))
        others = []
        for path, name in zip(args.b, names, strict=True):
            others.append(_score(args, scorer_b, path, args.protocol_b))
            step(f"scored {name}")
        for run, label in zip([a, *others], _run_labels([args.a, *args.b]), strict=True):
            run.label = label  # two files of one name in different folders told apart
        metrics = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
        result = compare_many(
            a,
            others,
            rng=args.seed,
            n_resamples=args.resamples,
            n_permutations=args.permutations,
            confidence=args.confidence,
            cluster_by_scan=args.by_scan,
            by_episode=args.by_episode,
            force=args.force,
            metrics=metrics,
            progress=lambda k: step(f"compared {names[k]}"),
        )
    if args.json:
        write_summary(plan.outputs["--json"], result.to_dict())
    if plan.table is not None:
        color = sys.stdout.isatty()
        if isinstance(result, RunComparison):
            print_table(render_comparison(result, color=color, fmt=plan.table))
        else:
            print_table(render_multi(result, color=color, fmt=plan.table))
    runs = [("A", a), *zip(names, others, strict=True)]
    notices = [*run_notices(runs), *comparison_notices(result)]
    if scorer_b is scorer_a:
        notices += _same_files(args.a, args.b, names) + _same_results(runs, [args.a, *args.b])
    print_notices([*notices, *not_compared_notices(runs, result)])
    return 0


def _same_files(a: str, others: list[str], names: list[str]) -> list[tuple[str, str]]:
    """A warning for each candidate that is A's file (also by another path), scored alike."""
    same = [n for p, n in zip(others, names, strict=True) if Path(p).resolve() == Path(a).resolve()]
    return [
        (f"warning: {n} is the same file as A ({a}), scored alike: every Δ is 0 and p is 1; "
         "a run compared with itself says nothing about either", "yellow")
        for n in same
    ]  # fmt: skip


def _same_results(runs: list[tuple[str, Any]], paths: list[str]) -> list[tuple[str, str]]:
    """A warning for each run of another file than an earlier run's whose results are that
    run's exactly (the same file twice is :func:`_same_files`'s)."""
    distinct: dict[Path, tuple[str, Any]] = {}
    for path, (name, run) in zip(paths, runs, strict=True):
        distinct.setdefault(Path(path).resolve(), (f"{name} ({run.label})", run))
    named = list(distinct.values())
    summaries = [r.evaluation.to_dict() for _, r in named]
    texts = same_results(summaries, [n for n, _ in named], SAME_RUN)
    return [(f"warning: {t}", "yellow") for t in texts]


def _run_labels(paths: list[str]) -> list[str]:
    """Each run's name: its file's (``run_label``), or, when two files share a name
    (``s0/preds.json``, ``s1/preds.json``), the folders that tell them apart too.

    Example:
        >>> _run_labels(["a/s0/p.json", "a/s1/p.json"]), _run_labels(["x/r0.json", "r1.json"])
        (['s0/p', 's1/p'], ['r0', 'r1'])
    """
    labels = [run_label(p) for p in paths]
    if len(set(labels)) == len(labels):
        return labels
    return [(Path(n).parent / run_label(n)).as_posix() for n in short_names(paths)[0]]


def cmd_aggregate(args: argparse.Namespace) -> int:
    """Aggregates summaries (or scores predictions files first) over runs."""
    plan = plan_outputs(args, {"--json": args.json})
    given_task_options(args)  # a typo is said before any file is read, summaries alone too
    _refuse_repeats(args.runs)
    runs: list[tuple[str, dict[str, Any]]] = []  # (the predictions file, its summary)
    with ExitStack() as stack, _progress(len(args.runs), "aggregate") as step:
        scorer = scorer_on_first_use(args, stack)  # one for all the predictions files
        for path in args.runs:
            runs += _summaries_of(args, path, scorer)
            step(run_label(path))
    result = aggregate_summaries(
        [s for _, s in runs],
        _run_labels([p for p, _ in runs]),
        confidence=args.confidence,
        force=args.force,
    )
    if args.json:
        write_summary(plan.outputs["--json"], result.to_dict())
    if plan.table is not None:
        print_table(render_aggregate(result, color=sys.stdout.isatty(), fmt=plan.table))
    print_notices(aggregate_notices(result))
    return 0


def _refuse_repeats(paths: list[str]) -> None:
    """Refuses a file given twice (also by another path): a run aggregated with itself is no
    seed variation."""
    seen: dict[Path, int] = {}
    for k, path in enumerate(paths, start=1):
        first = seen.setdefault(Path(path).resolve(), k)
        if first != k:
            raise VLNEvalError(
                f"{path}: given twice (runs {first} and {k}); a run aggregated with itself is "
                "no seed variation: give each run's file once"
            )


def _summaries_of(
    args: argparse.Namespace, path: str, scorer: Callable[[], Any]
) -> list[tuple[str, dict[str, Any]]]:
    """The runs in ``path``, each as (its name's path, its summary): the summary in it (a
    summary JSON), one run per entry of a multi-file summary (the list ``score --json`` writes
    for several predictions files), or the summary of scoring it with ``scorer()``, its card
    declared by ``--protocol`` or else by the ``NAME.protocol.json`` that ``vlneval run`` wrote
    beside it (as ``score`` reads it)."""
    value = load_json(Path(path))
    if summary_kind_of(value) == "sweep":
        return _entries_of(path, value)
    return [(path, _summary_of(args, path, value, scorer))]


def _entries_of(path: str, value: list[Any]) -> list[tuple[str, dict[str, Any]]]:
    """The runs of the multi-file summary ``value`` read from ``path``: its entries with
    metrics; an entry that could not be scored is refused, one skipped (a protocol card, an
    earlier summary) is left out and said in a note."""
    runs = []
    for k, entry in enumerate(value, start=1):
        if "errors" in entry:
            raise VLNEvalError(
                f"{path}: entry {k} ({entry.get('predictions')}) of this multi-file summary "
                f"could not be scored ({'; '.join(map(str, entry['errors']))}); score it "
                "again, or give the other runs' files"
            )
        if "skipped" in entry:
            err(f"note: {path}: left out entry {k} ({entry['predictions']}): {entry['skipped']}")
        else:
            runs.append((str(entry.get("predictions") or f"{path}[{k - 1}]"), entry))
    if not runs:
        raise VLNEvalError(f"{path}: no entry of this multi-file summary holds a summary")
    return runs


def _summary_of(
    args: argparse.Namespace, path: str, value: Any, scorer: Callable[[], Any]
) -> dict[str, Any]:
    """The summary ``value`` read from ``path``, or the summary of scoring the file."""
    if isinstance(value, dict) and "card_differences" in value:  # a compare or aggregate JSON
        raise VLNEvalError(
            f"{path}: not a summary JSON (from `vlneval score --json`) but the JSON of a "
            "comparison or an aggregate; give each run's summary"
        )
    if summary_kind_of(value) == "summary":
        return value
    if not args.task:
        raise VLNEvalError(
            f"{path}: not a summary JSON (from `vlneval score --json`); to score a predictions "
            "file pass --task (and --split)"
        )
    return _score(args, scorer(), path).evaluation.to_dict()
