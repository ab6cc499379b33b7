"""``vlneval score`` and ``vlneval validate``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vlneval.cli.common import err, given_task_options, print_table, summary_kind
from vlneval.cli.scoring import declared_for, emit_scored, open_scorer, scored_plan
from vlneval.distributed.merge import is_card
from vlneval.distributed.sweep import expand_files
from vlneval.errors import HiddenSplitError, InvalidInputError, VLNEvalError
from vlneval.io import clip
from vlneval.reports.terminal import (
    NOTE_LIMIT,
    SAME_RUN,
    print_notices,
    render_runs,
    same_results,
    short_names,
    summary_notices,
)
from vlneval.tasks import get_profile, get_task
from vlneval.tasks.common.blind import (
    blind_check,
    open_blind,
    open_public,
    own_blind_check,
    split_hint,
    twin_hint,
)
from vlneval.tasks.common.request import SplitRequest
from vlneval.tasks.common.root import demo_root
from vlneval.tasks.common.verdict import blind_refusal, blind_warnings, scored_refusal

__all__ = ["cmd_score", "cmd_validate"]

PROGRESS_FILES = 10  # a sweep of this many files shows its progress on stderr (unless --quiet)


def _predictions(args: argparse.Namespace) -> list[str]:
    """The one file ``validate`` checks, or ``score``'s single file or demo default."""
    if isinstance(args.predictions, str):  # validate: one file
        return _without_skipped([args.predictions], _skipped_cards([args.predictions]))
    if args.predictions:
        return [str(p) for p in args.predictions]
    task = get_task(args.task)
    if task.embedded:
        split = args.split or task.default_split
        return [str(demo_root() / task.folder / f"predictions_{split}.json")]
    raise VLNEvalError("--predictions FILE is required (only the demo task has a default)")


def _skipped_cards(paths: list[str]) -> dict[int, str]:
    """The positions of the protocol cards of ``vlneval run`` in ``paths`` (a ``*.json``
    pattern over a run folder matches them) -> why each is skipped, said in one note."""
    if not any(p.endswith(".protocol.json") for p in paths):
        return {}  # the common case reads no file twice
    cards = [p for p in paths if is_card(p)]
    if cards and len(cards) < len(paths):
        more = f" and {len(cards) - 1} more" if len(cards) > 1 else ""
        err(f"note: skipped {len(cards)} protocol card{'s' if len(cards) > 1 else ''} of "
            f"`vlneval run` (not predictions): {cards[0]}{more}")  # fmt: skip
    why = "a protocol card of `vlneval run`, not predictions"
    return {k: why for k, p in enumerate(paths) if p in cards}


def _skipped_outputs(paths: list[str], plan: Any) -> dict[int, str]:
    """The files of ``paths`` that this command writes (``--json``, ``--per-episode``: a
    pattern re-run over the folder matches the last run's summary), by position -> why,
    each said in a note; so an input is never overwritten."""
    written = {o.path.resolve(): name for name, o in plan.outputs.items() if o.path is not None}
    skipped = {}
    for k, p in enumerate(paths):
        option = written.get(Path(p).resolve())
        if option is not None:
            skipped[k] = f"the {option} output of this command, not predictions"
            err(f"note: skipped {p}: the {option} output of this command (written, not read)")
    return skipped


def _skipped_repeats(paths: list[str]) -> dict[int, str]:
    """The positions of the files of ``paths`` given again (``./x`` after ``x`` too) -> why,
    each said in a note: a file is scored once, so its rows are never counted twice."""
    first: dict[Path, int] = {}
    skipped = {}
    for k, p in enumerate(paths):
        seen = first.setdefault(Path(p).resolve(), k)
        if seen != k:
            skipped[k] = f"the same file as {paths[seen]}, given before (scored once)"
            err(f"note: skipped {p}: {skipped[k]}")
    return skipped


def _without_skipped(paths: list[str], skipped: dict[int, str]) -> list[str]:
    """``paths`` without the ``skipped`` ones; a card given alone is refused saying what it is.

    Raises:
        VLNEvalError: every file given is skipped.
    """
    left = [p for k, p in enumerate(paths) if k not in skipped]
    if left:
        return left
    cards = [p for k, p in enumerate(paths) if skipped[k].startswith("a protocol card")]
    if len(cards) == 1 == len(paths):
        stem = cards[0].removesuffix(".protocol.json")
        beside = [f" ({f})" for f in (f"{stem}.json", f"{stem}.json.gz") if Path(f).is_file()]
        raise VLNEvalError(
            f"{cards[0]}: the protocol card `vlneval run` writes beside its predictions"
            f"{''.join(beside[:1])}, not predictions"
        )
    if len(cards) == len(paths):
        raise VLNEvalError(f"the {len(cards)} files given are protocol cards of `vlneval run`, "
                           f"not predictions ({cards[0]}, ...)")  # fmt: skip
    raise VLNEvalError(f"no predictions file left to score: {paths[0]}: {skipped[0]}")


