"""The table of a summary (rich text, Markdown or LaTeX) and the notes that go with it.

The table goes to stdout and holds only numbers; the notes (failed checks, warnings, the reason
for every ``n/a``) go to stderr (:func:`summary_notices`, :func:`print_notices`). User-provided
text (ids, file names, warnings that quote them) is never read as rich markup nor highlighted,
and is clipped before it is rendered: a 1 MB id costs no more than a short one.
"""

from __future__ import annotations

import io
import itertools
import re
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from vlneval.io import clip, short_names
from vlneval.metrics.info import column_name, format_value, shown_unit
from vlneval.reports.paper import render_table

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "render_summary",
    "render_runs",
    "fit_names",
    "short_names",
    "summary_notices",
    "unavailable_notices",
    "warning_notices",
    "oracle_notices",
    "same_results",
    "SAME_RUN",
    "unavailable_reasons",
    "grouped_notes",
    "print_notices",
    "format_value",
    "metric_cell",
    "shown_unit",
    "column_name",
    "level_label",
    "NOTE_LIMIT",
    "recording_console",
]

#: The longest note printed (characters); the JSON keeps the whole text.
NOTE_LIMIT = 2000

Notice = tuple[str, str]  # (text, rich style)


def level_label(confidence: float) -> str:
    """An interval's coverage as a percentage, with every digit it has (0.975 is ``97.5%``,
    never rounded to ``98%``).

    Example:
        >>> level_label(0.95), level_label(0.975), level_label(0.9)
        ('95%', '97.5%', '90%')
    """
    return f"{round(100 * confidence, 9):g}%"


def metric_cell(summary: Mapping[str, Any], label: str, unit: str | None = None) -> str:
    """A metric of a summary as its table cell: :func:`format_value`, and beside it the number
    of episodes it averages when that is fewer than the scored ones (the summary's
    ``averaged_over``, e.g. NE over the episodes whose goal is reachable).

    Example:
        >>> s = {"n_episodes": 4, "metrics": {"NE": 6.4512, "SR": 0.25},
        ...      "averaged_over": {"NE": 2}}
        >>> metric_cell(s, "NE"), metric_cell(s, "SR")
        ('6.45 (2 of 4)', '25.00')
    """
    value = summary["metrics"].get(label)
    text = format_value(label, value, unit)
    over = (summary.get("averaged_over") or {}).get(label)
    if value is not None and over is not None and over != summary.get("n_episodes"):
        text += f" ({over} of {summary.get('n_episodes')})"
    return text


def _title(summary: Mapping[str, Any]) -> str:
    prof = summary["profile"]
    return (
        f"{summary['task']} {summary['split']} · profile {prof['name']} v{prof['version']} · "
        f"{summary['n_episodes']} episodes" + (" (partial)" if summary.get("partial") else "")
    )


def _table(
    fmt: str, title: str, header: Sequence[str], rows: Iterable[Sequence[str]], align: str, *,
    width: int, color: bool | None,
) -> str:  # fmt: skip
    """The table in ``fmt``: Markdown or LaTeX (:func:`render_table`, the title as its note), or
    a rich table as text; every cell and the title are plain text (no markup). Without colour,
    a table that fits (the common case) is drawn by :func:`_plain_table`, the same characters
    without importing rich."""
    rows = [list(r) for r in rows]  # read twice when the plain table does not fit
    if fmt != "text":
        return render_table(fmt, header, rows, align, note=title)
    if not color:
        plain = _plain_table(title, header, rows, align, width=width)
        if plain is not None:
            return plain
    from rich.table import Table  # deferred: rich
    from rich.text import Text  # deferred: rich

    table = Table(title=Text(title) if title else None)
    for name, a in zip(header, align, strict=True):
        table.add_column(Text(name), justify="left" if a == "l" else "right", no_wrap=a == "l")
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    console = recording_console(color, width)
    console.print(table)
    return console.export_text(styles=bool(color))


def recording_console(color: bool | None, width: int = 120) -> Console:
    """A rich console that records into memory (``export_text``), never highlighting."""
    from rich.console import Console  # deferred: rich

    return Console(
        record=True, force_terminal=color, width=width, file=io.StringIO(), highlight=False
    )


_PLAIN = frozenset(map(chr, range(0x20, 0x7F))) | {"·"}  # one column each, drawn as they are


