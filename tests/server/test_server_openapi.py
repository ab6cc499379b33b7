"""Schemathesis against the OpenAPI document: generated requests find no server error.

Bounded: a fixed number of examples per operation, derandomised, in-process (ASGI).
"""

from __future__ import annotations

import os

import pytest

try:
    import schemathesis
except ImportError:  # pragma: no cover - CI installs it
    if os.environ.get("CI", "").lower() == "true":
        raise
    pytest.skip("schemathesis is not installed", allow_module_level=True)

from hypothesis import HealthCheck, settings  # noqa: E402

from tests.server.conftest import make_server  # noqa: E402
from tests.server.helpers import DEMO_PREDICTIONS  # noqa: E402

EXAMPLES = 40


@pytest.fixture(scope="module")
def api_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("openapi")
    srv = make_server(tmp, f"sqlite:///{tmp / 'db.sqlite3'}", "sqlite", max_pending_per_team=1000)
    uid = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes()).json()["id"]
    srv.work()
    srv.uid = uid
    yield srv
    srv.client.close()
    srv.db.dispose()


def _check_operation(operation, headers: dict[str, str]) -> None:
    from hypothesis import given
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    @given(operation.as_strategy())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def run(case) -> None:
        # positive_data_acceptance wants a 2xx for every schema-valid request; a valid slug that
        # names no challenge is rightly a 404, so that one check is left out.
        case.call_and_validate(headers=headers, excluded_checks=[positive_data_acceptance])

    run()


def test_generated_requests_find_no_server_error(api_server):
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", api_server.app)
    headers = {"Authorization": f"Bearer {api_server.alpha}"}
    failures = []
    n = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        n += 1
        try:
            _check_operation(operation, headers)
        except Exception as exc:  # noqa: BLE001 - collect every operation's failures
            failures.append(f"{operation.label}: {exc}"[:3000])
    assert n == 14
    assert failures == []


def test_the_document_describes_every_endpoint_and_its_auth(api_server):
    doc = api_server.client.get("/api/v1/openapi.json").json()
    paths = doc["paths"]
    assert set(paths) == {
        "/api/v1/health", "/api/v1/me", "/api/v1/challenges", "/api/v1/challenges/{challenge}",
        "/api/v1/challenges/{challenge}/phases/{phase}",
        "/api/v1/challenges/{challenge}/phases/{phase}/leaderboard",
        "/api/v1/challenges/{challenge}/phases/{phase}/quota",
        "/api/v1/challenges/{challenge}/phases/{phase}/submissions",
        "/api/v1/submissions", "/api/v1/submissions/{uid}",
        "/api/v1/challenges/{challenge}/phases/{phase}/entry",
        "/api/v1/submissions/{uid}/{action}",
        "/api/v1/admin/submissions/{uid}/moderation",
        "/api/v1/admin/challenges/{challenge}/phases/{phase}/leaderboard",
    }  # fmt: skip
    post = paths["/api/v1/challenges/{challenge}/phases/{phase}/submissions"]["post"]
    assert post["security"] == [{"HTTPBearer": []}]
    assert {"202", "401", "413", "422", "429"} <= set(post["responses"])
    mutating = [
        (p, m) for p, ops in paths.items() for m in ops if m in ("post", "put", "patch", "delete")
    ]
    assert all(paths[p][m].get("security") for p, m in mutating)
