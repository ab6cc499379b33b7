"""The street loader finds route files as the Touchdown scorer does: it calls the task's own
route reader, and the scorer's releases are the task's declared ``data_version`` choices."""

from __future__ import annotations

from vlneval.registry import load_entry_point
from vlneval.tasks import get_task
from vlneval.tasks.touchdown.score import DATA_VERSIONS as SCORER_DATA_VERSIONS
from vlneval.tasks.touchdown.score import open_routes


def test_the_loader_and_the_scorer_know_the_same_releases() -> None:
    task = get_task("touchdown")
    assert load_entry_point(task.street_routes) is open_routes
    assert task.data_versions == tuple(SCORER_DATA_VERSIONS)
