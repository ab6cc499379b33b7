"""The metric kernels compile nothing: scoring imports no numba, and a slow first compile of the
kernels that keep numba says so on stderr (only a compile: not a cache read, not slow work)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vlneval import _compiling

SRC = Path(__file__).resolve().parents[2] / "src"

SCORE_WITHOUT_NUMBA = """
import sys
import numpy as np
from vlneval.metrics import cls, dtw, ndtw, score_batch
from vlneval.metrics.edit import sed_batch
from vlneval.metrics.progress import region_distances
from vlneval.tasks.common._steps import step_counts
import vlneval.graph.street

D = np.array([[0, 4, 8, 4], [4, 0, 4, 8], [8, 4, 0, 4], [4, 8, 4, 0]], float)
off = lambda *lens: np.cumsum([0, *lens])
score_batch(D.ravel(), np.array([0]), np.array([4]), np.array([0, 0]),
            np.array([0, 1, 2, 3, 0, 3]), off(4, 2), np.array([0, 1, 2, 3] * 2), off(4, 4),
            np.array([3, 3]), off(1, 1))
dtw([0, 1], [0, 3], distances=D), ndtw([0, 1], [1], distances=D), cls([0], [0, 1], distances=D)
region_distances(D.ravel(), np.array([0]), np.array([4]), np.array([0]), np.array([0, 1]),
                 off(2), np.array([3]), off(1))
step_counts(np.array([0, 1]), off(2), np.array([0]), np.ones(16, bool), np.array([0]), np.array([4]))
sed_batch(np.array([0, 1]), off(2), np.array([0, 2]), off(2), np.array([1.0]))
print(",".join(m for m in ("numba", "llvmlite") if m in sys.modules))
"""


def test_scoring_imports_no_numba() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", SCORE_WITHOUT_NUMBA],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == ""


def test_a_slow_first_call_prints_one_notice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import numba

    monkeypatch.setattr(_compiling, "NOTICE_AFTER_S", 0.0)
    monkeypatch.setattr(_compiling, "_done", set())

    def inc(a: int) -> int:
        return a + 1

    with _compiling.first_call("a test kernel"):
        assert numba.njit(inc)(1) == 2  # a new function: numba compiles it
    err = capsys.readouterr().err
    assert err.startswith(
        "vlneval: compiling a test kernel (first use after install; cached for later runs)...\n"
        "vlneval: a test kernel ready ("
    )
    with _compiling.first_call("a test kernel"):  # the second call is silent
        assert numba.njit(inc)(2) == 3
    assert capsys.readouterr().err == ""


def test_quiet_silences_the_compiling_notice(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    import numba

    from vlneval.cli.common import run_guarded

    monkeypatch.setattr(_compiling, "NOTICE_AFTER_S", 0.0)
    monkeypatch.setattr(_compiling, "_done", set())

    def dec(a: int) -> int:
        return a - 1

    def command(args: argparse.Namespace) -> int:
        with _compiling.first_call("a quiet test kernel"):
            return int(numba.njit(dec)(1))  # a new function: numba compiles it

    assert run_guarded(command, argparse.Namespace(quiet=True)) == 0
    assert capsys.readouterr() == ("", "")  # --quiet: no notice
    assert _compiling._silent == [0]


def test_a_quick_first_call_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    with _compiling.first_call("a quick test kernel"):
        pass
    assert capsys.readouterr().err == ""


def test_a_slow_first_call_that_compiles_nothing_is_silent(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The street graph's first query does the searches of every route: slow, no compile."""
    monkeypatch.setattr(_compiling, "NOTICE_AFTER_S", 0.01)
    monkeypatch.setattr(_compiling, "_done", set())
    with _compiling.first_call("a slow test kernel"):
        time.sleep(0.2)
    assert capsys.readouterr().err == ""


KERNEL = """
import numba

@numba.njit(cache=True)
def add(a, b):
    return a + b
"""


