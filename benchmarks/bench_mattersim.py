"""vlneval's graph-only ``MatterSim`` against the compiled Matterport3D simulator, side by side.

Run::

    python benchmarks/bench_mattersim.py --data ../shared/data --real-build /path/to/build

``--real-build`` is the folder holding the compiled ``MatterSim*.so`` (peteanderson80/
Matterport3DSimulator built with ``-DOSMESA_RENDERING=ON``); without it only vlneval's module is
timed. ``--data`` is a vlneval data root (``matterport3d/connectivity`` and ``r2r/``); the
compiled simulator reads plain ``.json`` files and ``scans.txt``, so gzipped graphs are unpacked
into a temporary folder for it.

Workload: R2R val_unseen episodes from their start viewpoints and headings, the R2R camera
(discretised angles, 60° VFOV, 640×480, rendering off), batch size 1. A random walk (turns,
tilts and moves, seeded) is recorded once; both simulators then replay the same action lists,
so they do the same work. Timed per step:

* ``step``: ``makeAction([i], [h], [e])`` then ``getState()`` (episodes restart with
  ``newEpisode`` every 30 steps, inside the timing);
* ``step+read``: the same, plus reading ``viewpointId``, ``rel_heading`` and ``rel_elevation``
  of every ``navigableLocations`` entry, as client code does;
* ``new sim``: ``Simulator()``, the R2R settings, ``initialize()`` and one ``newEpisode`` (a
  graph already loaded), the cost NaviLLM pays per sample.

Each measure is repeated (the two simulators alternate) and the best and median are printed, per
wall-clock and per process-CPU second. Before timing, every state of the replay is compared
field by field (``rel_heading`` to 1e-6: the compiled build's ``atan2`` may be the float one).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.machinery
import json
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EPISODE_STEPS = 30


def _load_real(folder: Path) -> Any:
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"MatterSim{suffix}"
        if path.is_file():
            loader = importlib.machinery.ExtensionFileLoader("MatterSim", str(path))
            spec = importlib.machinery.ModuleSpec("MatterSim", loader, origin=str(path))
            module = loader.create_module(spec)
            loader.exec_module(module)
            return module
    raise SystemExit(
        f"no MatterSim extension ({importlib.machinery.EXTENSION_SUFFIXES}) in {folder}"
    )


def _load_ours() -> Any:
    os.environ["VLNEVAL_MATTERSIM"] = "vlneval"
    import MatterSim

    assert MatterSim.__vlneval__ == "vlneval"
    return MatterSim


def _plain_graphs(connectivity: Path, into: Path) -> Path:
    """``connectivity`` with plain ``.json`` files and ``scans.txt`` (for the compiled build)."""
    if (connectivity / "scans.txt").is_file() and any(connectivity.glob("*_connectivity.json")):
        return connectivity
    into.mkdir(parents=True, exist_ok=True)
    scans = []
    for gz in sorted(connectivity.glob("*_connectivity.json.gz")):
        scans.append(gz.name.split("_connectivity")[0])
        with gzip.open(gz, "rb") as src, open(into / gz.name[:-3], "wb") as dst:
            shutil.copyfileobj(src, dst)
    (into / "scans.txt").write_text("\n".join(scans) + "\n")
    return into


def _simulator(module: Any, graphs: Path) -> Any:
    sim = module.Simulator()
    sim.setNavGraphPath(str(graphs))
    sim.setRenderingEnabled(False)
    sim.setDiscretizedViewingAngles(True)
    sim.setCameraResolution(640, 480)
    sim.setCameraVFOV(math.radians(60))
    sim.setBatchSize(1)
    sim.initialize()
    return sim


def _episodes(
    data: Path, count: int
) -> list[tuple[list[str], list[str], list[float], list[float]]]:
    with gzip.open(data / "r2r" / "R2R_val_unseen.json.gz", "rt") as fh:
        items = json.load(fh)[:count]
    return [([e["scan"]], [e["path"][0]], [e["heading"]], [0.0]) for e in items]


def _record(module: Any, graphs: Path, episodes: list[Any], seed: int) -> list[Any]:
    """The random walk: per episode its start and the action lists of its steps."""
    rng = random.Random(seed)
    sim = _simulator(module, graphs)
    plan = []
    for start in episodes:
        sim.newEpisode(*start)
        actions = []
        for _ in range(EPISODE_STEPS):
            n = len(sim.getState()[0].navigableLocations)
            kind = rng.randrange(6)
            if kind < 2 and n > 1:
                a = ([rng.randrange(1, n)], [0.0], [0.0])
            elif kind < 4:
                a = ([0], [1.0 if kind == 2 else -1.0], [0.0])
            else:
                a = ([0], [0.0], [1.0 if kind == 4 else -1.0])
            sim.makeAction(*a)
            actions.append(a)
        plan.append((start, actions))
    return plan


def _state_key(st: Any) -> tuple[Any, ...]:
    loc = st.location
    nav = [
        (v.viewpointId, v.ix, v.x, v.y, v.z, v.rel_elevation, v.rel_distance)
        for v in st.navigableLocations
    ]
    return (
        st.scanId,
        st.step,
        st.heading,
        st.elevation,
        st.viewIndex,
        loc.viewpointId,
        loc.ix,
        nav,
    )


def _compare(a: Any, b: Any, plan: list[Any]) -> tuple[int, float]:
    """Replays ``plan`` on both; every state must agree. Returns (states, max rel_heading diff)."""
    worst, states = 0.0, 0
    for start, actions in plan:
        a.newEpisode(*start)
        b.newEpisode(*start)
        for act in [None, *actions]:
            if act is not None:
                a.makeAction(*act)
                b.makeAction(*act)
            sa, sb = a.getState()[0], b.getState()[0]
            if _state_key(sa) != _state_key(sb):
                raise SystemExit(f"states differ after {states} states: {sa} vs {sb}")
            for va, vb in zip(sa.navigableLocations, sb.navigableLocations, strict=True):
                worst = max(worst, abs(va.rel_heading - vb.rel_heading))
            states += 1
    if worst > 1e-6:
        raise SystemExit(f"rel_heading differs by {worst}")
    return states, worst


def _replay(sim: Any, plan: list[Any], read: bool) -> tuple[float, float, int]:
    make, get = sim.makeAction, sim.getState
    steps = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for start, actions in plan:
        sim.newEpisode(*start)
        for i, h, e in actions:
            make(i, h, e)
            states = get()
            if read:
                for v in states[0].navigableLocations:
                    _ = (v.viewpointId, v.rel_heading, v.rel_elevation)
        steps += len(actions)
    return time.perf_counter() - wall, time.process_time() - cpu, steps


def _construct(module: Any, graphs: Path, start: Any, count: int) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        _simulator(module, graphs).newEpisode(*start)
    return time.perf_counter() - wall, time.process_time() - cpu, count


def main() -> None:
    here = Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("VLNEVAL_DATA", here.parents[2] / "shared" / "data")),
    )
    parser.add_argument("--real-build", type=Path, default=None)
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    ours = _load_ours()
    connectivity = args.data / "matterport3d" / "connectivity"
    mods: list[tuple[str, Any, Path]] = [("vlneval", ours, connectivity)]
    with tempfile.TemporaryDirectory() as tmp:
        if args.real_build is not None:
            real = _load_real(args.real_build.resolve())
            mods.insert(
                0, ("compiled", real, _plain_graphs(connectivity, Path(tmp) / "connectivity"))
            )
        episodes = _episodes(args.data, args.episodes)
        plan = _record(ours, connectivity, episodes, args.seed)
        sims = {name: _simulator(mod, graphs) for name, mod, graphs in mods}
        if len(sims) == 2:
            states, worst = _compare(sims["compiled"], sims["vlneval"], plan)
            print(
                f"states compared: {states:,}, all equal (max |rel_heading| difference {worst:.2e} rad)"
            )
        results: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
        for _ in range(args.repeats):
            for name, mod, graphs in mods:
                results.setdefault((name, "step"), []).append(_replay(sims[name], plan, False))
                results.setdefault((name, "step+read"), []).append(_replay(sims[name], plan, True))
                results.setdefault((name, "new sim"), []).append(
                    _construct(mod, graphs, episodes[0], 300)
                )
    print(
        f"{len(plan)} episodes x {EPISODE_STEPS} steps, batch 1, {args.repeats} repeats; microseconds per call"
    )
    print(
        f"{'measure':<11}{'simulator':<11}{'best wall':>11}{'median wall':>13}{'best cpu':>10}{'median cpu':>12}"
    )
    for measure in ("step", "step+read", "new sim"):
        for name, _, _ in mods:
            runs = results[(name, measure)]
            walls = [w / n * 1e6 for w, _, n in runs]
            cpus = [c / n * 1e6 for _, c, n in runs]
            print(
                f"{measure:<11}{name:<11}{min(walls):>11.2f}{statistics.median(walls):>13.2f}"
                f"{min(cpus):>10.2f}{statistics.median(cpus):>12.2f}"
            )
    print(f"python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
