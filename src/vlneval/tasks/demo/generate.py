"""The synthetic demo benchmark shipped inside vlneval (``--task demo``).

Three generated houses in the Matterport3D connectivity format, R2R-format episodes with
template instructions, and a predictions file mixing shortest-path, wandering and stopping
agents. It is synthetic: it exists so that ``vlneval score --task demo`` works on a fresh machine
with no downloads. Regenerate with ``python -m vlneval.tasks.demo.generate OUT_DIR``; the shipped files are
exactly what ``generate(seed=0)`` writes (a test checks it).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from vlneval.graph.distances import distance_table
from vlneval.graph.matterport import parse_connectivity
from vlneval.io import atomic_write_bytes

__all__ = ["generate", "HOUSES"]

HOUSES = ("demoHouse0A", "demoHouse1B", "demoHouse2C")
TEMPLATES = (
    "Walk past the {a} and stop next to the {b}.",
    "Go through the {a}, turn and wait by the {b}.",
    "Leave the {a} and head towards the {b}; stop there.",
)
ROOMS = ("kitchen", "sofa", "staircase", "bathroom door", "dining table", "bookshelf", "bed")


def _vp_id(rng: np.random.Generator) -> str:
    return "".join(f"{b:02x}" for b in rng.integers(0, 256, size=16))


def _house(
    rng: np.random.Generator, rows: int, cols: int
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """A grid house, 2.2 m spacing with jitter; some grid links are walls; one stray viewpoint."""
    n = rows * cols
    pos = np.array(
        [
            [c * 2.2 + rng.normal(0, 0.3), r * 2.2 + rng.normal(0, 0.3), 1.5]
            for r in range(rows)
            for c in range(cols)
        ]
    )
    unob = np.zeros((n + 1, n + 1), dtype=bool)
    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            for j, ok in (
                (i + 1, c + 1 < cols),
                (i + cols, r + 1 < rows),
                (i + cols + 1, c + 1 < cols and r + 1 < rows),
            ):
                if ok and rng.random() < (0.85 if j != i + cols + 1 else 0.3):
                    unob[i, j] = unob[j, i] = True
    pos = np.vstack([pos, [[-5.0, -5.0, 1.5]]])  # an included viewpoint with no edge
    ids = [_vp_id(rng) for _ in range(n + 1)]
    records = []
    for i in range(n + 1):
        x, y, z = (round(float(v), 4) for v in pos[i])
        pose = [1.0, 0.0, 0.0, x, 0.0, 1.0, 0.0, y, 0.0, 0.0, 1.0, z, 0.0, 0.0, 0.0, 1.0]
        records.append(
            {
                "image_id": ids[i],
                "pose": pose,
                "included": True,
                "visible": [bool(v) for v in unob[i]],
                "unobstructed": [bool(v) for v in unob[i]],
                "height": 1.5,
            }
        )
    return records, pos


def _walks(
    scan: str, records: list[dict[str, Any]], rng: np.random.Generator, first_id: int
) -> tuple[list[Any], list[Any]]:
    g = parse_connectivity(records, scan=scan)
    d = distance_table(g)
    episodes, preds = [], []
    for k in range(4):
        start = int(rng.integers(g.n))
        reach = np.flatnonzero(np.isfinite(d[start]) & (d[start] > 4.0))
        goal = int(rng.choice(reach))
        path = _shortest(g, d, start, goal)
        pid = first_id + k
        instr = [t.format(a=rng.choice(ROOMS), b=rng.choice(ROOMS)) for t in TEMPLATES]
        heading = round(float(rng.uniform(0, 2 * math.pi)), 3)
        episodes.append(
            {
                "distance": round(float(d[start, goal]), 2),
                "scan": scan,
                "path_id": pid,
                "path": [g.ids[v] for v in path],
                "heading": heading,
                "instructions": instr,
            }
        )
        for j in range(3):
            preds.append(
                {"instr_id": f"{pid}_{j}", "trajectory": _agent(g, d, path, j + k, heading, rng)}
            )
    return episodes, preds


def _shortest(g: Any, d: np.ndarray, start: int, goal: int) -> list[int]:
    path = [start]
    while path[-1] != goal:
        u = path[-1]
        nb = g.neighbours(u)
        w = np.array([np.linalg.norm(g.positions[u] - g.positions[v]) for v in nb])
        path.append(int(nb[np.argmin(w + d[nb, goal])]))
    return path


def _agent(
    g: Any, d: np.ndarray, path: list[int], kind: int, heading: float, rng: np.random.Generator
) -> list[Any]:
    """Shortest (kind 0 mod 4), overshoot, wander, stop: a spread of outcomes."""
    nodes = [path[0]]
    if kind % 4 == 0:
        nodes = list(path)
    elif kind % 4 == 1:
        nodes = list(path) + [int(rng.choice(g.neighbours(path[-1])))]
    elif kind % 4 == 2:
        for _ in range(int(rng.integers(2, 7))):
            nodes.append(int(rng.choice(g.neighbours(nodes[-1]))))
    out = [
        [g.ids[nodes[0]], heading, 0.0],
        [g.ids[nodes[0]], round((heading + math.pi / 6) % (2 * math.pi), 6), 0.0],
    ]
    for a, b in zip(nodes[:-1], nodes[1:], strict=True):
        dx, dy = g.positions[b][:2] - g.positions[a][:2]
        out.append([g.ids[b], round(math.atan2(dx, dy) % (2 * math.pi), 6), 0.0])
    return out


def to_json_bytes(obj: Any, *, indent: bool = True) -> bytes:
    """``obj`` as JSON (indented by 2, newline-terminated, unless ``indent`` is False).

    Example:
        >>> to_json_bytes({"a": [1]}, indent=False)
        b'{"a":[1]}'
    """
    raw = msgspec.json.encode(obj)
    return msgspec.json.format(raw, indent=2) + b"\n" if indent else raw


def generate(out: str | Path, seed: int = 0) -> None:
    """Writes the demo benchmark under ``out`` (the layout of a data root)."""
    rng = np.random.default_rng(seed)
    out = Path(out)
    episodes, preds = [], []
    for h, scan in enumerate(HOUSES):
        records, _ = _house(rng, 4 + h, 5)
        atomic_write_bytes(
            out / "matterport3d" / "connectivity" / f"{scan}_connectivity.json",
            to_json_bytes(records, indent=False),
        )
        e, p = _walks(scan, records, rng, first_id=100 * (h + 1))
        episodes += e
        preds += p
    atomic_write_bytes(out / "demo" / "DEMO_val.json", to_json_bytes(episodes))
    atomic_write_bytes(out / "demo" / "predictions_val.json", to_json_bytes(preds))


if __name__ == "__main__":
    generate(sys.argv[1] if len(sys.argv) > 1 else "demo_data")
