"""gather() over a real torch process group: two processes, gloo, a file:// rendezvous."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip(
    "torch",
    reason="gather() is tested with torch installed (the dev extra has torch's CPU wheel on "
    "x86_64 CPython 3.11 only); run `pip install torch` to test it elsewhere",
)


def _worker(rank: int, world: int, rendezvous: str, out: str) -> None:
    """One rank: runs its shard of the demo split, gathers; then a gather with a duplicate."""
    import torch.distributed as dist

    from vlneval.agents.registry import get_agent
    from vlneval.agents.rollout import run_agent
    from vlneval.distributed import gather, plan
    from vlneval.envs.loading import load_episodes
    from vlneval.errors import VLNEvalError

    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world)
    try:
        episodes, graphs = load_episodes("demo")
        mine = plan(episodes.ids, world)[rank]
        got: list[tuple[int, Any]] = []
        run_agent(get_agent("random"), episodes, graphs, indices=mine,
                  on_record=lambda i, r: got.append((i, r)))  # fmt: skip
        report: dict[str, Any] = {"indices": mine, "records": gather(got)}
        try:  # both ranks claim episode 0 (and each its own rank's index)
            gather([(0, {"rank": rank}), (100 + rank, {"rank": rank})])
        except VLNEvalError as exc:
            report["duplicate"] = str(exc)
        Path(out, f"rank{rank}.json").write_text(json.dumps(report))
    finally:
        dist.destroy_process_group()


def test_gather_over_gloo_equals_a_single_run(tmp_path: Path) -> None:
    import torch.multiprocessing as mp

    from vlneval.agents.registry import get_agent
    from vlneval.agents.rollout import run_agent
    from vlneval.envs.loading import load_episodes

    rendezvous = tmp_path / "rendezvous"  # a file:// store: no port to race for
    mp.spawn(_worker, args=(2, str(rendezvous), str(tmp_path)), nprocs=2, join=True)
    episodes, graphs = load_episodes("demo")
    single = json.loads(json.dumps(run_agent(get_agent("random"), episodes, graphs).records))
    reports = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    # each rank ran only its shard (an exact cover), and every rank got every record, in order
    assert sorted(reports[0]["indices"] + reports[1]["indices"]) == list(range(36))
    assert reports[0]["indices"] and reports[1]["indices"]
    for report in reports:
        assert report["records"] == single
        assert report["duplicate"] == "gather(): episode index 0 returned twice (rank 1)"


def test_gather_needs_a_process_group() -> None:
    from vlneval.distributed import gather
    from vlneval.errors import VLNEvalError

    with pytest.raises(VLNEvalError, match="initialised torch process group"):
        gather([(0, {})])
