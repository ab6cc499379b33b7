"""The continuous rollouts stay the same floats: pinned hashes of predictions and measurements.

Provenance: the hashes were computed with the pure-Python motion model, path follower and
waypoint loop (commit 8675ab8, before they were compiled) on every 5th of the first 60 R2R
val_unseen twin episodes, seed 7; the compiled cores reproduce them byte for byte. A change
of any position, heading, length or simulated time in any action space changes a hash.
"""

from __future__ import annotations

import hashlib
import io
import math
from pathlib import Path

import numpy as np
import pytest

from vlneval.agents.continuous import make_agent, run_continuous
from vlneval.agents.progress import episode_progress
from vlneval.continuous import _motion_kernels as kernels
from vlneval.envs.continuous.env import ContinuousNavEnv
from vlneval.io import to_json_bytes
from vlneval.tasks import get_task
from vlneval.tasks.vlnce.score import load_twin_split

INDICES = list(range(0, 60, 5))
PINNED = {
    ("r2r-ce", "shortest"): ("75f6ad790130c3fe", 687),
    ("r2r-ce", "random"): ("d0a1630e3d8f4ab0", 694),
    ("rxr-ce", "shortest"): ("6a5eb59c8f64049b", 635),
    ("rxr-ce", "random"): ("a6bf9eb124d51edb", 694),
    ("velocity", "shortest"): ("e07b046f9e8771eb", 896),
    ("velocity", "random"): ("f73523a4577d309f", 794),
    ("waypoint", "shortest"): ("a762ce6cc1ea78d5", 54),
    ("waypoint", "random"): ("2d09805aaa378e51", 738),
}


@pytest.fixture(scope="module")
def twin(data_root: Path):  # type: ignore[no-untyped-def]
    return load_twin_split(get_task("r2r-twin"), "val_unseen", root=data_root)


@pytest.mark.parametrize(("space", "agent"), sorted(PINNED))
def test_rollout_is_pinned(twin, space: str, agent: str) -> None:  # type: ignore[no-untyped-def]
    eps, worlds = twin
    env = ContinuousNavEnv(eps, worlds, action_space=space, privileged=agent == "shortest")
    run = run_continuous(env, make_agent(agent, env.action_space), indices=INDICES, seed=7)
    blob = to_json_bytes(run.predictions, indent=False) + to_json_bytes(run.episodes, indent=False)
    assert (hashlib.sha256(blob).hexdigest()[:16], run.steps) == PINNED[space, agent]


def test_compiled_hypot_is_pythons() -> None:
    """Lengths are summed from hypot: the compiled one must round as ``math.hypot`` does."""
    rng = np.random.default_rng(0)
    h = rng.uniform(0, 2 * math.pi, 20_000)
    pairs = [
        *zip(rng.uniform(-20, 20, 20_000), rng.uniform(-20, 20, 20_000), strict=True),
        *zip(rng.normal(0, 1e-3, 20_000), rng.uniform(-1, 1, 20_000), strict=True),
        *zip(0.25 * np.sin(h), 0.25 * np.cos(h), strict=True),
        (0.0, 0.0), (3.0, 4.0), (-0.1, 0.0), (1e-300, 1e-300), (1e300, 1e300), (5e-324, 0.0),
        (math.inf, 1.0), (1.0, -math.inf),
    ]  # fmt: skip
    for x, y in pairs:
        assert kernels.hypot(float(x), float(y)) == math.hypot(x, y), (x, y)
    assert math.isnan(kernels.hypot(math.nan, 1.0))


def test_plain_progress_lines_when_not_a_terminal(twin, capsys) -> None:  # type: ignore[no-untyped-def]
    eps, worlds = twin
    env = ContinuousNavEnv(eps, worlds, action_space="r2r-ce")
    run_continuous(env, make_agent("stop", env.action_space), indices=[0, 1, 2], progress=True)
    err = capsys.readouterr().err  # captured: not a terminal, as in a SLURM log
    lines = err.splitlines()
    assert lines[0].startswith("running r2r-twin: 0/3 episodes (0%)")  # the task, not the space
    assert lines[-1].startswith("running r2r-twin: 3/3 episodes (100%)")
    assert "\x1b" not in err  # no terminal control codes


