"""Remote agents over HTTP on loopback: the same bytes as the in-process agent, only observation
fields on the wire, and clear errors when the server fails."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents import remote_agents
from vlneval.agents.registry import get_agent
from vlneval.agents.remote import (
    RemoteAgent,
    RemoteAgentError,
    decode_observation,
    encode_observation,
    remote_agent_info,
)
from vlneval.agents.remote_server import AgentServer
from vlneval.agents.rollout import episode_rng
from vlneval.cli.main import main
from vlneval.errors import VLNEvalError

ROOT = Path(__file__).resolve().parents[2]


def vlneval(*args: Any) -> int:
    return main([str(a) for a in args])


class RecordingServer(AgentServer):
    """Keeps the body of every request."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.bodies: list[tuple[str, dict[str, Any]]] = []

    def handle(self, path: str, body: Any) -> dict[str, Any]:
        self.bodies.append((path, json.loads(json.dumps(body))))
        return super().handle(path, body)


@pytest.fixture
def serve() -> Iterator[Any]:
    """``serve(agent spec)``: a server of that agent on 127.0.0.1 and an ephemeral port."""
    servers: list[AgentServer] = []

    def start(spec: str, cls: type[AgentServer] = AgentServer) -> AgentServer:
        server = cls(get_agent(spec), host="127.0.0.1", port=0)
        servers.append(server)
        server._ctx = server.running()  # type: ignore[attr-defined]
        server._ctx.__enter__()  # type: ignore[attr-defined]
        return server

    yield start
    for s in servers:
        s._ctx.__exit__(None, None, None)  # type: ignore[attr-defined]


def _run(out: Path, agent: str, *extra: Any) -> int:
    return vlneval("run", "--task", "demo", "--agent", agent, "--out", out, "--quiet", *extra)


