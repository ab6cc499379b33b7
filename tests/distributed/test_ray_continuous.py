"""Continuous runs on Ray (the session's cluster): the bytes and card of a local run, shards
that merge with local shards, and a remote agent driven from the actors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.distributed.conftest import vlneval
from vlneval.agents.registry import get_agent
from vlneval.agents.remote_server import AgentServer
from vlneval.distributed import merge

# One Ray cluster per session: under pytest-xdist every Ray test runs on the same worker.
pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module")
def episodes(data_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three R2R val_unseen paths (nine instructions) of the r2r-twin task."""
    split = json.loads(gzip.decompress((data_root / "r2r/R2R_val_unseen.json.gz").read_bytes()))
    path = tmp_path_factory.mktemp("ce") / "eps.json"
    path.write_text(json.dumps(split[:3]))
    return path


def _run(data_root: Path, episodes: Path, out: Path, agent: str, *extra: Any) -> int:
    return vlneval("run", "--task", "r2r-twin", "--data-root", data_root, "--episodes", episodes,
                   "--agent", agent, "--out", out, "--quiet", *extra)  # fmt: skip


def _card(out: Path) -> dict[str, Any]:
    card = json.loads(out.with_name(out.name.replace(".json", ".protocol.json")).read_text())
    card.pop("shards", None)
    return card


@pytest.mark.parametrize(("agent", "env"), [("random", "continuous-r2r-ce"),
                                            ("shortest", "continuous-velocity")])  # fmt: skip
def test_a_continuous_ray_run_gives_the_bytes_and_card_of_a_local_run(
    ray_cluster: Any, data_root: Path, episodes: Path, tmp_path: Path, agent: str, env: str
) -> None:
    local, ray = tmp_path / "local.json", tmp_path / "ray.json"
    assert _run(data_root, episodes, local, agent, "--env", env) == 0
    assert _run(data_root, episodes, ray, agent, "--env", env, "--executor", "ray",
                "--num-actors", "2", "--chunk", "2") == 0  # fmt: skip
    assert ray.read_bytes() == local.read_bytes()
    assert _card(ray) == _card(local)  # measurements, privileged calls, environment, agent
    manifest = json.loads(ray.with_name("ray.shard-0-of-1.manifest.json").read_text())
    assert manifest["kind"] == "continuous" and manifest["environment"] == f"{env}-v1"
    assert manifest["executor"]["name"] == "ray" and manifest["n_done"] == 9
    lines = [json.loads(x) for x in ray.with_name("ray.shard-0-of-1.jsonl").read_text().split()]
    assert len(lines) == 9 and all(x["extra"]["time_s"] > 0 for x in lines)


def test_a_continuous_ray_shard_merges_with_a_local_shard(
    ray_cluster: Any, data_root: Path, episodes: Path, tmp_path: Path
) -> None:
    single = tmp_path / "single.json"
    assert _run(data_root, episodes, single, "random") == 0
    shards = tmp_path / "shards"
    shards.mkdir()
    out = shards / "preds.json"
    assert _run(data_root, episodes, out, "random", "--shard", "0/2") == 0
    assert _run(data_root, episodes, out, "random", "--shard", "1/2", "--executor", "ray",
                "--num-actors", "1") == 0  # fmt: skip
    merged = merge([shards], out=tmp_path / "merged.json")
    assert merged.n_episodes == 9
    assert (tmp_path / "merged.json").read_bytes() == single.read_bytes()
    assert _card(tmp_path / "merged.json") == _card(single)


def test_a_remote_continuous_agent_on_ray_gives_the_bytes_of_the_in_process_agent(
    ray_cluster: Any, data_root: Path, episodes: Path, tmp_path: Path
) -> None:
    local, remote = tmp_path / "local.json", tmp_path / "remote.json"
    assert _run(data_root, episodes, local, "random") == 0
    server = AgentServer(get_agent("continuous-random"), host="127.0.0.1", port=0)
    with server.running():
        assert _run(data_root, episodes, remote, server.url, "--executor", "ray",
                    "--num-actors", "2", "--chunk", "3") == 0  # fmt: skip
    assert remote.read_bytes() == local.read_bytes()
    card = _card(remote)
    assert card.pop("remote_agent") == {"url": server.url, "id": "continuous-random-v1",
                                        "protocol": "vlneval-agent-v1"}  # fmt: skip
    assert card == _card(local)
    assert not server._sessions  # every episode's session was ended


def test_score_with_a_continuous_ray_run_is_refused(
    data_root: Path, episodes: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(data_root, episodes, tmp_path / "p.json", "random", "--executor", "ray",
                "--score") == 2  # fmt: skip
    assert "--score does not combine with a continuous run on ray" in capsys.readouterr().err


def test_a_failing_remote_agent_on_ray_is_named_by_its_url(
    ray_cluster: Any,
    data_root: Path,
    episodes: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = AgentServer(get_agent("tests.agents.remote_agents:BrokenContinuous"), port=0)
    with server.running():
        code = _run(data_root, episodes, tmp_path / "p.json", server.url, "--executor", "ray",
                    "--num-actors", "1")  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert f"error: agent {server.url}: act() at episode " in err
    assert "RemoteAgent" not in err
    assert err.splitlines()[-1] == (
        "no episode was finished: once the agent is fixed, run the same command again"
    )
