"""Scoring Touchdown navigation (TC, SPD, SED) and spatial description resolution (SDR).

Navigation, per route with reference ``R`` (goal ``g = r_m``) and executed panoramas ``P``:
SPD = hops from ``p_n`` to ``g`` on the undirected street graph; TC = ``1[SPD <= 1]`` (the goal
or one of its neighbours); SED = ``TC · (1 − lev(P', R') / max(|P'|, |R'|))`` with consecutive
repeats removed (``touchdown-vlnt``: on ``P`` and ``R`` as given). Profiles:

- ``touchdown``: Levenshtein distance (the paper's definition); a trajectory must start at the
  route's start and move along links; every route needs a prediction;
- ``touchdown-wrap``: the same navigation rules; SDR distances wrap around the 360° seam;
- ``touchdown-vlnt``: as the VLN-Transformer / map2seq scorers (``_eva_metrics`` of
  ``touchdown/env.py`` in VegB/VLN-Transformer and ``vln/env.py`` in raphael-sch/map2seq_vln):
  the optimal-string-alignment edit distance of ``pyxdameraulevenshtein`` on the panoramas as
  written (no repeats removed) and no link check.

SDR, per example: the pixel distance between predicted and true location in a 3680 x 800 px
panorama (8 views of 460 px, the frame of ``predict_baselines`` in lil-lab/touchdown
``sdr/predict.py`` at commit 5aeb42d, removed in ba9dad8); accuracy at 40/80/120 px counts
distances strictly below the radius; the official code does not wrap around the seam (profile
``touchdown``), ``touchdown-wrap`` does. That file's model scores (and ``sdr/train.py``'s today)
measure between argmax cells of 1/8-resolution heatmaps instead: they agree with these only for
points on that 8 px grid.
"""

from __future__ import annotations

import dataclasses
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from vlneval.errors import (
    MissingDataError,
    ProblemCollector,
    VLNEvalError,
    hint,
    hinted,
)  # fmt: skip
from vlneval.graph.street import street_graph
from vlneval.metrics._kernels import moves, owners
from vlneval.metrics.edit import sed_batch
from vlneval.metrics.street import sdr_accuracy, sdr_distance, task_completion
from vlneval.tasks.base import Task
from vlneval.tasks.common.checks import check_matches, incomplete, stray_ids
from vlneval.tasks.common.episodes import EpisodeTable
from vlneval.tasks.common.goal_scoring import DEFAULT_OPTIONS, release_file, summary_options
from vlneval.tasks.common.inputs import source_name
from vlneval.tasks.common.predictions import Predictions
from vlneval.tasks.common.request import (
    PredictionsInput,
    ScoreOptions,
    SplitRequest,
    episodes_path,
)
from vlneval.tasks.common.result import Result
from vlneval.tasks.common.root import data_root
from vlneval.tasks.common.scoring import summarise
from vlneval.tasks.profiles import Profile
from vlneval.tasks.touchdown import DATA_VERSIONS
from vlneval.tasks.touchdown.format import (
    SDR_KINDS,
    TouchdownRoutes,
    load_touchdown_routes,
    parse_sdr_predictions,
    parse_touchdown_predictions,
)
from vlneval.tasks.touchdown.profiles import StreetProfile

__all__ = [
    "DATA_VERSIONS",
    "TouchdownScorer",
    "SDRScorer",
    "score_touchdown",
    "open_routes",
    "score_sdr",
]

#: Why a record's route id is not in the split (route ids are JSON integers: no type or
#: spacing slip can hide a match, as it can for a string id).
STRAY_ADVICE = "another split's route, or an unknown one"
NAV_COLUMNS = {"TC": "task_completion", "SPD": "spd", "SED": "sed"}
SDR_COLUMNS = {
    "SDR@40": "sdr_acc40",
    "SDR@80": "sdr_acc80",
    "SDR@120": "sdr_acc120",
    "SDR_dist": "sdr_distance",
}


def _rules(prof: Profile) -> StreetProfile:
    if not isinstance(prof, StreetProfile):
        raise VLNEvalError(
            f"profile {prof.name} has no Touchdown rules (use touchdown, touchdown-wrap or touchdown-vlnt)"
        )
    if prof.edit_distance not in ("levenshtein", "osa"):
        raise VLNEvalError(f"profile {prof.name}: unknown edit distance {prof.edit_distance!r}")
    return prof


