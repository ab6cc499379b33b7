"""Remote agents in the continuous environments (``--agent http://...`` on r2r-twin): the
bytes and card of the in-process agent, commands (arrays) over the wire, every session ended."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vlneval.agents.registry import get_agent
from vlneval.agents.remote_server import AgentServer
from vlneval.cli.main import main
from vlneval.cli.serve_agent import in_space


def vlneval(*args: Any) -> int:
    return main([str(a) for a in args])


@pytest.fixture(scope="module")
def episodes(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three R2R val_unseen paths (nine instructions) of the r2r-twin task."""
    split = json.loads(gzip.decompress((data_root / "r2r/R2R_val_unseen.json.gz").read_bytes()))
    path = tmp_path_factory.mktemp("ce") / "eps.json"
    path.write_text(json.dumps(split[:3]))
    return path


@pytest.fixture
def served() -> Iterator[Any]:
    """``served(agent info)``: a running server of that agent on loopback."""
    servers: list[Any] = []

    def start(info: Any) -> AgentServer:
        server = AgentServer(info, host="127.0.0.1", port=0)
        ctx = server.running()
        ctx.__enter__()
        servers.append(ctx)
        return server

    yield start
    for ctx in servers:
        ctx.__exit__(None, None, None)


def _run(data_root: Path, episodes: Path, out: Path, agent: str, *extra: Any) -> int:
    return vlneval("run", "--task", "r2r-twin", "--data-root", data_root, "--episodes", episodes,
                   "--agent", agent, "--out", out, "--quiet", *extra)  # fmt: skip


def _card(out: Path) -> dict[str, Any]:
    card = json.loads(out.with_name(out.name.replace(".json", ".protocol.json")).read_text())
    card.pop("shards", None)
    return card


def test_a_remote_continuous_agent_gives_the_bytes_of_the_in_process_agent(
    served: Any, data_root: Path, episodes: Path, tmp_path: Path
) -> None:
    server = served(get_agent("continuous-random"))
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    assert _run(data_root, episodes, local, "random") == 0
    assert _run(data_root, episodes, remote, server.url) == 0
    assert remote.read_bytes() == local.read_bytes()
    card = _card(remote)
    assert card.pop("remote_agent") == {"url": server.url, "id": "continuous-random-v1",
                                        "protocol": "vlneval-agent-v1"}  # fmt: skip
    assert card == _card(local)  # the served agent's card fields included
    assert not server._sessions  # every episode's session was ended with /finish
    # the shards of a remote run merge into the same bytes
    shards = tmp_path / "shards"
    shards.mkdir()
    for i in range(2):
        assert _run(data_root, episodes, shards / "p.json", server.url, "--shard", f"{i}/2") == 0
    assert vlneval("merge", shards, "--out", shards / "merged.json") == 0
    assert (shards / "merged.json").read_bytes() == local.read_bytes()
    assert not server._sessions


def test_velocity_commands_cross_the_wire(
    served: Any, data_root: Path, episodes: Path, tmp_path: Path
) -> None:
    # what `vlneval serve-agent --agent continuous-random --action-space velocity` serves
    server = served(in_space(get_agent("continuous-random"), "velocity"))
    env = ("--env", "continuous-velocity")
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    assert _run(data_root, episodes, local, "random", *env) == 0
    assert _run(data_root, episodes, remote, server.url, *env) == 0
    assert remote.read_bytes() == local.read_bytes()
    card = _card(remote)
    assert card["action_space"]["name"] == "velocity" and card["measured"]["clipped_commands"] == 0
    card.pop("remote_agent")
    assert card == _card(local)


def test_a_remote_agent_of_other_action_spaces_is_refused(
    served: Any, data_root: Path, episodes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = served(get_agent("random"))  # a graph agent: panoramic and egocentric
    assert _run(data_root, episodes, tmp_path / "p.json", server.url) == 2
    err = capsys.readouterr().err
    assert f"remote agent {server.url}: it serves the " in err
    assert "not this environment's r2r-ce" in err
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("shard", [(), ("--shard", "0/1")])
def test_a_failing_remote_continuous_agent_is_named_by_its_url(
    served: Any,
    data_root: Path,
    episodes: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    shard: tuple[str, ...],
) -> None:
    # as in a graph run (tests/cli/test_run_agent_errors.py): the URL given, not the client class
    server = served(get_agent("tests.agents.remote_agents:BrokenContinuous"))
    out = tmp_path / "p.json"
    assert _run(data_root, episodes, out, server.url, *shard) == 2
    lines = capsys.readouterr().err.splitlines()
    first = json.loads(episodes.read_text())[0]
    assert lines[0].startswith(
        f"error: agent {server.url}: act() at episode {first['path_id']}_0, step 0: "
    )
    assert lines[0].endswith(
        "HTTP 500: agent tests.agents.remote_agents:BrokenContinuous: act() raised ValueError: "
        "boom at step 0"
    )
    assert "RemoteAgent" not in lines[0]
