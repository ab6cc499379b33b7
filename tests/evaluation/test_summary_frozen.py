"""The summary JSON and per-episode table ``vlneval score`` writes, frozen byte for byte.

The golden files in ``golden/`` were written by the CLI before the typed ``Result`` replaced the
patched summary dict; every task writes exactly what it wrote then. Only what depends on the
machine is normalised: the folder the fixtures live in (``<TMP>``), the data root (``<DATA>``), the packaged demo data (``<DEMO>``)
and the software versions of the protocol card. ``VLNEVAL_WRITE_GOLDEN=1`` rewrites the files
(after an intended change of the output, to be reviewed in the diff).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import real_data_path
from vlneval.cli.main import main
from vlneval.tasks.common.root import demo_root

GOLDEN = Path(__file__).parent / "golden"
LARGE = 50_000
SOFTWARE = re.compile(rb'"software": \{[^{}]*\}')
SEQ = "predictions/r2r/seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_5000.json.gz"


def _demo(tmp: Path) -> list[str]:
    return ["--task", "demo"]


def _r2r_real(tmp: Path) -> list[str]:
    data = real_data_path()
    if not (data / SEQ).is_file():
        pytest.skip("real data not found")
    return ["--task", "r2r", "--split", "val_unseen", "--data-root", str(data),
            "--predictions", str(data / SEQ)]  # fmt: skip


def _ndh(tmp: Path) -> list[str]:
    from tests.tasks.cvdn.fixture import make_root, predictions

    root = make_root(tmp / "root")
    return ["--task", "ndh", "--split", "val_seen", "--data-root", str(root),
            "--predictions", str(predictions(tmp))]  # fmt: skip


def _hanna(tmp: Path, asks: bool = True) -> list[str]:
    from tests.tasks.hanna.fixture import RUNS, make_root, predictions

    root = make_root(tmp / "root")
    runs = RUNS if asks else {k: (v, None) for k, (v, _) in RUNS.items()}
    return ["--task", "hanna", "--data-root", str(root), "--predictions", str(predictions(tmp, runs))]  # fmt: skip


def _touchdown(tmp: Path) -> list[str]:
    from tests.tasks.touchdown.fixture import make_root, nav

    root = make_root(tmp / "root")
    return ["--task", "touchdown", "--data-root", str(root), "--predictions", str(nav(tmp))]


def _touchdown_sdr(tmp: Path) -> list[str]:
    from tests.tasks.touchdown.fixture import SDR, make_root, write

    root = make_root(tmp / "root")
    return ["--task", "touchdown-sdr", "--data-root", str(root),
            "--predictions", str(write(tmp, SDR))]  # fmt: skip


def _reverie(tmp: Path) -> list[str]:
    from tests.tasks.reverie.reverie_fixtures import dump, rev_preds, reverie_root

    hand = {
        "1_7_0": (["S", "A", "B"], 7),
        "1_7_1": (["S", "G"], "8"),
        "2_9_0": (["S", "A"], 9),
        "2_9_1": (["S", "G", "S"], None),
    }
    root = reverie_root(tmp / "root")
    preds = dump(tmp / "preds.json", rev_preds(hand))
    return ["--task", "reverie", "--split", "val", "--data-root", str(root),
            "--predictions", str(preds)]  # fmt: skip


def _soon(tmp: Path) -> list[str]:
    from tests.tasks.soon.soon_fixtures import dump, soon_preds, soon_root

    root = soon_root(tmp / "root")
    preds = dump(tmp / "preds.json", soon_preds())
    return ["--task", "soon", "--split", "val", "--data-root", str(root),
            "--predictions", str(preds)]  # fmt: skip


def _vlnce(tmp: Path, carried: bool = True) -> list[str]:
    from tests.tasks.vlnce.helpers import steps, write_split

    episodes, _ = write_split(tmp)
    line = [[0.0, 0.0, -float(k)] for k in range(5)]
    dists = [4.0 - k for k in range(5)] if carried else None
    body = {"1": steps(line, dists), "2": steps(line[:3], dists[:3] if dists else None)}
    preds = tmp / "ce_preds.json"
    preds.write_text(json.dumps(body))
    return ["--task", "r2r-ce", "--split", "val", "--episodes", str(episodes),
            "--predictions", str(preds)]  # fmt: skip


CASES: dict[str, Callable[[Path], list[str]]] = {
    "demo": _demo,
    "r2r_val_unseen_seq2seq_5000": _r2r_real,
    "ndh": _ndh,
    "hanna": _hanna,
    "hanna_no_asks": lambda tmp: _hanna(tmp, asks=False),
    "touchdown": _touchdown,
    "touchdown_sdr": _touchdown_sdr,
    "reverie": _reverie,
    "soon": _soon,
    "vlnce_carried": _vlnce,
    "vlnce_no_distance": lambda tmp: _vlnce(tmp, carried=False),
}


def _normalise(raw: bytes, tmp: Path) -> bytes:
    raw = SOFTWARE.sub(b'"software": "<SOFTWARE>"', raw)
    raw = raw.replace(str(tmp).encode(), b"<TMP>")
    raw = raw.replace(str(demo_root()).encode(), b"<DEMO>")
    return raw.replace(str(real_data_path()).encode(), b"<DATA>")


@pytest.mark.parametrize("name", sorted(CASES))
def test_summary_and_rows_are_unchanged(name: str, tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    args = CASES[name](work)
    summary, rows = tmp_path / "summary.json", tmp_path / "rows.jsonl"
    code = main(["score", *args, "--json", str(summary), "--per-episode", str(rows), "--quiet"])
    assert code == 0
    for path, suffix in ((summary, ".json"), (rows, ".rows.jsonl")):
        got = _normalise(path.read_bytes(), work)
        if len(got) > LARGE:  # a real split's table: its digest, not 1 MB of rows in the repo
            got, suffix = hashlib.sha256(got).hexdigest().encode() + b"\n", suffix + ".sha256"
        golden = GOLDEN / f"{name}{suffix}"
        if os.environ.get("VLNEVAL_WRITE_GOLDEN") == "1":
            golden.write_bytes(got)
        assert got == golden.read_bytes(), f"{golden.name} changed"