def _find_routes(
    task: Task, split: str, root: Any, episodes_file: Any, version: str | None
) -> tuple[TouchdownRoutes, Path | None, str | None]:
    """The routes of release ``version`` (default: the first present), the data root and the
    release read (the given one resolved; for none, None for a file given by name)."""
    base = data_root(root)
    if version:
        path, version = release_file(task, split, base, episodes_file, version)
    else:
        path = episodes_path(task, split, base, episodes_file)
        if not episodes_file:
            folders = {Path(pattern).parent.name: v for v, pattern in DATA_VERSIONS.items()}
            version = folders.get(path.parent.name)
    routes = load_touchdown_routes(path, task=task.name, split=split)
    routes.table.data_version = version
    return routes, base, version


def _routes(r: SplitRequest) -> tuple[TouchdownRoutes, Path | None, str | None]:
    return _find_routes(r.task, r.split, r.root, r.episodes_file, r.options.get("data_version"))


def _street_graph(task: Task, base: Path | None, graphs: Any) -> Any:
    if graphs is None and base is None:
        raise MissingDataError("no Touchdown street graph: pass --graphs DIR or --data-root DIR")
    return street_graph(Path(graphs) if graphs is not None else base / task.folder / "graph")  # type: ignore[operator]


def open_routes(
    task: Task,
    split: str,
    *,
    root: str | Path | None = None,
    episodes_file: str | Path | None = None,
    graphs: str | Path | None = None,
    data_version: str | None = None,
) -> tuple[EpisodeTable, Any]:
    """The routes of a split and the street graph, found as the scorer finds them (the task's
    ``street_routes``: what agents run on in the street environment).

    ``data_version``: ``original`` or ``unseen`` (default: the first present).
    """
    routes, base, _ = _find_routes(task, split, root, episodes_file, data_version)
    return routes.table, _street_graph(task, base, graphs)


