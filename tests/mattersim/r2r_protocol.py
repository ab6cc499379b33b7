"""The R2R evaluation protocol of the simulator's ``tasks/R2R`` (``eval_simple_agents``), re-stated.

What the original does, and what this helper does with vlneval's ``MatterSim``:

* one environment per split, batch size 1, on the master API; the instructions of the split's
  paths (``instr_id = "<path_id>_<k>"``) are shuffled after seeding Python's ``random`` with 10;
* the agents Stop, Shortest and Random run in that order on the same environment; each reseeds
  ``random`` with 1 when it is made; a test restarts at position 0 and runs episodes until an
  instruction comes round again; when the data run out they are reshuffled and the batch wraps;
* Random turns right ``random.sample(range(-11, 1), 1)`` times, then makes up to 5 moves to
  index 1 (turning right while nothing is in view), within 30 steps;
* Shortest follows the teacher: look at the next viewpoint of the networkx shortest path (turn
  while ``|rel_heading| > 30°``, tilt while ``|rel_elevation| > 30°`` and the row allows), then
  move; when it is out of view, level the camera and turn toward it;
* trajectories are ``(viewpoint, heading, elevation)`` per step, written in first-seen order.
"""

from __future__ import annotations

import gzip
import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import networkx as nx

import MatterSim

Action = tuple[int, int, int]
STAY: Action = (0, 0, 0)


class Graphs:
    """Shortest paths and positions as ``tasks/R2R`` computes them (networkx Dijkstra on a graph
    built in file order, so ties between equal paths break the same way)."""

    def __init__(self, connectivity: Path) -> None:
        self.connectivity = connectivity
        self._graphs: dict[str, nx.Graph] = {}
        self._positions: dict[str, dict[str, tuple[float, float, float]]] = {}
        self._paths: dict[tuple[str, str], dict[str, list[str]]] = {}

    def _load(self, scan: str) -> nx.Graph:
        graph = self._graphs.get(scan)
        if graph is None:
            with gzip.open(self.connectivity / f"{scan}_connectivity.json.gz", "rt") as fh:
                records = json.load(fh)
            graph = nx.Graph()
            where: dict[str, tuple[float, float, float]] = {}
            for a in records:
                if not a["included"]:
                    continue
                pa = (a["pose"][3], a["pose"][7], a["pose"][11])
                for j, open_ in enumerate(a["unobstructed"]):
                    b = records[j]
                    if open_ and b["included"]:
                        pb = (b["pose"][3], b["pose"][7], b["pose"][11])
                        where[a["image_id"]] = pa
                        d = sum((u - v) ** 2 for u, v in zip(pa, pb, strict=True)) ** 0.5
                        graph.add_edge(a["image_id"], b["image_id"], weight=d)
            self._graphs[scan], self._positions[scan] = graph, where
        return graph

    def path(self, scan: str, start: str, goal: str) -> list[str]:
        key = (scan, start)
        paths = self._paths.get(key)
        if paths is None:
            paths = nx.single_source_dijkstra_path(self._load(scan), start)
            self._paths[key] = paths
        return paths[goal]

    def position(self, scan: str, viewpoint: str) -> tuple[float, float, float]:
        self._load(scan)
        return self._positions[scan][viewpoint]


def instructions(data_root: Path, split: str) -> list[dict[str, Any]]:
    """One item per instruction of ``R2R_<split>.json``, in file order."""
    with gzip.open(data_root / "r2r" / f"R2R_{split}.json.gz", "rt") as fh:
        paths = json.load(fh)
    return [
        {
            "instr_id": f"{p['path_id']}_{k}",
            "scan": p["scan"],
            "path": p["path"],
            "heading": p["heading"],
        }
        for p in paths
        for k in range(len(p["instructions"]))
    ]