def test_a_kernel_read_from_numba_cache_is_silent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another process compiled and cached the kernel: this one reads it and says nothing."""
    (tmp_path / "vlneval_cached_kernel_probe.py").write_text(KERNEL)
    code = "import vlneval_cached_kernel_probe as k; k.add(1, 2)"
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(_compiling, "NOTICE_AFTER_S", 0.0)
    monkeypatch.setattr(_compiling, "_done", set())
    import vlneval_cached_kernel_probe as probe  # type: ignore[import-not-found]

    with _compiling.first_call("a cached test kernel"):
        assert probe.add(1, 2) == 3
    assert sum(probe.add.stats.cache_hits.values()) == 1  # read, not compiled
    assert capsys.readouterr().err == ""
    monkeypatch.delitem(sys.modules, "vlneval_cached_kernel_probe")


def _plain_dtw(d: list[list[float]], ref: list[int], traj: list[int]) -> float:
    inf = float("inf")
    if not traj:
        return inf
    prev = [inf] * (len(traj) + 1)
    prev[0] = 0.0
    for r in ref:
        cur = [inf] * (len(traj) + 1)
        for j, p in enumerate(traj, start=1):
            cur[j] = d[r][p] + min(prev[j], cur[j - 1], prev[j - 1])
        prev = cur
    return prev[-1]


def _plain_length(d: list[list[float]], path: list[int]) -> float:
    total = 0.0
    for a, b in zip(path, path[1:], strict=False):
        if a != b:
            total += d[a][b]
    return total


def test_batch_values_equal_a_plain_loop_to_the_last_bit() -> None:
    """Left-to-right sums, one addition per DTW cell, the C library's exp: what a per-episode
    loop computes, bit for bit (np.add.reduceat and numpy's SIMD exp would not be)."""
    import math

    import numpy as np

    from vlneval.metrics import score_batch

    rng = np.random.default_rng(11)
    n = 23
    pts = rng.normal(size=(n, 3)) * 7
    table = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1))
    d = table.tolist()
    trajs = [rng.integers(0, n, int(rng.integers(0, 40))).tolist() for _ in range(60)]
    refs = [rng.integers(0, n, int(rng.integers(1, 15))).tolist() for _ in range(60)]
    lens = np.cumsum
    out = score_batch(
        table.ravel(), np.array([0]), np.array([n]), np.zeros(60, int),
        np.array(sum(trajs, []), int), lens([0] + [len(t) for t in trajs]),
        np.array(sum(refs, []), int), lens([0] + [len(r) for r in refs]),
        np.array([r[-1] for r in refs]), np.arange(61), collapse_repeats=False,
    )  # fmt: skip
    for e, (traj, ref) in enumerate(zip(trajs, refs, strict=True)):
        assert out["path_length"][e] == _plain_length(d, traj)
        assert out["reference_length"][e] == _plain_length(d, ref)
        dtw = _plain_dtw(d, ref, traj)
        assert out["dtw"][e] == dtw
        ndtw = math.exp(-dtw / (len(ref) * 3.0)) if dtw < float("inf") else 0.0
        assert out["ndtw"][e] == ndtw
        cls = 0.0
        if traj:
            pc = 0.0
            for r in ref:
                pc += math.exp(-min(d[r][p] for p in traj) / 3.0)
            pc /= len(ref)
            epl = pc * _plain_length(d, ref)
            denom = epl + abs(epl - _plain_length(d, traj))
            cls = pc * (1.0 if denom == 0.0 else epl / denom)
        assert out["cls"][e] == cls


def test_silenced_counts_under_the_lock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads enter and leave ``silenced()`` at once: each count is taken under the lock."""
    import threading

    seen: list[int] = []

    class Lock:
        def __enter__(self) -> None:
            seen.append(_compiling._silent[0])

        def __exit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(_compiling, "_lock", Lock())
    with _compiling.silenced():
        assert seen == [0]
    assert seen == [0, 1] and _compiling._silent == [0]
    monkeypatch.undo()

    def many() -> None:
        for _ in range(2000):
            with _compiling.silenced():
                pass

    threads = [threading.Thread(target=many) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _compiling._silent == [0]
