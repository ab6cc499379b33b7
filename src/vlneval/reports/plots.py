"""Plots for reports (matplotlib, imported only when a plot is drawn: the ``[plots]`` extra).

- :func:`plot_episode`: a top-down view of one episode on its navigation graph, one floor at a
  time (:mod:`vlneval.reports.plots_trajectory`);
- :func:`plot_error_ecdf`, :func:`plot_length_ratio`, :func:`plot_budget_curve`,
  :func:`plot_outcomes`: distributions over episodes, several runs overlaid;
- :func:`plot_comparison`: paired differences of two runs with their intervals.

Every function returns a ``matplotlib.figure.Figure``; :func:`figure_png` encodes it and
:func:`png_data_uri` makes it embeddable in HTML.

Example:
    >>> import numpy as np
    >>> from vlneval.reports.plots import figure_png, plot_error_ecdf
    >>> png = figure_png(plot_error_ecdf([("run", np.array([1.0, 4.0]))], threshold=3.0))
    >>> png.startswith(b"\\x89PNG")
    True
"""

from __future__ import annotations

from vlneval.reports.plots_base import figure_png, png_data_uri, require_matplotlib
from vlneval.reports.plots_compare import plot_comparison
from vlneval.reports.plots_distributions import (
    plot_budget_curve,
    plot_error_ecdf,
    plot_length_ratio,
    plot_outcomes,
)
from vlneval.reports.plots_trajectory import plot_episode

__all__ = [
    "figure_png",
    "plot_budget_curve",
    "plot_comparison",
    "plot_episode",
    "plot_error_ecdf",
    "plot_length_ratio",
    "plot_outcomes",
    "png_data_uri",
    "require_matplotlib",
]
