"""The street loader finds route files as the Touchdown scorer does."""

from __future__ import annotations

from vlneval.envs.street.loading import DATA_VERSIONS
from vlneval.tasks.touchdown.score import DATA_VERSIONS as SCORER_DATA_VERSIONS


def test_the_loader_and_the_scorer_know_the_same_releases() -> None:
    assert DATA_VERSIONS == SCORER_DATA_VERSIONS
