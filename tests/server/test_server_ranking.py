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


def test_each_task_ranks_by_its_benchmark_s_metric() -> None:
    """The default is the task's: SDR@40 for touchdown-sdr, RGSPL for REVERIE, GP for NDH."""
    got = {
        task: admin.primary_metric_of(task, profile, None)
        for task, profile in [
            ("touchdown-sdr", "touchdown"), ("touchdown", "touchdown"), ("reverie", "reverie"),
            ("ndh", "cvdn"), ("rxr", "rxr"), ("r2r", "r2r"), ("r4r", "r4r"), ("soon", "soon"),
        ]
    }  # fmt: skip
    assert got == {
        "touchdown-sdr": ("SDR@40", True), "touchdown": ("TC", True), "reverie": ("RGSPL", True),
        "ndh": ("GP", True), "rxr": ("nDTW", True), "r2r": ("SPL", True), "r4r": ("SPL", True),
        "soon": ("SPL", True),
    }  # fmt: skip


def test_a_metric_the_task_does_not_produce_is_refused() -> None:
    from vlneval.errors import UnknownNameError

    with pytest.raises(UnknownNameError) as exc:
        admin.primary_metric_of("touchdown-sdr", "touchdown", "TC")
    assert str(exc.value) == (
        "unknown metric of task touchdown-sdr 'TC' (known: SDR@120, SDR@40, SDR@80, SDR_dist)"
    )
    with pytest.raises(UnknownNameError) as exc:
        admin.primary_metric_of("touchdown", "touchdown", "SDR@40")
    assert str(exc.value).endswith("(known: SED, SPD, TC)")


def test_a_touchdown_sdr_phase_lists_and_ranks_its_own_metrics(sqlite_server, tmp_path) -> None:
    from tests.tasks.touchdown.fixture import make_root

    server = sqlite_server
    root = make_root(tmp_path / "root")
    for slug, task in (("sdr", "touchdown-sdr"), ("nav", "touchdown")):
        admin.create_phase(server.db, "demo", slug, task=task, split="dev", data_root=str(root),
                           graphs=str(root / "touchdown" / "graph"))  # fmt: skip
    sdr = server.client.get("/api/v1/challenges/demo/phases/sdr").json()
    assert (sdr["primary_metric"], sdr["higher_is_better"]) == ("SDR@40", True)
    assert sdr["metrics"] == ["SDR@40", "SDR@80", "SDR@120", "SDR_dist"]
    nav = server.client.get("/api/v1/challenges/demo/phases/nav").json()
    assert (nav["primary_metric"], nav["metrics"]) == ("TC", ["TC", "SPD", "SED"])


def test_a_stored_primary_metric_stays_as_stored(sqlite_server) -> None:
    """A phase made before the task's default changed keeps ranking by what it stored."""
    from vlneval.server.models import Phase

    server = sqlite_server
    admin.create_phase(server.db, "demo", "old", task="demo")
    with server.db.write() as s:
        s.query(Phase).filter(Phase.slug == "old").one().primary_metric = "NE"
    phase = server.client.get("/api/v1/challenges/demo/phases/old").json()
    assert phase["primary_metric"] == "NE"


def test_a_stored_phase_ranked_by_a_metric_its_task_lacks_is_repaired_on_start(
    sqlite_server, tmp_path, caplog
) -> None:
    """A touchdown-sdr phase made when phases ranked by TC: its board was empty; a start of
    the server ranks it by SDR@40, in the database itself, and a second start changes nothing."""
    from fastapi.testclient import TestClient

    from tests.tasks.touchdown.fixture import make_root
    from vlneval.server.app import create_app
    from vlneval.server.models import Phase, Result

    server = sqlite_server
    root = make_root(tmp_path / "root")
    admin.create_phase(server.db, "demo", "sdr", task="touchdown-sdr", split="dev",
                       data_root=str(root), graphs=str(root / "touchdown" / "graph"))  # fmt: skip
    admin.create_phase(server.db, "demo", "old", task="demo", primary_metric="NE")
    pairs = [(r, p) for r in (1, 2, 3) for p in ("main", "pre", "post")]
    full = [{"route_id": r, "pano": p, "x": 1840.0, "y": 400.0} for r, p in pairs]
    assert server.submit(server.alpha, encode(full), phase="sdr").status_code == 202
    server.work()
    with server.db.write() as s:  # as such a phase was stored, and its result scored
        s.query(Phase).filter(Phase.slug == "sdr").one().primary_metric = "TC"
        [res] = s.query(Result).all()
        expected, res.primary_value = res.metrics["SDR@40"], None
    url = "/api/v1/challenges/demo/phases/sdr"
    assert server.client.get(f"{url}/leaderboard").json()["entries"] == []
    with caplog.at_level("INFO", logger="vlneval.server.services.admin"):
        TestClient(create_app(server.cfg)).close()
    assert [r.getMessage() for r in caplog.records if r.name.endswith("admin")] == [
        "phase demo/sdr: task touchdown-sdr reports no TC; it is ranked by SDR@40 now"
    ]
    with server.db.read() as s:  # stored so: the running server's own session sees it
        phases = {p.slug: (p.primary_metric, p.higher_is_better) for p in s.query(Phase)}
        assert s.query(Result).one().primary_value == expected
    assert phases == {"val": ("SPL", True), "sdr": ("SDR@40", True), "old": ("NE", False)}
    [entry] = server.client.get(f"{url}/leaderboard").json()["entries"]
    assert (entry["team"], entry["primary_value"]) == ("alpha", round(expected, 4))
    caplog.clear()
    with caplog.at_level("INFO", logger="vlneval.server.services.admin"):
        create_app(server.cfg)
    assert [r for r in caplog.records if r.name.endswith("admin")] == []