class TouchdownScorer:
    """Touchdown routes and the street graph loaded once (``open_scorer`` of ``touchdown``).

    Options:
        data_version: ``original`` (``touchdown/data/<split>.json``) or ``unseen``
            (``touchdown/touchdown_unseen_split/<split>.json``); default: the first present.
    """

    def __init__(self, request: SplitRequest) -> None:
        routes, base, self.data_version = _routes(request)
        self.graph = _street_graph(request.task, base, request.graphs)
        self.task, self.profile, self.episodes = request.task.name, request.profile, routes.table

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores Touchdown navigation predictions (a file, its bytes or its records); every
        problem of the records and of the rules is raised together, completeness first."""
        pc = ProblemCollector(source_name(predictions))
        preds = parse_touchdown_predictions(
            predictions, self.episodes, self.graph, form=how.form,
            trajectory_key=how.trajectory_key, skip_summaries=how.skip_summaries, collect=pc,
        )  # fmt: skip
        return score_touchdown(
            self.episodes, preds, self.graph, self.profile, how, data_version=self.data_version,
            pc=pc,
        )  # fmt: skip


def _reference(table: EpisodeTable, order: np.ndarray, graph: Any) -> tuple[np.ndarray, np.ndarray]:
    paths = [table.paths[i] for i in order.tolist()]
    offsets = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in paths], out=offsets[1:])
    nodes = list(map(graph.index.get, chain.from_iterable(paths)))
    if None in nodes:
        pc = ProblemCollector(table.source)
        for pos in [k for k, v in enumerate(nodes) if v is None][:50]:
            e = int(np.searchsorted(offsets, pos, side="right") - 1)
            pc.add(
                graph.describe_missing(paths[e][pos - offsets[e]]),
                episode=table.label(int(order[e])),
                field=f"route_panoids[{pos - offsets[e]}]",
            )
        pc.raise_if_any()
    return np.asarray(nodes, dtype=np.int32), offsets


def _missing(table: EpisodeTable, preds: Predictions, prof: Profile, subset: bool) -> str | None:
    """The completeness problem of a file with routes left out, or None."""
    if not (preds.missing and prof.require_complete and not subset):
        return None
    what = f"{len(preds.missing)} of {len(table)} routes"
    return incomplete(what, preds.missing, prof, stray_ids(preds.unknown, advice=STRAY_ADVICE))


def _check(
    table: EpisodeTable,
    preds: Predictions,
    ref: np.ndarray,
    ref_off: np.ndarray,
    graph: Any,
    prof: Profile,
    subset: bool,
    moved: np.ndarray,
    owner: np.ndarray,
    pc: ProblemCollector,
) -> np.ndarray:
    """Completeness (first, before the problems ``pc`` holds from reading the records, as the
    shared rule checks), start and link rules; returns the per-episode jumps. ``moved`` and
    ``owner``: the kernels' steps that change panorama and the trajectory of each position."""
    traj, off = preds.nodes, preds.offsets
    missing = _missing(table, preds, prof, subset)
    if missing is not None:
        pc.add_first(missing)
    for k in np.flatnonzero(traj[off[:-1]] != ref[ref_off[:-1]]).tolist():
        i = int(preds.episodes[k])
        pc.add(
            f"the trajectory starts at {graph.ids[traj[off[k]]]}, not at the route's start "
            f"{table.paths[i][0]} (it must include the start panorama)",
            episode=table.label(i), field="trajectory[0]",
        )  # fmt: skip
    at = np.flatnonzero(moved)
    jump_at = at[~graph.adjacent(traj[at - 1], traj[at])]
    if prof.check_adjacency:
        episodes, first = np.unique(owner[jump_at], return_index=True)
        for k, q in zip(episodes.tolist(), jump_at[first].tolist(), strict=True):
            i = int(preds.episodes[k])
            pc.add(
                hinted(
                    f"panorama {graph.ids[traj[q]]} is not linked to {graph.ids[traj[q - 1]]} (a "
                    "move must follow a street-graph link",
                    hint("--profile", "profile touchdown-vlnt scores such jumps without a check"),
                    ")",
                ),
                episode=table.label(i), field=f"trajectory[{q - int(off[k])}]",
            )  # fmt: skip
    pc.raise_if_any()
    return np.bincount(owner[jump_at], minlength=len(preds.episodes)).astype(np.int64)


def score_touchdown(
    table: EpisodeTable,
    preds: Predictions,
    graph: Any,
    prof: Profile,
    how: ScoreOptions = DEFAULT_OPTIONS,
    *,
    data_version: str | None = None,
    pc: ProblemCollector | None = None,
) -> Result:
    """Scores parsed Touchdown navigation predictions on a :class:`StreetGraph`; ``pc``
    carries the problems found while reading them, raised with the rule checks'."""
    rules = _rules(prof)
    pc = pc if pc is not None else ProblemCollector(preds.source)
    check_matches(table, preds, pc, _missing(table, preds, prof, how.subset))
    ref, ref_off = _reference(table, preds.episodes, graph)
    traj, off = preds.nodes, preds.offsets
    moved, same = moves(traj, off)  # each step once: the link check's and the repeat count's
    owner = owners(off)
    jumps = _check(table, preds, ref, ref_off, graph, prof, how.subset, moved, owner, pc)
    repeats = np.bincount(owner[same], minlength=len(preds.episodes))
    spd = graph.hops(traj[off[1:] - 1], ref[ref_off[1:] - 1])
    tc = task_completion(spd)
    osa = rules.edit_distance == "osa"
    sed, edits = sed_batch(
        traj, off, ref, ref_off, tc, transpositions=osa, collapse_repeats=rules.collapse_repeats
    )
    steps = np.diff(off) - 1
    per = {
        "task_completion": tc, "spd": spd, "sed": sed, "edit_distance": edits,
        "moves": (steps - repeats).astype(np.float64), "steps": steps.astype(np.float64),
        "repeated_viewpoints": repeats.astype(np.int64), "jumps": jumps,
        "unreachable": (~np.isfinite(spd)).astype(np.int64),
    }  # fmt: skip
    units = {"SPD": "hops"}  # rates stay fractions (spec/outputs.md): no unit of their own
    return _build(table, preds, per, prof, how, NAV_COLUMNS, units, data_version, ("SED", "TC"))