@pytest.mark.parametrize(
    ("agent", "extra"), [("random", ()), ("random-walk", ("--batch-size", "4"))]
)
def test_http_agent_gives_the_bytes_of_the_in_process_agent(serve: Any, tmp_path: Path,
                                                            agent: str, extra: tuple[str, ...]) -> None:  # fmt: skip
    server = serve(agent)
    assert _run(tmp_path / "local.json", agent, *extra) == 0
    assert _run(tmp_path / "remote.json", server.url, *extra) == 0
    assert (tmp_path / "remote.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    card = json.loads((tmp_path / "remote.protocol.json").read_text())
    assert card["agent"]["id"] == server.url
    assert card["remote_agent"]["id"] == get_agent(agent).id


def test_objects_and_finish_fields_cross_the_wire(serve: Any, data_root: Path,
                                                  tmp_path: Path) -> None:  # fmt: skip
    server = serve("random-walk")
    args = ("--task", "reverie", "--split", "val_unseen", "--data-root", data_root, "--limit", "30",
            "--quiet")  # fmt: skip
    assert vlneval("run", *args, "--agent", "random-walk", "--out", tmp_path / "l.json") == 0
    assert vlneval("run", *args, "--agent", server.url, "--out", tmp_path / "r.json") == 0
    assert (tmp_path / "r.json").read_bytes() == (tmp_path / "l.json").read_bytes()
    assert b"predObjId" in (tmp_path / "r.json").read_bytes()


#: Every key a request of the demo task may hold, at any depth.
WIRE_KEYS = {
    "protocol", "session", "seq", "observation", "rng", "entropy", "spawn_key", "seed",
    "instruction", "scan", "viewpoint", "heading", "elevation", "view_index", "step",
    "candidates", "rel_heading", "rel_elevation", "distance",
}  # fmt: skip


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_only_observation_fields_cross_the_wire(serve: Any, tmp_path: Path) -> None:
    from vlneval.envs.loading import load_episodes

    spec = "tests.agents.remote_agents:Recording"
    remote_agents.SEEN.clear()
    assert _run(tmp_path / "local.json", spec) == 0
    seen = [encode_observation(o) for o in remote_agents.SEEN]
    server = serve(spec, RecordingServer)
    assert _run(tmp_path / "remote.json", server.url) == 0
    bodies = server.bodies
    # the wire carries exactly the observations the in-process agent gets, in order
    assert [b["observation"] for _, b in bodies] == seen
    assert _keys([b for _, b in bodies]) == WIRE_KEYS
    # no hidden field: no episode id, goal or reference path beyond what was observable
    episodes, _ = load_episodes("demo")
    text = json.dumps([b for _, b in bodies])
    assert not any(f'"{eid}"' in text for eid in episodes.ids)
    observable = {c["viewpoint"] for _, b in bodies for c in b["observation"]["candidates"]}
    hidden = {vp for path in episodes.paths for vp in path} - observable
    assert hidden and not any(f'"{vp}"' in text for vp in hidden)
    # the seed is the episode's: run seed 0, spawn key = global index
    resets = [b for p, b in bodies if p == "/reset"]
    assert [r["rng"]["spawn_key"] for r in resets] == [[i] for i in range(36)]
    assert {r["rng"]["entropy"] for r in resets} == {0}
    assert {p for p, _ in bodies} == {"/reset", "/act", "/finish"}


def test_server_errors_and_timeouts_name_the_url(serve: Any, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    broken = serve("tests.agents.remote_agents:Broken")
    assert _run(tmp_path / "a.json", broken.url) == 2
    err = capsys.readouterr().err
    assert f"remote agent {broken.url}/act (session " in err
    assert (
        "HTTP 500: agent tests.agents.remote_agents:Broken: act() raised ValueError: boom at step 0"
        in err
    )
    slow = serve("tests.agents.remote_agents:Slow")
    code = _run(tmp_path / "b.json", slow.url, "--agent-arg", "timeout=0.3",
                "--agent-arg", "retries=1")  # fmt: skip
    assert code == 2
    assert f"remote agent {slow.url}/act" in (err := capsys.readouterr().err)
    assert "no answer within 0.3 s after 2 attempts" in err
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    assert _run(tmp_path / "c.json", url, "--agent-arg", "retries=0") == 2
    assert (
        f"remote agent {url}/info: cannot connect (ConnectionRefusedError"
        in capsys.readouterr().err
    )


def test_retried_requests_do_not_step_the_agent_twice() -> None:
    server = AgentServer(get_agent("tests.agents.remote_agents:Recording"), port=0)
    try:
        obs = {"instruction": "go", "step": 0, "candidates": [["a", 0.0, 0.0, 0.0, 12]]}
        rng = {"entropy": 0, "spawn_key": [3], "seed": 1}
        remote_agents.SEEN.clear()
        for _ in range(2):
            assert (
                server.handle("/reset", {"session": "s", "seq": 0, "observation": obs, "rng": rng})
                == {}
            )
        first = server.handle("/act", {"session": "s", "seq": 1, "observation": obs})
        assert server.handle("/act", {"session": "s", "seq": 1, "observation": obs}) == first
        assert len(remote_agents.SEEN) == 2  # one reset, one act
        with pytest.raises(Exception, match="request 5 after 1"):
            server.handle("/act", {"session": "s", "seq": 5, "observation": obs})
        server.handle("/finish", {"session": "s", "seq": 2, "observation": obs})
        with pytest.raises(Exception, match="unknown session 's'"):
            server.handle("/act", {"session": "s", "seq": 3, "observation": obs})
    finally:
        server.httpd.server_close()


def test_privileged_agents_are_never_served() -> None:
    with pytest.raises(VLNEvalError, match="privileged: its teacher and goals never cross"):
        AgentServer(get_agent("shortest"), port=0)


def test_wire_form_round_trips_what_the_agent_sees() -> None:
    from vlneval.envs.graph.env import GraphNavEnv
    from vlneval.envs.loading import load_episodes

    episodes, graphs = load_episodes("demo")
    env = GraphNavEnv(episodes, graphs)
    obs, _ = env.reset(options={"episode": 0})
    wire = json.loads(json.dumps(encode_observation(obs)))
    assert decode_observation(wire) == obs
    with pytest.raises(RemoteAgentError, match="used before reset"):
        rng = episode_rng(0, 1)
        rng.random()
        RemoteAgent("http://127.0.0.1:9").reset(obs, rng=rng)
    with pytest.raises(RemoteAgentError, match="expected http://host:port"):
        remote_agent_info("ftp://x")


def test_serve_agent_command(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "vlneval", "serve-agent", "--agent", "random",
                             "--port", "0"], cwd=ROOT, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = line.split(" on ", 1)[1].split(" ", 1)[0]
        assert url.startswith("http://127.0.0.1:")
        assert _run(tmp_path / "r.json", url) == 0 and _run(tmp_path / "l.json", "random") == 0
        assert (tmp_path / "r.json").read_bytes() == (tmp_path / "l.json").read_bytes()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert vlneval("serve-agent", "--agent", "shortest", "--port", "0") == 2
