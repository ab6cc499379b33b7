"""A small bounded load test on loopback: 8 concurrent clients, 40 submissions, 2 workers.

Every accepted submission is scored exactly once (one claim, one result) and none is lost; the
full-size run (20 clients, 200 real R2R files) is ``benchmarks/bench_server.py``.
"""

from __future__ import annotations

import pytest

from tests.server.conftest import fresh_pg_database
from tests.server.helpers import DEMO_PREDICTIONS, encode, stop_predictions
from tests.server.live import free_port
from tests.server.load import Load, drain, setup, start_server, stop_server, upload, verify
from vlneval.evaluation import evaluate


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_concurrent_clients_every_submission_scored_once(request, tmp_path, backend):
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'load.sqlite3'}"
    else:
        url = fresh_pg_database(request.getfixturevalue("pg_server"))
    stop = tmp_path / "stop.json"
    stop.write_bytes(encode(stop_predictions()))
    short = tmp_path / "short.json"
    short.write_bytes(encode(stop_predictions()[:-1]))
    expected = {
        DEMO_PREDICTIONS.name: evaluate("demo", None, DEMO_PREDICTIONS).metrics,
        stop.name: evaluate("demo", None, stop).metrics,
        short.name: None,  # refused by the scorer: failed once, with messages
    }
    files = [(p.name, p) for p in (DEMO_PREDICTIONS, stop, short)]
    load = Load(files, expected, n_clients=8, n_submissions=40, timeout=120)
    tokens = setup(url, 8, {"task": "demo"})
    proc = start_server(tmp_path / "data", url, 2, free_port())
    try:
        out = upload(f"http://127.0.0.1:{proc.args[5]}", tokens, load)  # type: ignore[index]
        assert out.refused == [] and len(out.accepted) == 40
        drain(url, out, load.timeout)
    finally:
        stop_server(proc)
    figures = verify(url, out, load)
    assert figures["finished"] == 27 and figures["failed_invalid"] == 13
