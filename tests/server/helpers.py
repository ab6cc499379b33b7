"""Prediction files made from the demo benchmark, for the server tests."""

from __future__ import annotations

import copy
import json
from typing import Any

from vlneval.tasks.common.root import demo_root

DEMO_PREDICTIONS = demo_root() / "demo" / "predictions_val.json"
DEMO_EPISODES = demo_root() / "demo" / "DEMO_val.json"


def demo_predictions() -> list[dict[str, Any]]:
    """The demo predictions (a mix of agents; scored SPL 0.4708 by the demo profile)."""
    return json.loads(DEMO_PREDICTIONS.read_text())


def demo_episodes() -> list[dict[str, Any]]:
    """The demo episodes (with their reference paths: the hidden labels of the test phase)."""
    return json.loads(DEMO_EPISODES.read_text())


def stop_predictions() -> list[dict[str, Any]]:
    """Every episode answered with its start only (the stop agent)."""
    out = []
    for ep in demo_episodes():
        for k in range(len(ep["instructions"])):
            out.append(
                {
                    "instr_id": f"{ep['path_id']}_{k}",
                    "trajectory": [[ep["path"][0], ep["heading"], 0.0]],
                }
            )
    return out


def encode(records: Any) -> bytes:
    """JSON bytes of ``records``."""
    return json.dumps(records).encode()


def mutated(fn: Any) -> bytes:
    """The demo predictions changed by ``fn(records)``, as JSON bytes."""
    records = copy.deepcopy(demo_predictions())
    fn(records)
    return encode(records)


def hidden_values() -> tuple[set[str], set[str]]:
    """(labels, starts): reference-path viewpoints after the start and goals; start viewpoints."""
    labels, starts = set(), set()
    for ep in demo_episodes():
        starts.add(ep["path"][0])
        labels.update(ep["path"][1:])
    return labels - starts, starts


def login(client: Any, token: str) -> str:
    """Logs ``client`` (a TestClient) in with ``token``; returns the session cookie's value.

    The cookie is ``Secure`` off loopback (the TestClient's host is ``testserver``), so it is
    copied into the client's jar by hand, as a browser over HTTPS would keep it.
    """
    r = client.post("/login", data={"token": token, "next": "/submissions"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    sid = r.cookies.get("vlneval_session") or _cookie(r.headers.get("set-cookie", ""))
    client.cookies.set("vlneval_session", sid)
    return sid


def _cookie(header: str) -> str:
    return header.split(";", 1)[0].split("=", 1)[1]
