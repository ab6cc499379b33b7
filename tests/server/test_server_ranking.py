"""A leaderboard ranks by its primary metric's declared direction: lowest NE first."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from tests.server.helpers import DEMO_PREDICTIONS, encode, stop_predictions  # noqa: E402
from vlneval.metrics import metric_info  # noqa: E402
from vlneval.server.services import admin  # noqa: E402


@pytest.mark.parametrize("metric", ["NE", "SR"])
def test_leaderboard_follows_the_metric_direction(sqlite_server, metric: str) -> None:
    server = sqlite_server
    admin.create_phase(server.db, "demo", "by-metric", task="demo", primary_metric=metric)
    phase = server.client.get("/api/v1/challenges/demo/phases/by-metric").json()
    assert phase["primary_metric"] == metric
    assert phase["higher_is_better"] is metric_info(metric).higher_is_better
    good, stop = DEMO_PREDICTIONS.read_bytes(), encode(stop_predictions())
    for token, data in ((server.alpha, good), (server.beta, stop)):
        assert server.submit(token, data, phase="by-metric").status_code == 202
    server.work()
    url = "/api/v1/challenges/demo/phases/by-metric/leaderboard"
    entries = server.client.get(url).json()["entries"]
    values = [e["primary_value"] for e in entries]
    assert [e["team"] for e in entries] == ["alpha", "beta"]  # the demo agents beat stopping
    assert values == sorted(values, reverse=metric_info(metric).higher_is_better)
    assert values[0] != values[1]