def _plain_table(
    title: str, header: Sequence[str], rows: Iterable[Sequence[str]], align: str, *, width: int
) -> str | None:
    """The uncoloured rich table (heavy head box, padding 1, title centred above) drawn
    directly; None when rich would do more than lay the cells side by side (a table or title
    wider than ``width`` wraps, wide or control characters, edge spaces), and rich draws it.

    Example:
        >>> print(_plain_table("demo · val", ["SR (%)"], [["50.00"]], "r", width=80), end="")
        demo · val
        ┏━━━━━━━━┓
        ┃ SR (%) ┃
        ┡━━━━━━━━┩
        │  50.00 │
        └────────┘
    """
    body = [list(r) for r in rows]
    cells = [title, *header, *(c for r in body for c in r)]
    if not header or any(c != c.strip() or "  " in c or not _PLAIN.issuperset(c) for c in cells):
        return None
    widths = [max(len(c) for c in column) for column in zip(header, *body, strict=True)]
    total = sum(widths) + 3 * len(widths) + 1
    if total > width or len(title) > total:
        return None

    def line(left: str, fill: str, mid: str, right: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + right + "\n"

    def cells_of(row: Sequence[str], edge: str) -> str:
        parts = [
            f" {c.ljust(w) if a == 'l' else c.rjust(w)} "
            for c, w, a in zip(row, widths, align, strict=True)
        ]
        return edge + edge.join(parts) + edge + "\n"

    pad = total - len(title)
    out = [" " * (pad // 2) + title + " " * (pad - pad // 2) + "\n"] if title else []
    out += [line("┏", "━", "┳", "┓"), cells_of(header, "┃"), line("┡", "━", "╇", "┩")]
    out += [cells_of(r, "│") for r in body]
    out.append(line("└", "─", "┴", "┘"))
    return "".join(out)


def render_summary(
    summary: Mapping[str, Any], *, color: bool | None = None, fmt: str = "text"
) -> str:
    """The summary's metrics as a table (``fmt``: ``text``, ``markdown`` or ``latex``); its
    notes are :func:`summary_notices`.

    Example:
        >>> s = {"task": "demo", "split": "val", "n_episodes": 2, "metrics": {"SR": 0.5},
        ...      "profile": {"name": "demo", "version": "1"}}
        >>> print(render_summary(s, fmt="markdown"), end="")
        demo val · profile demo v1 · 2 episodes
        <BLANKLINE>
        | SR (%) |
        | ---: |
        | 50.00 |
    """
    units = summary.get("units") or {}  # a task's own units (hops, px, count), by label
    metrics = summary["metrics"]
    header = [column_name(k, units.get(k)) for k in metrics]
    row = [metric_cell(summary, k, units.get(k)) for k in metrics]
    return _table(fmt, _title(summary), header, [row], "r" * len(header), width=120, color=color)


def render_runs(
    runs: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    title: str,
    color: bool | None = None,
    fmt: str = "text",
    width: int | None = None,
) -> str:
    """One row per scored file (its name, the episodes scored, every metric): the table of
    ``vlneval score`` with several predictions files.

    As text the table fits ``width`` (default: the terminal's, ``COLUMNS``, else 160): the
    name column is clipped to what the numbers leave (``…`` and the name's end), and when
    the metric columns alone are wider the table is cut into blocks of columns, one under
    the other, each with the names. A number is never clipped.

    Example:
        >>> s = {"n_episodes": 2, "metrics": {"NE": 1.5, "SR": 0.5, "SPL": 0.25}}
        >>> print(render_runs([("long/name/iter_100.json", s)], title="", width=49), end="")
        ┏━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━┓
        ┃ predictions      ┃ episodes ┃ NE (m) ┃ SR (%) ┃
        ┡━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━┩
        │ …e/iter_100.json │        2 │   1.50 │  50.00 │
        └──────────────────┴──────────┴────────┴────────┘
        ┏━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━┓
        ┃ predictions      ┃ episodes ┃ SPL (%) ┃
        ┡━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━┩
        │ …e/iter_100.json │        2 │   25.00 │
        └──────────────────┴──────────┴─────────┘
    """
    labels = list(dict.fromkeys(k for _, s in runs for k in s["metrics"]))
    units = {k: v for _, s in runs for k, v in (s.get("units") or {}).items()}
    header = ["predictions", "episodes", *(column_name(k, units.get(k)) for k in labels)]
    rows = []
    for name, s in runs:
        n = f"{s['n_episodes']}" + (" (partial)" if s.get("partial") else "")
        rows.append([clip(name, 200), n, *(metric_cell(s, k, units.get(k)) for k in labels)])
    align = "lr" + "r" * len(labels)
    if fmt != "text":
        return _table(fmt, title, header, rows, align, width=160, color=color)
    width = width or shutil.get_terminal_size((160, 24)).columns
    sizes = [max(len(r[j]) for r in [header, *rows]) + 3 for j in range(len(header))]
    blocks = _blocks(sizes, width)
    room = min(width - 1 - sum(sizes[j] for j in cols) for cols in blocks) - 3
    keep = max(len(header[0]), min(sizes[0] - 3, room))  # the names' width, in every block
    for r, name in zip(rows, fit_names([r[0] for r in rows], keep), strict=True):
        r[0] = name
    if len(title) > width:  # its start (task, split) and end (the folder's last names)
        title = title[: width // 2] + "…" + title[len(title) - (width - width // 2 - 1) :]
    out = []
    for cols in blocks:
        fits = max(width, keep + 4 + sum(sizes[j] for j in cols))  # rich never squeezes a number
        picked = [[r[0], *(r[j] for j in cols)] for r in [header, *rows]]
        text = "l" + "".join(align[j] for j in cols)
        out.append(_table("text", title, picked[0], picked[1:], text, width=fits, color=color))
        title = ""  # once, above the first block
    return "".join(out)


def fit_names(names: Sequence[str], width: int) -> list[str]:
    """``names`` cut to ``width`` characters, still told apart where possible: the text all of
    them share (runs of words between ``/ _ - .``, longest first) is cut to ``…`` and its end;
    a name still too long keeps ``…`` and its last characters.

    Example:
        >>> fit_names(["run_seed_0/eval_iter_1000.json", "run_seed_1/eval_iter_2000.json"], 20)
        ['run_seed_0…1000.json', 'run_seed_1…2000.json']
    """
    if all(len(n) <= width for n in names):
        return list(names)
    tokens = [re.split(r"([/_.-])", n) for n in names]
    if len({len(t) for t in tokens}) == 1:
        same = [len({t[i] for t in tokens}) == 1 for i in range(len(tokens[0]))]
        for i, j in sorted(_runs(same), key=lambda r: -len("".join(tokens[0][r[0] : r[1]]))):
            excess = max(len("".join(t)) for t in tokens) - width
            if excess <= 0:
                break
            text = "".join(tokens[0][i:j])
            short = "…" + text[min(len(text), excess + 1) :]
            for t in tokens:
                t[i:j] = [short] + [""] * (j - i - 1)  # same length: the other runs stay put
    return [n if len(n) <= width else "…" + n[len(n) - width + 1 :] for n in map("".join, tokens)]


def _runs(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of True in ``flags``."""
    out, k = [], 0
    for flag, run in itertools.groupby(flags):
        n = len(list(run))
        out += [(k, k + n)] if flag else []
        k += n
    return out


def _blocks(sizes: Sequence[int], width: int) -> list[list[int]]:
    """The columns after the name (``sizes``: each column's width with its padding and
    border) of each block of a table ``width`` wide: the episodes column and as many metric
    columns as fit beside a name of 16 characters (one metric per block at least)."""
    room = width - 1 - (min(sizes[0], 16 + 3) + sizes[1])
    blocks: list[list[int]] = [[1]]
    used = 0
    for j in range(2, len(sizes)):
        if len(blocks[-1]) > 1 and used + sizes[j] > room:
            blocks.append([1])
            used = 0
        blocks[-1].append(j)
        used += sizes[j]
    return blocks


def unavailable_reasons(summary: Mapping[str, Any]) -> dict[str, str]:
    """Label -> why it is n/a, for every metric of the summary whose value is null.

    Example:
        >>> unavailable_reasons({"metrics": {"NE": None, "TL": 1.0},
        ...     "unavailable": {"NE": "no distances"}})
        {'NE': 'no distances'}
    """
    reasons = summary.get("unavailable") or {}
    return {
        label: str(reasons.get(label) or "the scorer gave no reason (please report it)")
        for label, value in summary["metrics"].items()
        if value is None
    }


def grouped_notes(why: Mapping[str, str], state: str) -> list[str]:
    """``"NE, SR are {state}: {text}"``: the labels that share one text, together (see
    :func:`unavailable_notices`)."""
    by_text: dict[str, list[str]] = {}
    for label, text in why.items():
        by_text.setdefault(text, []).append(label)
    return [
        f"{', '.join(labels)} {'is' if len(labels) == 1 else 'are'} {state}: {text}"
        for text, labels in by_text.items()
    ]


def unavailable_notices(summary: Mapping[str, Any]) -> list[str]:
    """Why each ``n/a`` of the table is one, and how to get it (labels with one reason
    together).

    Example:
        >>> unavailable_notices({"metrics": {"NE": None, "SR": None, "TL": 1.0},
        ...     "unavailable": {"NE": "no distances", "SR": "no distances"}})
        ['NE, SR are n/a: no distances']
    """
    return grouped_notes(unavailable_reasons(summary), "n/a")


def summary_notices(summary: Mapping[str, Any], prefix: str = "") -> list[Notice]:
    """The notes of a summary, for stderr: failed checks, warnings, then why each ``n/a``,
    each after ``prefix`` (the run's name when several runs are shown)."""
    out = warning_notices(summary, prefix)
    out += [(f"{prefix}note: {text}", "yellow") for text in unavailable_notices(summary)]
    return out


#: Why a run whose results equal another's misleads a table of runs.
SAME_RUN = (
    "most likely one run given twice (a copied file, or the same predictions under another name)"
)


def same_results(
    summaries: Sequence[Mapping[str, Any]], labels: Sequence[str], why: str
) -> list[str]:
    """A warning for each run whose episode count and metrics all equal an earlier run's to
    the last digit, with ``why`` that misleads: most likely one run given twice (a copied
    file or summary, or the same predictions).

    Example:
        >>> run = {"n_episodes": 2, "metrics": {"SR": 0.5}}
        >>> warned = same_results([run, {**run}, {**run, "metrics": {"SR": 1.0}}], "abc", "x")
        >>> warned
        ['b has exactly the results of a (every metric, to the last digit): x']
    """
    first: dict[str, str] = {}
    out = []
    for label, s in zip(labels, summaries, strict=True):
        key = repr((s.get("n_episodes"), sorted(s["metrics"].items())))
        if key in first:
            out.append(
                f"{label} has exactly the results of {first[key]} (every metric, to the last "
                f"digit): {why}"
            )
        first.setdefault(key, label)
    return out


def oracle_notices(summary: Mapping[str, Any], prefix: str = "") -> list[Notice]:
    """A note when NE is 0 on every episode (every stop on the goal) and the run declares no
    privileged access: most likely a shortest-path oracle, not an agent to rank.

    Example:
        >>> card = {"privileged": "not declared (offline predictions file)"}
        >>> s = {"n_episodes": 3, "metrics": {"NE": 0.0}, "protocol": card}
        >>> print(oracle_notices(s, "B (x): ")[0][0])
        B (x): note: NE is 0 on all 3 episodes (every stop on the goal): a shortest-path oracle? declare its privileged access with --protocol
    """
    undeclared = str((summary.get("protocol") or {}).get("privileged")).startswith("not declared")
    if summary.get("metrics", {}).get("NE") != 0 or not undeclared:
        return []
    return [(
        f"{prefix}note: NE is 0 on all {summary.get('n_episodes')} episodes (every stop on the "
        "goal): a shortest-path oracle? declare its privileged access with --protocol", "yellow",
    )]  # fmt: skip


def warning_notices(summary: Mapping[str, Any], prefix: str = "") -> list[Notice]:
    """A summary's failed checks and warnings, then :func:`oracle_notices`, for stderr, each
    after ``prefix`` (the run's name when several runs are shown)."""
    out: list[Notice] = []
    for c in summary.get("checks", []):
        if not c["holds"]:
            style = "yellow" if "quirk" in c else "bold red"
            note = f" ({c['quirk']})" if "quirk" in c else ""
            out.append((f"{prefix}check failed: {c['name']}: {c['detail']}{note}", style))
    for w in summary.get("warnings", []):
        if not w.startswith("consistency check failed"):
            out.append((f"{prefix}warning: {w}", "yellow"))
    return out + oracle_notices(summary, prefix)


def print_notices(notices: Iterable[Notice], *, file: TextIO | None = None) -> None:
    """Prints notes (text, style) to stderr: coloured on a terminal, plain elsewhere, each
    clipped to :data:`NOTE_LIMIT` characters, never read as markup nor highlighted."""
    items = list(notices)
    if not items:
        return
    from rich.console import Console  # deferred: rich
    from rich.text import Text  # deferred: rich

    stream = file if file is not None else sys.stderr
    console = Console(file=stream, highlight=False, soft_wrap=True)
    for text, style in items:
        console.print(Text(clip(text, NOTE_LIMIT), style=style))