def _build(
    table: EpisodeTable,
    preds: Predictions,
    per: dict[str, np.ndarray],
    prof: Profile,
    how: ScoreOptions,
    columns: dict[str, str],
    units: dict[str, str],
    version: str | None,
    ordered: tuple[str, ...],
) -> Result:
    """The result of the ``columns`` metrics, annotated with the street rules; the ``ordered``
    metrics are checked to be non-decreasing."""
    view = dataclasses.replace(prof, metrics=tuple(columns))
    parts = summarise(
        table, preds, per, view, **summary_options(how), columns=columns, data_version=version
    )
    rules = _rules(prof)
    parts.profile = prof
    parts.units = units
    scoring = parts.protocol["scoring"]
    osa = rules.edit_distance == "osa"
    scoring["edit_distance"] = "optimal string alignment" if osa else "Levenshtein"
    scoring["sdr_wrap_360"] = rules.sdr_wrap
    scoring["sdr_frame_px"] = list(rules.sdr_frame)
    values = [parts.metrics.get(label) for label in ordered]
    if all(v is not None for v in values):
        for lo, hi, a, b in zip(ordered, ordered[1:], values, values[1:], strict=False):
            parts.add_check(f"{lo} <= {hi}", a <= b + 1e-12, f"{lo} {a:.6f}, {hi} {b:.6f}")  # type: ignore[operator]
    return parts.build(table, preds.episodes, per)


class SDRScorer:
    """Touchdown routes loaded once for SDR (the ``open_scorer`` of ``touchdown-sdr``).

    Options:
        data_version: as :class:`TouchdownScorer`.
    """

    def __init__(self, request: SplitRequest) -> None:
        self.routes, _, self.data_version = _routes(request)
        self.task, self.profile = request.task.name, request.profile
        self.episodes = self.routes.sdr

    def score(self, predictions: PredictionsInput, how: ScoreOptions) -> Result:
        """Scores Touchdown SDR predictions (a file, its bytes or its records)."""
        return score_sdr(
            self.routes, predictions, self.profile, how, data_version=self.data_version
        )


def _examples_are(routes: TouchdownRoutes) -> str:
    """What an SDR example is, for the completeness message: a route and panorama with a known
    location, or any pair when every pair is one (the public copy a server checks with gives
    every pair a location: which ones are known is a label)."""
    every = len(routes.sdr) == len(SDR_KINDS) * len(routes.table)
    return "route and pre/main/post panorama" + ("" if every else " with a known location")


def score_sdr(
    routes: TouchdownRoutes,
    predictions: PredictionsInput,
    prof: Profile,
    how: ScoreOptions = DEFAULT_OPTIONS,
    *,
    data_version: str | None = None,
) -> Result:
    """Scores SDR predictions (a file, its bytes or its records) against the routes' known
    Touchdown locations."""
    rules = _rules(prof)
    table = routes.sdr
    pc = ProblemCollector(source_name(predictions))
    preds, points = parse_sdr_predictions(
        predictions, table, frame=rules.sdr_frame, routes=routes.table, collect=pc
    )
    missing = None
    if preds.missing and prof.require_complete and not how.subset:
        what = f"{len(preds.missing)} of {len(table)} SDR examples ({_examples_are(routes)})"
        stray = stray_ids(preds.unknown, advice=STRAY_ADVICE)
        missing = incomplete(what, preds.missing, prof, stray)
    check_matches(table, preds, pc, missing)
    if missing is not None:
        pc.add_first(missing)  # before the records' problems: many malformed never hide it
    pc.raise_if_any()
    target = routes.target[preds.episodes] * np.asarray(rules.sdr_frame)
    dist = sdr_distance(points, target, width=rules.sdr_frame[0] if rules.sdr_wrap else None)
    dist = np.atleast_1d(np.asarray(dist, dtype=np.float64))
    per = {
        "sdr_distance": dist,
        **{f"sdr_acc{r}": np.atleast_1d(sdr_accuracy(dist, radius=r)) for r in (40, 80, 120)},
    }
    units = {"SDR_dist": "px"}
    ordered = ("SDR@40", "SDR@80", "SDR@120")
    return _build(table, preds, per, prof, how, SDR_COLUMNS, units, data_version, ordered)
