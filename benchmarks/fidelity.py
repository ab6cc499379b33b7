"""Reads the official R2R scorer's printed summaries and compares them with vlneval's.

The official ``tasks/R2R/eval.py`` prints, for each file, its path and then the summary dict
with ``pprint`` (numpy 2 writes its scalars as ``np.float64(8.23)``, numpy 1 as ``8.23``).

>>> text = "\\nruns/a.json\\n{   'length': np.float64(8.5),\\n    'success_rate': 0.25}\\n"
>>> parse_official_output(text)
[('runs/a.json', {'TL': 8.5, 'SR': 0.25})]
>>> rows = compare({"TL": 8.5, "SR": 0.25}, {"TL": 8.5, "SR": 0.2500001, "nDTW": 0.4})
>>> [(r.label, r.equal) for r in rows]
[('TL', True), ('SR', False)]
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = ["OFFICIAL_LABELS", "TOLERANCE", "MetricDiff", "compare", "parse_official_output"]

# The official summary keys and the metric labels of spec/benchmarks.md, in table order.
OFFICIAL_LABELS = {
    "length": "TL",
    "nav_error": "NE",
    "oracle success_rate": "OSR",
    "success_rate": "SR",
    "spl": "SPL",
}
TOLERANCE = 1e-9  # absolute; both sides sum the same floats, possibly in another order

_BLOCK = re.compile(r"^(?![{\s])(.+)\n(\{[^{}]*\})", re.MULTILINE)
_ITEM = re.compile(r"'([^']+)':\s*(?:np\.float\d*\()?\s*([-+]?(?:[0-9.]+(?:e[-+]?\d+)?|nan|inf))")


def parse_official_output(text: str) -> list[tuple[str, dict[str, float]]]:
    """Each printed ``(path, summary)`` of the official script, summary keyed by metric label.

    Keys the script does not print for R2R are ignored; a block without any known key is
    skipped.
    """
    found = []
    for match in _BLOCK.finditer(text):
        values = {
            OFFICIAL_LABELS[key]: float(number)
            for key, number in _ITEM.findall(match.group(2))
            if key in OFFICIAL_LABELS
        }
        if values:
            ordered = {
                label: values[label] for label in OFFICIAL_LABELS.values() if label in values
            }
            found.append((match.group(1).strip(), ordered))
    return found


@dataclass(frozen=True)
class MetricDiff:
    """One metric of one file: the official value, vlneval's, and whether they agree."""

    label: str
    official: float
    vlneval: float | None

    @property
    def difference(self) -> float:
        """``vlneval - official`` (NaN when vlneval has no value)."""
        return math.nan if self.vlneval is None else self.vlneval - self.official

    @property
    def equal(self) -> bool:
        """Within :data:`TOLERANCE` (absolute)."""
        return abs(self.difference) <= TOLERANCE


def compare(official: dict[str, float], vlneval: dict[str, float | None]) -> list[MetricDiff]:
    """The official metrics beside vlneval's (labels the official prints only)."""
    return [MetricDiff(label, value, vlneval.get(label)) for label, value in official.items()]
