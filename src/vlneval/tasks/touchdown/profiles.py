"""Touchdown profiles: success in hops on the street graph, SED and SDR rules."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from vlneval.tasks.profiles import Profile

__all__ = ["StreetProfile", "TOUCHDOWN", "TOUCHDOWN_WRAP", "TOUCHDOWN_VLNT"]


@dataclass(frozen=True)
class StreetProfile(Profile):
    """A Touchdown profile: success in hops on the street graph, and its SED and SDR rules.

    Attributes:
        success_metric: ``SPD``, the hops from the goal that TC compares with the threshold.
        edit_distance: ``levenshtein`` or ``osa`` (optimal string alignment) for SED.
        sdr_wrap: SDR distances wrap around the panorama's 360° seam.
        sdr_frame: (width, height) in pixels of the panorama SDR coordinates are given in.
    """

    threshold_unit: ClassVar[str] = "hops"
    success_metric: str | None = "SPD"
    edit_distance: str = "levenshtein"
    sdr_wrap: bool = False
    sdr_frame: tuple[float, float] = (3680.0, 800.0)

    @property
    def comparison(self) -> str:
        """TC's rule as text."""
        return f"SPD <= {self.threshold:g} hop (the goal or a neighbour)"


_TD_NOTES = (
    "street graph from links.txt, undirected, distances in hops",
    "TC: the final panorama is the goal or one hop from it (SPD <= 1)",
    "SDR: Euclidean distance in a 3680 x 800 px panorama; accuracy at 40/80/120 px strict (<)",
    "SDR as predict_baselines in lil-lab/touchdown sdr/predict.py (commit 5aeb42d, removed in "
    "ba9dad8); its model scores (predict, and sdr/train.py's distance_metric today) measure "
    "between the argmax cells of 1/8-resolution heatmaps (margins 5/10/15 cells, mean distance "
    "x 8): the two agree only for points on that 8 px grid",
)
_TD_SED = (
    "SED = TC * (1 - lev(P, R) / max(|P|, |R|)), lev the Levenshtein distance, with consecutive "
    "repeats removed"
)
TOUCHDOWN = StreetProfile(
    "touchdown",
    "1",
    "Touchdown (Chen et al. 2019) metric definitions; SDR as lil-lab/touchdown sdr/predict.py "
    "at commit 5aeb42d (the file was removed in ba9dad8)",
    threshold=1.0,
    success_inclusive=True,
    metrics=("TC", "SPD", "SED", "SDR@40", "SDR@80", "SDR@120", "SDR_dist"),
    distance="street-graph hops (undirected links)",
    notes=(
        *_TD_NOTES,
        _TD_SED,
        "SDR: the 360° wrap is NOT handled (as the official code)",
        "a move must follow a link; every route needs a prediction",
    ),
)
TOUCHDOWN_WRAP = replace(
    TOUCHDOWN,
    name="touchdown-wrap",
    reproduces="Touchdown as profile touchdown, with SDR distances wrapped at 360° (a fix, not the code)",
    sdr_wrap=True,
    notes=(
        *_TD_NOTES,
        _TD_SED,
        "FIX: SDR's horizontal distance wraps around the 360° seam (min(|dx|, width - |dx|))",
    ),
)
TOUCHDOWN_VLNT = replace(
    TOUCHDOWN,
    name="touchdown-vlnt",
    version="2",
    reproduces="VegB/VLN-Transformer touchdown/env.py _eva_metrics (also raphael-sch/map2seq_vln vln/env.py)",
    check_adjacency=False,
    collapse_repeats=False,
    edit_distance="osa",
    notes=(
        *_TD_NOTES,
        "SED = TC * (1 - osa(P, R) / max(|P|, |R|)) on the panoramas as written: repeats are NOT "
        "removed, as the scripts (their rollouts never write one; a file that logs the stop step "
        "scores lower)",
        "osa: pyxdameraulevenshtein's optimal string alignment distance (a swap of two "
        "adjacent panoramas costs 1)",
        "no link check (the scripts score their own rollouts); every route needs a prediction",
        "SDR: the 360° wrap is not handled",
    ),
)