def _score(args: argparse.Namespace, scorer, path: str):  # type: ignore[no-untyped-def]
    return scorer.score(
        path,
        subset=args.subset,
        form=args.trajectory_form,
        trajectory_key=args.trajectory_key,
        declared=declared_for(args.protocol, path, getattr(args, "quiet", False)),
        skip_summaries=args.skip_summary_records,
    )


def _refused(args: argparse.Namespace, scorer: Any, path: str, exc: InvalidInputError) -> str:
    """The error text of a file the scorer refused: its problems (the first 20 unless
    ``--all-errors``), then hints: the episodes file given looks like another split; its ids
    are another split's (which); they are an r2r-twin run's, given to r2r-ce."""
    text = exc.render(limit=None if args.all_errors else 20)
    request = SplitRequest(
        scorer.task, scorer.split, scorer.profile, root=args.data_root,
        options=given_task_options(args) or {},
    )  # fmt: skip
    hints = (
        scorer.episodes_warning, split_hint(request, scorer.episodes, path),
        twin_hint(request, path), SUMMARY if summary_kind(path) else None,
    )  # fmt: skip
    return "\n".join([text, *(f"hint: {h}" for h in hints if h)])


SUMMARY = "a summary written by `vlneval score --json`, not predictions"


def cmd_score(args: argparse.Namespace) -> int:
    """Scores one file or several (one process, the split loaded once), prints the table,
    writes the requested files; several files with a bad one: the others are scored, exit 2."""
    plan = scored_plan(args)  # a bad output is refused before anything is scored
    given, sweep = expand_files(_predictions(args))
    skipped = _skipped_cards(given) | _skipped_outputs(given, plan) | _skipped_repeats(given)
    paths = _without_skipped(given, skipped)
    with open_scorer(args) as scorer:
        if sweep:  # several files or a pattern: a list
            return _sweep(args, plan, scorer, given, skipped)
        try:
            result = _score(args, scorer, paths[0])
        except InvalidInputError as exc:
            err(_refused(args, scorer, paths[0], exc))
            return 2
    emit_scored(args, result.to_dict(), result.rows() if args.per_episode else None, plan)
    return 0


def _sweep(
    args: argparse.Namespace, plan: Any, scorer: Any, given: list[str], skipped: dict[int, str]
) -> int:
    """Scores every file of ``given`` with one scorer; a failed file is reported, not fatal:
    the ``--json`` list has one entry per file given, in that order: its summary, or
    ``{"predictions": file, "errors": [...]}`` (the lines printed, without ``error:``), or
    ``{"predictions": file, "skipped": why}`` (a protocol card, an output of this command, a
    file given again, an earlier summary), so ``zip(files, entries)``
    lines up."""
    from vlneval.agents.progress import episode_progress  # deferred: rich

    done: list[tuple[str, Any, dict[str, Any]]] = []  # the files scored: result, summary
    entries: list[dict[str, Any]] = []  # one per file given
    skipped = dict(skipped)  # and the summaries found among them
    todo = len(given) - len(skipped)
    shown = todo >= PROGRESS_FILES and not args.quiet
    with episode_progress(todo, enabled=shown, label="scoring", unit="files") as advance:
        for k, path in enumerate(given):
            if k in skipped:
                entries.append({"predictions": path, "skipped": skipped[k]})
                continue
            try:
                result = _score(args, scorer, path)
            except InvalidInputError as exc:
                if summary_kind(path):  # an earlier run's, under another name
                    err(f"note: skipped {path}: {SUMMARY}")
                    skipped[k] = SUMMARY
                    entries.append({"predictions": path, "skipped": SUMMARY})
                    advance(1)
                    continue
                text = _refused(args, scorer, path, exc)
            except VLNEvalError as exc:  # a missing file's error names it already
                named = str(exc).startswith(f"{path}: ")
                text = f"error: {exc}" if named else f"error: {path}: {exc}"
            else:
                done.append((path, result, result.to_dict()))
                entries.append(done[-1][2])
                advance(1)
                continue
            err(text)
            errors = [line.removeprefix("error: ") for line in text.splitlines()]
            entries.append({"predictions": path, "errors": errors})
            advance(1)
    rows = None
    if args.per_episode:
        rows = [{"predictions": p, **row} for p, r, _ in done for row in r.rows()]
    summaries = [(p, s) for p, _, s in done]
    plan.write(entries, rows)
    if plan.table is not None and done:
        print_table(_sweep_table(summaries, color=sys.stdout.isatty(), fmt=plan.table))
    _sweep_notices(summaries)
    if failed := len(given) - len(skipped) - len(done):
        err(f"error: {failed} of {len(given) - len(skipped)} predictions files could not be "
            "scored (see above)")  # fmt: skip
    return 2 if failed else 0


