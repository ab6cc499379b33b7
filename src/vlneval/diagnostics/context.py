"""Per-episode facts that diagnostics group and normalise by (not metrics of the agent).

For every scored episode: its scan, the geodesic shortest distance ``d*`` from the start to the
nearest goal, the reference path's length in metres, and the instruction's length in
words (whitespace-separated tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlneval.graph.store import GraphStore
from vlneval.tasks.common.result import Result

__all__ = ["EpisodeContext", "episode_context", "path_groups", "shortest_distances"]


@dataclass(frozen=True)
class EpisodeContext:
    """Facts about the scored episodes, aligned to ``Result.scored``.

    Attributes:
        scans: scan id of each episode.
        shortest: ``d* = min_g d(start, g)`` in metres (NaN when no graph is known).
        reference_length: length of the reference path in metres (NaN when unknown).
        instruction_words: number of whitespace-separated words of the instruction.
    """

    scans: np.ndarray
    shortest: np.ndarray
    reference_length: np.ndarray
    instruction_words: np.ndarray


def shortest_distances(evaluation: Result, graphs: GraphStore) -> np.ndarray:
    """``d*`` of every scored episode: the geodesic distance from its start to the nearest goal.

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics.scored import score_run
        >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
        >>> d = shortest_distances(run.evaluation, run.graphs)
        >>> bool((d > 0).all()), d.shape == run.evaluation.scored.shape
        (True, True)
    """
    ep = evaluation.episodes
    out = np.empty(len(evaluation.scored), dtype=np.float64)
    for k, i in enumerate(evaluation.scored.tolist()):
        scan = ep.scans[i]
        index = graphs.graph(scan).index
        table = graphs.distances(scan)
        start = index[ep.paths[i][0]]
        out[k] = min(float(table[start, index[g]]) for g in ep.goals[i])
    return out


def episode_context(evaluation: Result, graphs: GraphStore | None) -> EpisodeContext:
    """The :class:`EpisodeContext` of a result; lengths come from ``graphs`` when given.

    Without graphs, ``d*`` falls back to the per-episode ``shortest_length`` column when the
    profile's SPL uses the shortest distance, and the reference length to the
    ``reference_length`` column; otherwise they are NaN.
    """
    ep = evaluation.episodes
    scored = evaluation.scored.tolist()
    per = evaluation.per_episode
    n = len(scored)
    nan = np.full(n, np.nan)
    if graphs is not None:
        shortest = shortest_distances(evaluation, graphs)
        reference = np.array([_path_length(graphs, ep.scans[i], ep.paths[i]) for i in scored])
    else:
        use_shortest = evaluation.profile.spl_reference == "shortest" and "shortest_length" in per
        shortest = np.asarray(per["shortest_length"], float) if use_shortest else nan
        reference = np.asarray(per.get("reference_length", nan), dtype=np.float64)
    return EpisodeContext(
        scans=np.array([ep.scans[i] for i in scored], dtype=object),
        shortest=shortest,
        reference_length=reference,
        instruction_words=np.array([len(ep.instructions[i].split()) for i in scored], np.int64),
    )


def path_groups(evaluation: Result) -> np.ndarray | None:
    """The path of every scored episode, as a label, for resampling whole paths: episodes of
    one scan with one reference path (R2R's three instructions of a ``path_id``), or for
    continuous episodes one start and goal. None when no two scored episodes share a path (or
    the episodes give none): then episodes are the unit.

    Example:
        >>> from vlneval.evaluation import Scorer
        >>> from vlneval.tasks.common.root import demo_root
        >>> from vlneval.diagnostics.scored import score_run
        >>> run = score_run(Scorer("demo"), demo_root() / "demo" / "predictions_val.json")
        >>> paths = path_groups(run.evaluation)  # three instructions per path, as in R2R
        >>> len(paths), len(set(paths.tolist())), paths[:6].tolist()
        (36, 12, [0, 0, 0, 1, 1, 1])
    """
    ep = evaluation.episodes
    rows = evaluation.scored.tolist()
    keys: list[tuple[object, ...]]
    if hasattr(ep, "paths"):
        keys = [(ep.scans[i], ep.paths[i]) for i in rows]
    elif hasattr(ep, "starts") and hasattr(ep, "goals"):
        keys = [(ep.scans[i], ep.starts[i].tobytes(), ep.goals[i].tobytes()) for i in rows]
    else:
        return None
    code: dict[object, int] = {}
    labels = np.array([code.setdefault(k, len(code)) for k in keys], dtype=np.int64)
    return labels if len(code) < len(keys) else None


def _path_length(graphs: GraphStore, scan: str, path: tuple[str, ...]) -> float:
    index = graphs.graph(scan).index
    table = graphs.distances(scan)
    nodes = [index[v] for v in path]
    return float(sum(table[a, b] for a, b in zip(nodes[:-1], nodes[1:], strict=True)))