def test_progress_lines_are_periodic() -> None:
    log = io.StringIO()
    with episode_progress(4, enabled=True, label="run", interval=0.0, stream=log) as advance:
        for _ in range(4):
            advance(1)
    done = [line.split(" ")[1] for line in log.getvalue().splitlines()]
    assert done == ["0/4", "1/4", "2/4", "3/4", "4/4"]


@pytest.mark.parametrize("space", ["r2r-ce", "waypoint"])
def test_scoring_from_the_run_equals_scoring_the_file(twin, tmp_path: Path, space: str) -> None:  # type: ignore[no-untyped-def]
    """``score_run`` takes the trajectories from the run's arrays: the same as reading the file."""
    from dataclasses import fields

    from vlneval.agents.continuous import _run_predictions, run_card, score_run
    from vlneval.tasks.vlnce.format import parse_ce_predictions

    eps, worlds = twin
    env = ContinuousNavEnv(eps, worlds, action_space=space, privileged=True)
    run = run_continuous(env, make_agent("shortest", env.action_space), indices=INDICES, seed=7)
    path = tmp_path / "preds.json"
    path.write_bytes(to_json_bytes(run.predictions, indent=False))
    ours, theirs = _run_predictions(run, eps, str(path)), parse_ce_predictions(path, eps)
    assert ours is not None
    for f in fields(theirs):
        a, b = getattr(ours, f.name), getattr(theirs, f.name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f.name
        else:
            assert a == b, f.name
    card = run_card(
        env, "continuous", make_agent("shortest", None), run, split="val_unseen", seed=7
    )
    fast = score_run(env, run, card, path, subset=True)
    run.tracks.clear()  # no arrays: the file is read
    assert to_json_bytes(score_run(env, run, card, path, subset=True)) == to_json_bytes(fast)


def _choice_by_every_step(args: tuple, here: float) -> int:  # type: ignore[type-arg]
    """The discrete teacher's rule with every candidate step simulated."""
    free, height, geo, node_id, substep, field, x, y, layer, z, heading, ks, turn, d, s, p = args
    best_k, best = kernels.NO_TURN, here - 0.01
    for k in ks.tolist():
        step = (x, y, layer, z, heading + k * turn, d, s, p)
        value = float(field[kernels._forward_node(free, height, geo, node_id, substep, *step)])
        if value < best - 1e-9:
            best_k, best = k, value
    return best_k


@pytest.mark.parametrize("space", ["r2r-ce", "rxr-ce"])
def test_discrete_choice_skips_no_step_that_could_win(twin, space: str) -> None:  # type: ignore[no-untyped-def]
    """The teacher stops simulating steps once none can beat the best: same choice as all."""
    from vlneval.continuous.motion import Mover
    from vlneval.envs.continuous.spaces import continuous_space
    from vlneval.envs.continuous.teacher import ContinuousTeacher

    eps, worlds = twin
    sp = continuous_space(space)
    ks = ContinuousTeacher._order(sp)
    rng = np.random.default_rng(13)
    checked = 0
    for i in range(0, 60, 6):
        world = worlds(eps.scans[i])
        mover = Mover(world)
        field = world.field(int(rng.integers(world.n_nodes)))
        free, height, geo, substep = mover.grid
        for node in rng.choice(world.n_nodes, 300, replace=False).tolist():
            layer, ci, cj = (int(v) for v in world.node_cells[node])
            x = world.origin[0] + (cj + rng.uniform(-0.5, 0.5)) * world.resolution
            y = world.origin[1] + (ci + rng.uniform(-0.5, 0.5)) * world.resolution
            if world.cell(x, y) != (ci, cj) or not math.isfinite(field[node]):
                continue
            args = (
                free, height, geo, world.node_id, substep, field, x, y, layer,
                float(height[layer, ci, cj]), float(rng.uniform(0, 2 * math.pi)), ks,
                math.radians(sp.turn_deg), sp.forward_m, sp.sliding, sp.sliding,
            )  # fmt: skip
            here = float(field[node])
            assert kernels.discrete_choice(*args, here) == _choice_by_every_step(args, here)
            checked += 1
    assert checked > 2000
