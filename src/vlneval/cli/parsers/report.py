"""The arguments of the commands of :mod:`vlneval.cli.report` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from vlneval.cli.common import (
    add_data_args,
    add_format_arg,
    add_scoring_args,
)

__all__ = ["register", "FEW_RESAMPLES", "MAX_RESAMPLES"]


#: Fewer resamples give percentile intervals whose ends move from seed to seed; more take
#: minutes to hours and memory in proportion, for ends that no longer move.
FEW_RESAMPLES, MAX_RESAMPLES = 1000, 1_000_000


def _integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """The argparse type of an integer option from ``low`` (to ``high``): a step limit from 1 (a limit of 0 would class every failure as
    hitting it), resamples and sign flips from 1 to :data:`MAX_RESAMPLES`.

    Example:
        >>> _integer(1)("7"), _integer(1, MAX_RESAMPLES)("2000")
        (7, 2000)
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low or (high is not None and value > high):
            span = f">= {low}" if high is None else f"from {low} to {high:,}"
            raise argparse.ArgumentTypeError(f"must be an integer {span}; got {text!r}")
        return value

    return parse


_step_limit, _count = _integer(1), _integer(1, MAX_RESAMPLES)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds the subcommands."""
    r = sub.add_parser(
        "report",
        help="score a predictions file and write a self-contained HTML report",
        description="Scores as `vlneval score` does, then writes one HTML file: summary with "
        "bootstrap intervals, protocol card, checks, outcome classes, budgeted success, "
        "breakdowns, and the worst and a sample of episodes drawn on their graphs.",
    )
    add_data_args(r)
    r.add_argument("--predictions", required=True, help="predictions file (.json or .json.gz)")
    add_scoring_args(r)
    _add_reading_args(r)
    r.add_argument("--compare", default=None, metavar="OTHER", help="baseline predictions file")
    r.add_argument(
        "--compare-protocol", default=None, metavar="FILE", help="protocol fields of OTHER"
    )
    r.add_argument(
        "--out", default="report.html", help="the HTML file, - for stdout (default: report.html)"
    )
    r.add_argument(
        "--json",
        default=None,
        metavar="FILE",
        help="also write the run's summary JSON (as `score --json`) with the report's "
        "diagnostics, baseline and comparison (- for stdout)",
    )
    r.add_argument("--worst", type=int, default=6, help="worst episodes drawn (default 6)")
    r.add_argument("--sample", type=int, default=6, help="random episodes drawn (default 6)")
    r.add_argument("--title", default=None, help="page title")
    r.add_argument(
        "--step-limit",
        type=_step_limit,
        default=None,
        help="the run's step limit (default: the protocol card's inference_budget)",
    )
    r.add_argument(
        "--compare-step-limit",
        type=_step_limit,
        default=None,
        metavar="N",
        help="OTHER's step limit (default: its card's inference_budget, else --step-limit)",
    )
    r.add_argument(
        "--budgets",
        default="1,1.25,1.5,2,3",
        help="path-length budgets as multiples of the shortest distance (default 1,1.25,1.5,2,3)",
    )
    _add_stats_args(r)
    r.add_argument("--quiet", action="store_true", help="no progress bar, no table, no 'wrote'")
    r.set_defaults(func="vlneval.cli.report:cmd_report")

    c = sub.add_parser(
        "compare",
        help="paired comparison of predictions files on the same episodes (A the baseline)",
        description="Δ = B − A with a paired bootstrap interval; McNemar's exact test for SR "
        "and OSR, a paired permutation test for the other metrics; Holm-adjusted. Several "
        "candidates (compare A B C D): each against A in one table, Holm-adjusted over every "
        "candidate × metric. Refuses runs whose protocol cards differ in task, split, data "
        "version, scoring (profile, rules) or privileged access unless --force.",
    )
    add_data_args(c)
    c.add_argument("a", metavar="A", help="baseline predictions file")
    c.add_argument("b", metavar="B", nargs="+", help="candidate predictions file(s)")
    add_scoring_args(c)
    _add_reading_args(c)
    c.add_argument("--protocol-a", default=None, metavar="FILE", help="protocol fields of A")
    c.add_argument(
        "--protocol-b", default=None, metavar="FILE", help="protocol fields of B (every candidate)"
    )
    c.add_argument(
        "--profile-b",
        default=None,
        help="score the candidates with another profile (refused unless --force)",
    )
    c.add_argument("--metrics", default=None, help="comma-separated labels (default: all)")
    c.add_argument(
        "--json", default=None, metavar="FILE", help="write the comparison JSON (- for stdout)"
    )
    add_format_arg(c, rows=False)
    _add_stats_args(c)
    c.set_defaults(func="vlneval.cli.report:cmd_compare")

    g = sub.add_parser(
        "aggregate",
        help="mean, std and interval of each metric over several runs (seeds)",
        description="Each RUN is a summary JSON (from `score --json`) or a predictions file "
        "(then --task is needed; its NAME.protocol.json from `vlneval run`, when there, declares "
        "its card unless --protocol is given). Refuses runs whose protocol cards differ unless "
        "--force.",
    )
    add_data_args(g)
    _optional_task(g)
    g.add_argument("runs", nargs="+", metavar="RUN", help="summary JSON or predictions files")
    add_scoring_args(g)
    _add_reading_args(g)
    g.add_argument("--confidence", type=_confidence, default=0.95, help="interval coverage (0.95)")
    g.add_argument("--force", action="store_true", help="aggregate even if the cards differ")
    g.add_argument(
        "--json", default=None, metavar="FILE", help="write the aggregate JSON (- for stdout)"
    )
    add_format_arg(g, rows=False)
    g.set_defaults(func="vlneval.cli.report:cmd_aggregate")


def _optional_task(p: argparse.ArgumentParser) -> None:
    for action in p._actions:
        if action.dest == "task":
            action.required = False
            action.help = "benchmark (needed when a RUN is a predictions file)"


def _add_reading_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--skip-summary-records",
        action="store_true",
        help="skip records without an id that look like a summary (no trajectory, only "
        "scalar values), with a warning; e.g. NaviLLM's compact files start with one",
    )


def _add_stats_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    p.add_argument("--resamples", type=_count, default=2000, help="bootstrap resamples (2000)")
    p.add_argument("--confidence", type=_confidence, default=0.95, help="interval coverage (0.95)")
    p.add_argument(
        "--permutations",
        type=_count,  # as many as resamples: a million take about a minute for one metric
        default=10000,
        help=f"Monte Carlo sign flips of the paired tests, 1 to {MAX_RESAMPLES:,} (default 10000)",
    )
    p.add_argument(
        "--by-scan",
        action="store_true",
        help="resample scans, then episodes (two-stage bootstrap; episodes of one house are "
        "not independent)",
    )
    p.add_argument(
        "--by-episode",
        action="store_true",
        help="resample episodes (and McNemar's test for SR, OSR) even when episodes share a "
        "path; by default whole paths are resampled (R2R's three instructions of one path "
        "are not independent)",
    )
    p.add_argument("--force", action="store_true", help="compare even if the cards differ")


def _confidence(text: str) -> float:
    """An interval's coverage: a number strictly between 0 and 1.

    Example:
        >>> _confidence("0.9")
        0.9
    """
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a number strictly between 0 and 1, e.g. 0.95; got {text!r}"
        )
    return value
