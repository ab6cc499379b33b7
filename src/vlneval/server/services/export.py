"""A leaderboard as a table, CSV or JSON: every metric of the phase, numbers as the pages show.

The same export backs ``vlneval admin leaderboard --format table|csv|json`` and
``GET /api/v1/challenges/{c}/phases/{p}/leaderboard?format=csv|json``. JSON is a list of
entries (section, rank, team, method, url, description, time, every metric, its 95 % interval,
episodes, flag, privileged, protocol fields); CSV has one column per metric and two per interval
(``SPL_low``, ``SPL_high``). A text cell that a spreadsheet would run as a formula is written
with a leading ``'``.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from vlneval.reports.terminal import format_value
from vlneval.server.models import Phase
from vlneval.server.services.formats import FORMATS
from vlneval.server.services.leaderboard import Entry, public_entry
from vlneval.tasks import get_task
from vlneval.tasks.profiles import get_profile

__all__ = ["FORMATS", "phase_metrics", "export_rows", "to_csv", "to_json", "to_table"]

FIELDS = ("section", "rank", "team", "method", "url", "description", "submitted_at")
TAIL = ("n_episodes", "privileged", "flag", "profile", "observations", "action_space", "map")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def phase_metrics(phase: Phase) -> list[str]:
    """Every metric the phase's task reports under its profile, in the profile's order."""
    return list(get_task(phase.task).metric_labels(get_profile(phase.profile)))


def export_rows(entries: list[Entry], phase: Phase) -> list[dict[str, Any]]:
    """The public rows of ``entries`` (JSON-ready: times as ISO 8601 UTC)."""
    out = []
    metrics = phase_metrics(phase)
    for e in entries:
        row = public_entry(e, phase.primary_metric)
        row["submitted_at"] = e.submitted_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        row["metrics"] = {m: row["metrics"].get(m) for m in metrics}
        out.append(row)
    return out


def to_json(rows: list[dict[str, Any]]) -> str:
    """The rows as a JSON list."""
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def _cell(value: Any) -> Any:
    if isinstance(value, str) and value.startswith(FORMULA):
        return "'" + value
    return "" if value is None else value


def to_csv(rows: list[dict[str, Any]], metrics: list[str]) -> str:
    """The rows as CSV, one column per metric and two per interval."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = [*FIELDS, *metrics, *(f"{m}_{end}" for m in metrics for end in ("low", "high"))]
    w.writerow([*header, *TAIL])
    for r in rows:
        ci = r["intervals"]
        values = [r["metrics"].get(m) for m in metrics]
        bounds = [(ci.get(m) or [None, None])[k] for m in metrics for k in (0, 1)]
        tail = [r["n_episodes"], r["privileged"], r["flag"]]
        tail += [r["protocol"].get(k) for k in TAIL[3:]]
        w.writerow([_cell(v) for v in [*(r[f] for f in FIELDS), *values, *bounds, *tail]])
    return buf.getvalue()


def to_table(rows: list[dict[str, Any]], metrics: list[str]) -> str:
    """The rows as a terminal table: every metric as the pages show it (rates in %)."""
    head = f"{'#':>4}  {'team':20s} {'method':20s}" + "".join(f" {m:>8s}" for m in metrics)
    lines = [head + "  notes"]
    for r in rows:
        mark = {"baseline": "  B", "privileged": "  P"}.get(r["section"], "")
        num = f"{mark}{'' if r['rank'] is None else r['rank']}".strip() or "-"
        cells = "".join(f" {format_value(m, r['metrics'].get(m)):>8s}" for m in metrics)
        notes = [r["section"]] if r["section"] != "ranked" else []
        notes += [f"flagged: {r['flag']}"] if r["flag"] else []
        lines.append(
            f"{num:>4}  {r['team'][:20]:20s} {r['method'][:20]:20s}{cells}  {'; '.join(notes)}"
        )
    return "\n".join(lines) + "\n"
