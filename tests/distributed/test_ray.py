"""The Ray executor on a real local cluster (one per session): the same bytes as a local run,
and a run that survives an actor dying mid-chunk."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.distributed.conftest import vlneval
from vlneval.agents.registry import get_agent
from vlneval.agents.rollout import run_agent
from vlneval.distributed import merge
from vlneval.distributed.executors import Workload
from vlneval.distributed.executors.ray_executor import RayOptions, run_on_ray
from vlneval.distributed.executors.workload import chunks
from vlneval.envs.loading import load_episodes
from vlneval.errors import VLNEvalError

# One Ray cluster per session: under pytest-xdist every Ray test runs on the same worker.
pytestmark = pytest.mark.xdist_group("ray")

ROOT = Path(__file__).resolve().parents[2]
AGENTS = "tests.distributed.ray_agents"


@pytest.fixture(scope="module")
def local_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The predictions of a local run of the demo task (random agent, seed 0)."""
    out = tmp_path_factory.mktemp("local") / "preds.json"
    assert vlneval("run", "--task", "demo", "--agent", "random", "--out", out, "--quiet") == 0
    return out.read_bytes()


def _ray_run(out: Path, *extra: str, agent: str = "random") -> int:
    return vlneval("run", "--task", "demo", "--agent", agent, "--out", out, "--quiet",
                   "--executor", "ray", *extra)  # fmt: skip


