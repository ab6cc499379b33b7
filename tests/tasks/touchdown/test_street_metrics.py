"""The street graph, edit distances (against a plain re-implementation), TC/SPD/SDR kernels, GP."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tasks.touchdown.fixture import LINKS, NODES
from vlneval.errors import InvalidInputError
from vlneval.graph.street import parse_street_graph
from vlneval.metrics import edit
from vlneval.metrics.edit import edit_distance, sed, sed_batch
from vlneval.metrics.progress import goal_progress, region_distances
from vlneval.metrics.street import (
    sdr_accuracy,
    sdr_distance,
    shortest_path_distance,
    task_completion,
)


def _reference_distance(a: list[int], b: list[int], osa: bool) -> int:
    """Textbook full-matrix Levenshtein / optimal string alignment."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if osa and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


SEQ = st.lists(st.integers(0, 4), max_size=9)


@settings(max_examples=300, deadline=None)
@given(SEQ, SEQ, st.booleans())
def test_edit_distance_matches_textbook(a: list[int], b: list[int], osa: bool) -> None:
    assert edit_distance(a, b, transpositions=osa) == _reference_distance(a, b, osa)
    assert edit_distance(b, a, transpositions=osa) == edit_distance(a, b, transpositions=osa)


@settings(max_examples=100, deadline=None)
@given(st.lists(SEQ.filter(bool), min_size=1, max_size=6), st.data())
def test_sed_batch_equals_single(trajs: list[list[int]], data: st.DataObject) -> None:
    refs = [data.draw(SEQ.filter(bool)) for _ in trajs]
    success = np.array([data.draw(st.sampled_from([0.0, 1.0])) for _ in trajs])
    off = lambda seqs: np.cumsum([0, *map(len, seqs)])  # noqa: E731
    flat = lambda seqs: np.array([v for s in seqs for v in s], dtype=np.int64)  # noqa: E731
    s, _ = sed_batch(flat(trajs), off(trajs), flat(refs), off(refs), success)
    single = [sed(t, r, success=x) for t, r, x in zip(trajs, refs, success, strict=True)]
    assert s.tolist() == pytest.approx(single)
    assert all(0.0 <= v <= 1.0 for v in s)


def test_edit_distances_pad_each_pair_to_like_lengths_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One 2,000-step route among short ones used to pad every pair to 2,000 x 2,000 cells.
    rng = np.random.default_rng(7)
    trajs = [rng.integers(0, 3, 2000).tolist()] + [rng.integers(0, 3, 6).tolist()] * 40
    refs = [rng.integers(0, 3, n).tolist() for n in [5, *range(1, 41)]]
    pairs_of = list(zip(trajs, refs, strict=True))
    cells: list[int] = []
    pairs = edit._pairs

    def counted(*args: np.ndarray) -> np.ndarray:
        la, lb = args[2], args[4]
        cells.append(la.size * int(la.max()) * int((la + lb).max()))
        return pairs(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(edit, "_pairs", counted)
    off = lambda seqs: np.cumsum([0, *map(len, seqs)])  # noqa: E731
    flat = lambda seqs: np.array([v for s in seqs for v in s], dtype=np.int64)  # noqa: E731
    for osa in (False, True):
        _, d = sed_batch(
            flat(trajs), off(trajs), flat(refs), off(refs), np.ones(len(trajs)),
            transpositions=osa, collapse_repeats=False,
        )  # fmt: skip
        assert d.tolist() == [_reference_distance(t, r, osa) for t, r in pairs_of]
    own = sum(min(len(t), len(r)) * (len(t) + len(r)) for t, r in pairs_of)
    assert sum(cells) <= 2 * 4 * own  # each pair padded at most 2x per side, twice (osa)


def test_sed_hand_values() -> None:
    # Repeats are removed first: a a b c vs a b c is a perfect match.
    assert sed(["a", "a", "b", "c"], ["a", "b", "c"], success=1) == 1.0
    # a x y d vs a b c d: 2 substitutions over 4.
    assert sed(["a", "x", "y", "d"], ["a", "b", "c", "d"], success=1) == 0.5
    # a c b d vs a b c d: Levenshtein 2, OSA 1.
    assert sed(list("acbd"), list("abcd"), success=1) == 0.5
    assert sed(list("acbd"), list("abcd"), success=1, transpositions=True) == 0.75
    assert sed(list("abcd"), list("abcd"), success=0) == 0.0
    with pytest.raises(InvalidInputError):
        sed("abcd", list("abcd"), success=1)
    with pytest.raises(InvalidInputError):
        sed(list("ab"), list("ab"), success=0.5)


def test_street_graph_structure() -> None:
    g = parse_street_graph(NODES, LINKS)
    p = g.index
    assert g.n == 8 and len(g.link_src) == 13
    assert g.neighbours(p["p4"]).tolist() == sorted([p["p3"], p["p6"]])  # the one-way link counts
    assert g.links(p["p6"]) == {90: p["p5"], 30: p["p4"]} and g.links(p["p4"]) == {180: p["p3"]}
    assert g.neighbours(p["z"]).tolist() == []
    hops = g.hops(
        np.array([p["p0"], p["p3"], p["p3"], p["z"]]),
        np.array([p["p6"], p["p6"], p["p5"], p["p0"]]),
    )
    assert hops.tolist() == [4.0, 2.0, 2.0, np.inf]
    assert g.hops_from(p["p0"]).tolist() == [0, 1, 2, 3, 4, 3, 4, np.inf]
    assert g.hops_from(p["p0"]) is g.hops_from(p["p0"])  # cached
    with pytest.raises(InvalidInputError):
        g.hops(np.array([0]), np.array([99]))


def test_tc_spd_sdr_kernels() -> None:
    g = parse_street_graph(NODES, LINKS)
    assert shortest_path_distance(g.index["p3"], g.index["p5"], graph=g) == 2.0
    assert task_completion(np.array([0, 1, 2, np.inf])).tolist() == [1, 1, 0, 0]
    assert sdr_distance((0, 0), (3, 4)) == 5.0
    assert sdr_distance((3679, 10), (1, 10), width=3680) == 2.0
    assert sdr_distance((3679, 10), (1, 10)) == 3678.0
    assert sdr_accuracy(np.array([39.99, 40.0, 79.0]), radius=40).tolist() == [1, 0, 0]
    with pytest.raises(InvalidInputError):
        sdr_distance((np.nan, 0), (0, 0))
    with pytest.raises(InvalidInputError):
        task_completion(-1.0)


def test_goal_progress_hand_values() -> None:
    # Path graph a-b-c-d with 2 m edges: from a to c towards region {d}: 6 -> 2.
    D = np.array([[0, 2, 4, 6], [2, 0, 2, 4], [4, 2, 0, 2], [6, 4, 2, 0]], float)
    assert goal_progress([0, 1, 2], [3], distances=D) == 4.0
    assert goal_progress([2, 1, 0], [3], distances=D) == -4.0
    assert goal_progress([0], [3, 0], distances=D) == 0.0
    inf = np.full((2, 2), np.inf)
    np.fill_diagonal(inf, 0)
    assert np.isnan(goal_progress([0], [1], distances=inf))
    r = region_distances(
        D.ravel(),
        np.array([0]),
        np.array([4]),
        np.array([0]),
        np.array([0, 2, 1]),
        np.array([0, 3]),
        np.array([3]),
        np.array([0, 1]),
    )
    assert (r["start"][0], r["final"][0], r["oracle"][0], r["goal_progress"][0]) == (
        6.0,
        4.0,
        2.0,
        2.0,
    )
    with pytest.raises(InvalidInputError):
        goal_progress([], [3], distances=D)
