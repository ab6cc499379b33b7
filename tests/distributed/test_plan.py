"""Shard plans: exact cover, balanced sizes, determinism, scans kept together."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vlneval.distributed import plan
from vlneval.distributed.plan import shard_sizes

ids_and_scans = st.lists(
    st.tuples(st.text(min_size=1, max_size=6), st.sampled_from("ABCDEFG")),
    max_size=150,
    unique_by=lambda t: t[0],
)


@settings(max_examples=200, deadline=None)
@given(ids_and_scans, st.integers(1, 24), st.booleans())
def test_every_plan_is_an_exact_cover_with_balanced_sizes(
    pairs: list[tuple[str, str]], n: int, balance: bool
) -> None:
    ids, scans = [p[0] for p in pairs], [p[1] for p in pairs]
    shards = plan(ids, n, scans=scans, balance_scans=balance)
    flat = sorted(i for s in shards for i in s)
    assert flat == list(range(len(ids)))
    assert [len(s) for s in shards] == shard_sizes(len(ids), n)
    assert all(s == sorted(s) for s in shards)
    assert plan(list(ids), n, scans=list(scans), balance_scans=balance) == shards


def test_remainder_goes_to_the_first_shards() -> None:
    assert [len(s) for s in plan([str(i) for i in range(10)], 4)] == [3, 3, 2, 2]


def test_balance_keeps_scans_whole_where_they_fit() -> None:
    scans = list("AAABBBCCCDDD")
    shards = plan([str(i) for i in range(12)], 4, scans=scans, balance_scans=True)
    assert [{scans[i] for i in s} for s in shards] == [{"A"}, {"B"}, {"C"}, {"D"}]
    # a scan larger than a shard is split, and only it
    scans = list("AAAAAAABBC")
    shards = plan([str(i) for i in range(10)], 2, scans=scans, balance_scans=True)
    per_scan = {c: sum(1 for s in shards if any(scans[i] == c for i in s)) for c in "ABC"}
    assert per_scan == {"A": 2, "B": 1, "C": 1}