def test_ray_run_gives_the_bytes_of_a_local_run(ray_cluster: Any, local_bytes: bytes,
                                                tmp_path: Path) -> None:  # fmt: skip
    out = tmp_path / "preds.json"
    assert _ray_run(out, "--num-actors", "2", "--chunk", "5") == 0
    assert out.read_bytes() == local_bytes
    manifest = json.loads(out.with_name("preds.shard-0-of-1.manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["n_done"] == 36
    assert manifest["executor"]["name"] == "ray" and manifest["executor"]["chunk"] == 5
    card = json.loads(out.with_name("preds.protocol.json").read_text())
    assert card["episodes"] == 36 and card["shards"]["launchers"] == ["ray"]
    # the shard files merge and score as any shard's
    again = tmp_path / "merged.json"
    assert vlneval("merge", out.with_name("preds.shard-0-of-1.jsonl"), "--out", again) == 0
    assert again.read_bytes() == local_bytes
    assert vlneval("score", "--task", "demo", "--predictions", again, "--quiet") == 0
    # --resume of a finished run runs nothing and writes the same file
    out.unlink()
    assert _ray_run(out, "--resume") == 0
    assert out.read_bytes() == local_bytes


def test_a_ray_shard_merges_with_a_local_shard(ray_cluster: Any, local_bytes: bytes,
                                               tmp_path: Path) -> None:  # fmt: skip
    out = tmp_path / "preds.json"
    assert vlneval("run", "--task", "demo", "--agent", "random", "--out", out, "--quiet",
                   "--shard", "0/2") == 0  # fmt: skip
    assert _ray_run(out, "--shard", "1/2", "--num-actors", "1") == 0
    merge([tmp_path], out=tmp_path / "merged.json")
    assert (tmp_path / "merged.json").read_bytes() == local_bytes


def test_an_actor_killed_mid_chunk_is_replaced_and_its_chunk_rerun(
    ray_cluster: Any, local_bytes: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "died"
    out = tmp_path / "preds.json"
    code = vlneval("run", "--task", "demo", "--agent", f"{AGENTS}:DiesOnce", "--out", out,
                   "--executor", "ray", "--num-actors", "2", "--chunk", "8",
                   "--agent-arg", f"marker={marker}", "--agent-arg", "after=3")  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert marker.exists()  # an actor did die, on the third episode of its first chunk
    assert "died running episodes" in err and "re-queued (retry 1 of 3)" in err
    assert out.read_bytes() == local_bytes
    lines = out.with_name("preds.shard-0-of-1.jsonl").read_bytes().splitlines()
    assert len(lines) == 36 and len({json.loads(x)["i"] for x in lines}) == 36  # no duplicate


def test_retries_are_bounded(ray_cluster: Any, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    out = tmp_path / "preds.json"
    code = _ray_run(out, "--num-actors", "1", "--max-retries", "1", "--chunk", "36",
                    agent=f"{AGENTS}:AlwaysDies")  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "error: ray: episodes 0..35 lost their actor 2 times (more than --max-retries 1)" in err
    assert "--resume" in err and not out.exists()


def test_placement_group_bundles_give_the_same_records(ray_cluster: Any) -> None:
    episodes, graphs = load_episodes("demo")
    expected = run_agent(get_agent("random"), episodes, graphs).records
    got: dict[int, Any] = {}
    options = RayOptions(num_actors=2, actor_cpus=1, chunk=7, placement=True, start_timeout=60)
    run = run_on_ray(Workload(task="demo", agent="random"), range(36), options=options,
                     on_record=got.__setitem__)  # fmt: skip
    assert [got[i] for i in range(36)] == expected
    assert run.n_episodes == 36 and run.n_chunks == 6 and run.restarts == 0
    assert options.card()["placement_group"] == "PACK"


def test_half_gpu_actors_get_the_share_and_the_devices_ray_assigns(ray_cluster: Any) -> None:
    work = Workload(task="demo", agent=f"{AGENTS}:WithDevice")
    expected = work.runner().run(range(36)).records
    got: dict[int, Any] = {}
    options = RayOptions(num_actors=4, actor_cpus=0.5, actor_gpus=0.5, chunk=5, start_timeout=60)
    run = run_on_ray(work, range(36), options=options, on_record=got.__setitem__)
    assert [(i, got[i]) for i in range(36)] == expected
    assert len(run.actors) == 4 and run.placement is None
    for actor in run.actors:  # one GPU id each, visible to the agent, which is built on it
        assert len(actor["gpus"]) == 1 and actor["cuda_visible_devices"] == actor["gpus"][0]
        assert actor["device"] == "cuda" and actor["placement_group"] is None
    # four half-GPU actors on two GPUs: two on each, none on a GPU alone or on three
    assert Counter(a["gpus"][0] for a in run.actors) == {"0": 2, "1": 2}


def test_a_two_gpu_agent_gets_a_placement_group_bundle(ray_cluster: Any) -> None:
    episodes, graphs = load_episodes("demo")
    expected = run_agent(get_agent("random"), episodes, graphs).records
    got: dict[int, Any] = {}
    options = RayOptions(num_actors=1, actor_gpus=2, chunk=12, start_timeout=60)
    assert options.uses_placement_group  # >= 2 GPUs per actor: a bundle of its own
    run = run_on_ray(Workload(task="demo", agent="random"), range(36), options=options,
                     on_record=got.__setitem__)  # fmt: skip
    assert [got[i] for i in range(36)] == expected
    assert run.placement is not None
    assert run.placement["strategy"] == "PACK"
    assert run.placement["bundles"] == [{"CPU": 1.0, "GPU": 2.0}]
    (actor,) = run.actors
    assert actor["placement_group"] == run.placement["id"]  # the actor runs in that bundle
    assert sorted(actor["gpus"]) == ["0", "1"] and actor["cuda_visible_devices"] in ("0,1", "1,0")
    deadline = time.monotonic() + 10  # the group is freed at the end of the run
    while ray_cluster.util.placement_group_table()[run.placement["id"]]["state"] != "REMOVED":
        assert time.monotonic() < deadline, "the placement group outlived its run"
        time.sleep(0.1)


def test_gpu_requests_the_cluster_cannot_meet_are_refused(ray_cluster: Any) -> None:
    work = Workload(task="demo", agent="random")
    with pytest.raises(VLNEvalError, match="each actor asks for 3 GPUs but the cluster has 2"):
        run_on_ray(work, range(36), options=RayOptions(num_actors=1, actor_gpus=3))
    two_by_two = RayOptions(num_actors=2, actor_gpus=2, start_timeout=2)
    with pytest.raises(
        VLNEvalError, match=r"did not grant 2 bundles of \{'CPU': 1.0, 'GPU': 2.0\}"
    ):
        run_on_ray(work, range(36), options=two_by_two)


def test_actor_gpus_on_the_command_line_reach_the_manifest(
    ray_cluster: Any, local_bytes: bytes, tmp_path: Path
) -> None:
    out = tmp_path / "preds.json"
    assert _ray_run(out, "--num-actors", "2", "--actor-gpus", "0.5", "--actor-cpus", "0.5") == 0
    assert out.read_bytes() == local_bytes
    manifest = json.loads(out.with_name("preds.shard-0-of-1.manifest.json").read_text())
    executor = manifest["executor"]
    assert executor["actor_resources"] == {"CPU": 0.5, "GPU": 0.5}
    assert executor["placement_group"] is None and "placement" not in executor
    assert len(executor["actors"]) == 2
    for actor in executor["actors"]:
        assert len(actor["gpus"]) == 1 and actor["cuda_visible_devices"] == actor["gpus"][0]


def test_an_agent_error_is_raised_as_in_a_local_run(
    ray_cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ("--action-space", "panoramic", "--agent-arg", "bogus=1")
    assert _ray_run(tmp_path / "p.json", *args) == 2  # refused before any actor starts
    assert "takes no bogus= argument" in capsys.readouterr().err
    bad = f"{AGENTS}:BadAction"
    assert vlneval("run", "--task", "demo", "--agent", bad, "--out", tmp_path / "l.json") == 2
    local = capsys.readouterr().err.strip().splitlines()[-1]
    assert local.startswith("error: ") and "action 99" in local
    # in an actor: raised as it is (not retried: it would happen again), same message
    assert _ray_run(tmp_path / "r.json", "--num-actors", "1", "--chunk", "36", agent=bad) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == local


def test_a_killed_ray_run_resumes_without_duplicates(ray_cluster: Any, local_bytes: bytes,
                                                     tmp_path: Path) -> None:  # fmt: skip
    out = tmp_path / "preds.json"
    assert _ray_run(out, "--chunk", "4") == 0
    records = out.with_name("preds.shard-0-of-1.jsonl")
    manifest = out.with_name("preds.shard-0-of-1.manifest.json")
    lines = records.read_bytes().splitlines(keepends=True)
    records.write_bytes(b"".join(lines[:10]) + lines[10][:15])  # as if killed mid-line
    m = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**m, "status": "running"}))
    out.unlink()
    assert _ray_run(out, "--chunk", "4", "--resume") == 0
    assert out.read_bytes() == local_bytes
    assert len(records.read_bytes().splitlines()) == 36


def test_a_ray_run_stopped_by_sigterm_says_so_without_ray_s_stack_dump(tmp_path: Path) -> None:
    """The cluster the command starts itself is shut down through the same cleanup."""
    import os
    import signal

    pytest.importorskip("ray")
    out = tmp_path / "preds.json"
    records = out.with_name("preds.shard-0-of-1.jsonl")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "RAY_USAGE_STATS_ENABLED": "0"}  # fmt: skip
    argv = ["run", "--task", "demo", "--agent", "tests.distributed.agents:SlowRandom", "--out",
            str(out), "--executor", "ray", "--num-actors", "1", "--chunk", "2"]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-m", "vlneval", *argv], cwd=ROOT, env=env,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if records.exists() and records.read_bytes().count(b"\n") >= 2:
            break
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    n = records.read_bytes().count(b"\n")
    assert err.splitlines()[-1] == (
        f"ray run: stopped by SIGTERM at {n}/36 episodes (kept in {records}); run the same "
        "command with --resume to finish"
    )
    assert err.splitlines()[-2].endswith(" stopped") and "SIGTERM received" not in err


def test_ray_is_imported_only_by_the_ray_executor(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from vlneval.cli.main import main\n"
        "import vlneval.distributed.executors.ray_executor, vlneval.agents.remote\n"
        f"assert main(['run', '--task', 'demo', '--agent', 'random', '--out', {str(tmp_path / 'p.json')!r},"
        " '--quiet']) == 0\n"
        "assert 'ray' not in sys.modules, 'ray imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# -- without a cluster ----------------------------------------------------------------------------
def test_chunk_runner_equals_run_agent_and_passes_the_device() -> None:
    episodes, graphs = load_episodes("demo")
    expected = run_agent(get_agent("random"), episodes, graphs, indices=[9, 2, 30]).records
    runner = Workload(task="demo", agent="random").runner()
    assert [r for _, r in runner.run([9, 2]).records + runner.run([30]).records] == expected
    info = Workload(task="demo", agent=f"{AGENTS}:WithDevice").agent_info(device="cuda")
    assert info.factory().device == "cuda"
    pinned = Workload(task="demo", agent=f"{AGENTS}:WithDevice", agent_args={"device": "cpu"})
    assert pinned.agent_info(device="cuda").factory().device == "cpu"  # --agent-arg wins
    assert Workload(task="demo", agent="random").agent_info(device="cuda").id == "random-v1"


def test_options_are_checked() -> None:
    assert chunks(range(5), 2) == [[0, 1], [2, 3], [4]]
    with pytest.raises(VLNEvalError, match="--chunk must be a positive"):
        chunks([1], 0)
    with pytest.raises(VLNEvalError, match="num_actors must be a positive integer"):
        RayOptions(num_actors=0)
    with pytest.raises(VLNEvalError, match="a whole number of GPUs"):
        RayOptions(actor_gpus=1.5)
    assert RayOptions(actor_gpus=2).uses_placement_group
    assert not RayOptions(actor_gpus=0.5).uses_placement_group
    assert RayOptions(actor_gpus=0.5).resources() == {"CPU": 1.0, "GPU": 0.5}


def test_limit_and_balance_scans_are_refused_with_ray(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert _ray_run(tmp_path / "p.json", "--limit", "3") == 2
    assert _ray_run(tmp_path / "p.json", "--balance-scans") == 2
    err = capsys.readouterr().err
    assert "--limit does not combine with --executor ray" in err
    assert "--balance-scans needs --shard" in err
