"""gather() over a real torch process group (gloo, world size 2)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

torch = pytest.importorskip(
    "torch",
    reason="gather() is tested with torch installed (the dev extra leaves torch out: "
    "its wheel is large); run `pip install torch` to test it",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _worker(rank: int, world: int, port: int, out: str) -> None:
    import json

    import torch.distributed as dist

    from vlneval.agents.registry import get_agent
    from vlneval.agents.rollout import run_agent
    from vlneval.distributed import gather, plan
    from vlneval.envs.loading import load_episodes

    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world
    )
    try:
        episodes, graphs = load_episodes("demo")
        mine = plan(episodes.ids, world)[rank]
        got: list[tuple[int, dict]] = []
        run_agent(get_agent("random"), episodes, graphs, indices=mine,
                  on_record=lambda i, r: got.append((i, r)))  # fmt: skip
        records = gather(got)
        Path(out, f"rank{rank}.json").write_text(json.dumps(records))
    finally:
        dist.destroy_process_group()


def test_gather_over_gloo_equals_a_single_run(tmp_path: Path) -> None:
    import json

    import torch.multiprocessing as mp

    from vlneval.agents.registry import get_agent
    from vlneval.agents.rollout import run_agent
    from vlneval.envs.loading import load_episodes

    mp.spawn(_worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    episodes, graphs = load_episodes("demo")
    single = json.loads(json.dumps(run_agent(get_agent("random"), episodes, graphs).records))
    for rank in (0, 1):
        assert json.loads((tmp_path / f"rank{rank}.json").read_text()) == single


def test_gather_needs_a_process_group() -> None:
    from vlneval.distributed import gather
    from vlneval.errors import VLNEvalError

    with pytest.raises(VLNEvalError, match="initialised torch process group"):
        gather([(0, {})])
