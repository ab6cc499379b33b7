"""Touchdown: street navigation in Manhattan (TC, SPD, SED) and spatial description resolution.

``format.py`` reads the routes and both kinds of predictions, ``profiles.py`` holds the street
profiles, ``score.py`` scores navigation (``touchdown``) and SDR (``touchdown-sdr``).
"""

from __future__ import annotations

from vlneval.tasks.base import Option, Task

__all__ = ["TASK", "SDR", "DATA_VERSION", "DATA_VERSIONS"]

#: Releases of the route files: name -> file name pattern under ``<root>/touchdown``.
DATA_VERSIONS = {
    "original": "data/{split}.json",
    "unseen": "touchdown_unseen_split/{split}.json",
}
DATA_VERSION = Option(
    "data_version",
    "Touchdown route release: original or unseen (default: the first present)",
    tuple(DATA_VERSIONS),
    label="Touchdown data version",
)
PROFILES = ("touchdown", "touchdown-wrap", "touchdown-vlnt")
SPLITS = ("train", "dev", "test")


def _task(
    name: str,
    description: str,
    scorer: str,
    metrics: tuple[str, ...],
    street_routes: str = "",
    *,
    summaries: bool = False,
) -> Task:
    """A Touchdown task: the same routes, profiles and splits; its own scorer and ``metrics``
    (the first ranks). Navigation skips summary records on request; SDR cannot (its records
    are all scalars, as a summary's)."""
    return Task(
        name, description, "touchdown", PROFILES, "touchdown", tuple(DATA_VERSIONS.values()),
        "vlneval.tasks.touchdown.format:load_touchdown", SPLITS, "dev", scorer,
        options=(DATA_VERSION,), street_routes=street_routes, summary_records=summaries,
        version_files=tuple(DATA_VERSIONS.items()),
        release_lead="no touchdown {split} routes ({version}) found",
        public_copy="vlneval.tasks.touchdown.public:public_touchdown",
        metrics=metrics, primary_metric=metrics[0],
    )  # fmt: skip


TASK = _task(
    "touchdown",
    "Touchdown (Chen et al. 2019): follow street directions in Manhattan (TC, SPD, SED)",
    "vlneval.tasks.touchdown.score:TouchdownScorer",
    ("TC", "SPD", "SED"),
    street_routes="vlneval.tasks.touchdown.score:open_routes",
    summaries=True,
)
SDR = _task(
    "touchdown-sdr",
    "Touchdown SDR (Chen et al. 2019): locate the bear on the panorama (pixel accuracy)",
    "vlneval.tasks.touchdown.score:SDRScorer",
    ("SDR@40", "SDR@80", "SDR@120", "SDR_dist"),
)