class R2REnv:
    """A batch-size-1 R2R environment over ``MatterSim`` (the master API)."""

    def __init__(self, sim: Any, items: list[dict[str, Any]], graphs: Graphs) -> None:
        self.sim = sim
        self.graphs = graphs
        self.data = list(items)
        random.seed(10)
        random.shuffle(self.data)
        self.ix = 0
        self.item: dict[str, Any] = {}

    def reset(self) -> Any:
        if self.ix >= len(self.data):  # the batch would come up short: reshuffle and wrap
            random.shuffle(self.data)
            self.ix = 0
        self.item = self.data[self.ix]
        self.ix += 1
        it = self.item
        self.sim.newEpisode([it["scan"]], [it["path"][0]], [it["heading"]], [0])
        return self.sim.getState()[0]

    def step(self, action: Action) -> Any:
        i, h, e = action
        self.sim.makeAction([int(i)], [float(h)], [float(e)])
        return self.sim.getState()[0]

    def teacher(self, state: Any) -> Action:
        """The next action on the shortest path to the episode's goal."""
        goal = self.item["path"][-1]
        here = state.location.viewpointId
        if here == goal:
            return STAY
        target = self.graphs.path(state.scanId, here, goal)[1]
        row = state.viewIndex // 12
        for i, loc in enumerate(state.navigableLocations):
            if loc.viewpointId != target:
                continue
            if loc.rel_heading > math.pi / 6.0:
                return (0, 1, 0)
            if loc.rel_heading < -math.pi / 6.0:
                return (0, -1, 0)
            if loc.rel_elevation > math.pi / 6.0 and row < 2:
                return (0, 0, 1)
            if loc.rel_elevation < -math.pi / 6.0 and row > 0:
                return (0, 0, -1)
            return (i, 0, 0)
        if row == 0:
            return (0, 0, 1)
        if row == 2:
            return (0, 0, -1)
        tx, ty, _ = self.graphs.position(state.scanId, target)
        loc = state.location
        bearing = math.pi / 2.0 - math.atan2(ty - loc.y, tx - loc.x)
        if bearing < 0:
            bearing += 2.0 * math.pi
        h = state.heading
        if (h > bearing and h - bearing < math.pi) or (bearing > h and bearing - h > math.pi):
            return (0, -1, 0)
        return (0, 1, 0)


def _record(state: Any) -> list[Any]:
    return [state.location.viewpointId, state.heading, state.elevation]


def _stop(env: R2REnv) -> list[list[Any]]:
    return [_record(env.reset())]


def _shortest(env: R2REnv) -> list[list[Any]]:
    state = env.reset()
    out = [_record(state)]
    while True:
        action = env.teacher(state)
        state = env.step(action)
        if action == STAY:
            return out
        out.append(_record(state))


def _random(env: R2REnv) -> list[list[Any]]:
    state = env.reset()
    out = [_record(state)]
    turns = random.sample(range(-11, 1), 1)[0]
    ended = False
    for _ in range(30):
        if turns >= 5:
            action, ended = STAY, True
        elif turns < 0:
            action, turns = (0, 1, 0), turns + 1
        elif len(state.navigableLocations) > 1:
            action, turns = (1, 0, 0), turns + 1
        else:
            action = (0, 1, 0)
        state = env.step(action)
        if not ended:
            out.append(_record(state))
    return out


AGENTS = {"stop": _stop, "shortest": _shortest, "random": _random}


def run_agent(env: R2REnv, name: str) -> list[dict[str, Any]]:
    """One agent's test on ``env``: records in first-seen order."""
    random.seed(1)
    rollout = AGENTS[name]
    env.ix = 0
    results: dict[str, list[list[Any]]] = {}
    while True:
        trajectory = rollout(env)
        iid = env.item["instr_id"]
        if iid in results:
            break
        results[iid] = trajectory
    return [{"instr_id": k, "trajectory": v} for k, v in results.items()]


def simple_agents(
    sim: Any, data_root: Path, split: str, graphs: Graphs
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Stop, Shortest and Random in the original's order on one shared environment."""
    env = R2REnv(sim, instructions(data_root, split), graphs)
    for name in ("stop", "shortest", "random"):
        yield name, run_agent(env, name)


def new_simulator(connectivity: Path) -> Any:
    """The environment's simulator, set up as ``tasks/R2R/env.py`` sets it."""
    sim = MatterSim.Simulator()
    sim.setNavGraphPath(str(connectivity))
    sim.setRenderingEnabled(False)
    sim.setDiscretizedViewingAngles(True)
    sim.setBatchSize(1)
    sim.setCameraResolution(640, 480)
    sim.setCameraVFOV(math.radians(60))
    sim.initialize()
    return sim