def _sweep_table(done: list[tuple[str, Any]], *, color: bool, fmt: str = "text") -> str:
    """One row per scored file: its name, the episodes scored, every metric."""
    first = done[0][1]
    prof = first["profile"]
    title = f"{first['task']} {first['split']} · profile {prof['name']} v{prof['version']}"
    names, folder = short_names([p for p, _ in done])  # the common folder once, in the title
    title += f" · in {folder}" if folder else ""
    return render_runs(
        list(zip(names, (s for _, s in done), strict=True)), title=title, color=color, fmt=fmt
    )


def _sweep_notices(done: list[tuple[str, Any]]) -> None:
    """The notes of every scored file, each once, with the files it concerns (see
    :func:`_which`)."""
    seen: dict[tuple[str, str], list[str]] = {}
    for path, s in done:
        for notice in summary_notices(s):
            seen.setdefault(notice, []).append(path)
    print_notices(
        (f"{_which(files, len(done))}: {text}", style) for (text, style), files in seen.items()
    )
    same = same_results([s for _, s in done], [p for p, _ in done], SAME_RUN)
    print_notices((f"warning: {text}", "yellow") for text in same)


def _which(files: list[str], total: int, shown: int = 3) -> str:
    """The files a note of a sweep of ``total`` files concerns: the first ``shown`` by name.

    Example:
        >>> _which(["a.json"], 4), _which(["a.json", "b.json"], 2)
        ('a.json', 'all 2 files')
        >>> _which(["a.json", "c.json"], 4)
        'a.json, c.json (2 of 4 files)'
        >>> _which([f"{k}.json" for k in range(5)], 9)
        '0.json, 1.json, 2.json and 2 more (5 of 9 files)'
    """
    if len(files) == 1:
        return files[0]
    if len(files) == total:
        return f"all {total} files"
    more = f" and {len(files) - shown} more" if len(files) > shown else ""
    return f"{', '.join(files[:shown])}{more} ({len(files)} of {total} files)"


def cmd_validate(args: argparse.Namespace) -> int:
    """Runs every check a leaderboard makes; exit 0 only for an acceptable file. A goal-less
    (test) split is checked blind, against its public view, as the evaluation server does."""
    paths = _predictions(args)
    try:
        scorer = open_scorer(args)  # the split loaded once; a goal-less one is refused
    except HiddenSplitError as hidden:  # checked blind, on the file the scorer found
        blind = _blind(args, paths[0], hidden.episodes_file)
        if blind is None:
            raise
        return blind
    with scorer:
        try:
            result = _score(args, scorer, paths[0])
        except InvalidInputError as exc:
            err(_refused(args, scorer, paths[0], exc))
            return 2
    _warn(result.warnings)
    refusal = scored_refusal(result, scorer.task.ranking_metric(scorer.profile))
    if refusal is not None:
        raise VLNEvalError(refusal)
    print(
        f"ok: {result.source} is a valid {result.task} {result.split} submission for "
        f"profile {result.profile.name} ({result.n_episodes} episodes, trajectory form "
        f"{result.form})"
    )
    return 0


def _blind(args: argparse.Namespace, path: str, episodes_file: str) -> int | None:
    """The exit code of a blind check of the goal-less split in ``episodes_file``; None when
    the task has no blind check."""
    task = get_task(args.task)
    skip = args.skip_summary_records  # a task that cannot skip them refused it before
    profile = get_profile(args.profile or task.default_profile)
    request = SplitRequest(
        task, args.split or task.default_split, profile, root=args.data_root,
        episodes_file=args.episodes or episodes_file, graphs=args.graphs,
        options=given_task_options(args) or {},
    )  # fmt: skip
    opened = open_public(request)
    if opened is not None:
        check = blind_check(*opened, profile, path, form=args.trajectory_form, skip_summaries=skip)
    else:
        own = open_blind(request)
        if own is None:
            return None
        try:
            check = own_blind_check(own, path, form=args.trajectory_form, skip_summaries=skip)
        finally:
            own.close()
    what = f"{check.task} {check.split}"
    primary = task.ranking_metric(profile)
    _warn(blind_warnings(check, primary))
    if check.problems:
        shown = check.problems if args.all_errors else check.problems[:20]
        for p in shown:
            err(f"error: {p}")
        if len(shown) < len(check.problems):
            err(f"... and {len(check.problems) - len(shown)} more (--all-errors shows them)")
        err(
            f"error: {check.source}: not a valid {what} submission: {len(check.problems)} "
            f"problem{'s' if len(check.problems) != 1 else ''} (blind check against the public "
            "view: no goals, no scores)"
        )
        return 2
    refusal = blind_refusal(check, primary)
    if refusal is not None:
        raise VLNEvalError(refusal)
    print(
        f"ok: {check.source} passes the blind check of {what} for profile {profile.name} "
        f"({check.n_episodes} episodes; checked against the public view as the evaluation "
        f"server does: {check.checks}; no goals, so no scores)"
    )
    return 0


def _warn(warnings: list[str]) -> None:
    for w in warnings:
        err(clip(f"warning: {w}", NOTE_LIMIT))
