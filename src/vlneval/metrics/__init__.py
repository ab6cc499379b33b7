"""Pure metric kernels: node-index arrays and a distance table in, numbers out.

Single-episode functions validate their arguments and return a float; :func:`score_batch` scores
many packed episodes in one vectorised pass. Both run the same numpy cores (``_kernels``);
nothing here imports numba or scipy.

Metric metadata (label, per-episode column, unit, direction, description) lives in one table,
:mod:`vlneval.metrics.info`: ``LABELS`` maps every summary label to its :class:`MetricInfo` and
:func:`metric_info` looks one up (suggesting the closest label for a typo). ``METRICS`` maps the
function name of each single-episode function below to its entry of that table.

Example:
    >>> from vlneval.metrics import METRICS, metric_info
    >>> METRICS["ndtw"].label, METRICS["navigation_error"].higher_is_better
    ('nDTW', False)
    >>> metric_info("SPD").direction, metric_info("SED").direction
    ('lower', 'higher')
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from vlneval.metrics import fidelity as _fidelity
from vlneval.metrics import goal as _goal
from vlneval.metrics import path as _path
from vlneval.metrics._info import MetricInfo
from vlneval.metrics.batch import COLUMN_METRIC, COLUMNS, score_batch
from vlneval.metrics.fidelity import cls, collapse_repeats, dtw, ndtw, sdtw
from vlneval.metrics.goal import navigation_error, oracle_error, oracle_success, success
from vlneval.metrics.info import LABELS, metric_info
from vlneval.metrics.path import path_length, spl

__all__ = [
    "METRICS",
    "LABELS",
    "MetricInfo",
    "metric_info",
    "navigation_error",
    "oracle_error",
    "success",
    "oracle_success",
    "path_length",
    "spl",
    "collapse_repeats",
    "dtw",
    "ndtw",
    "sdtw",
    "cls",
    "score_batch",
    "COLUMNS",
    "COLUMN_METRIC",
]

#: Function name -> its entry of ``LABELS``, for every single-episode metric function above.
METRICS: Mapping[str, MetricInfo] = MappingProxyType(
    {info.name: info for info in (*_goal.INFO, *_path.INFO, *_fidelity.INFO)}
)
