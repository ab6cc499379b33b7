"""The result parsing of ``benchmarks/bench_official.py``: the official scorer's printed summary."""

from __future__ import annotations

import argparse
import math
import pprint
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fidelity  # noqa: E402
from bench_official import MULTI_FILE  # noqa: E402
from official_runner import install_stubs  # noqa: E402

SUMMARY = {
    "length": np.float64(8.230151855941534),
    "nav_error": np.float64(7.997559874839925),
    "oracle success_rate": 0.2822477650063857,
    "success_rate": 0.21030225627926777,
    "spl": np.float64(0.1825830287576982),
}


def printed(path: str, summary: dict[str, object]) -> str:
    """What the official script prints for one file (``eval_seq2seq``'s form)."""
    return f"\n{path}\n" + pprint.PrettyPrinter(indent=4).pformat(summary) + "\n"


def test_parses_numpy_scalars_exactly() -> None:
    [(path, values)] = fidelity.parse_official_output(printed("/w/a.json", SUMMARY))
    assert path == "/w/a.json"
    assert values == {
        "TL": 8.230151855941534,
        "NE": 7.997559874839925,
        "OSR": 0.2822477650063857,
        "SR": 0.21030225627926777,
        "SPL": 0.1825830287576982,
    }
    assert list(values) == ["TL", "NE", "OSR", "SR", "SPL"]


def test_parses_plain_floats_and_several_files() -> None:
    plain = {k: float(v) for k, v in SUMMARY.items()}
    plain["spl"] = 1e-05
    text = printed("/w/a.json", plain) + printed("/w/b c.json", {"nav_error": float("nan")})
    (a, va), (b, vb) = fidelity.parse_official_output(text)
    assert (a, b) == ("/w/a.json", "/w/b c.json")
    assert va["SPL"] == 1e-05 and va["TL"] == 8.230151855941534
    assert list(vb) == ["NE"] and math.isnan(vb["NE"])


def test_ignores_unknown_keys_and_other_output() -> None:
    text = "Error: something\n" + printed("/w/a.json", {"total": 3, "spl": 0.5})
    assert fidelity.parse_official_output(text) == [("/w/a.json", {"SPL": 0.5})]
    assert fidelity.parse_official_output(printed("/w/x.json", {"other": 1.0})) == []


def test_compare_flags_differences_beyond_tolerance() -> None:
    rows = fidelity.compare(
        {"TL": 8.0, "SR": 0.25, "SPL": 0.2}, {"TL": 8.0 + 1e-12, "SR": 0.26, "nDTW": 0.4}
    )
    assert [(r.label, r.equal) for r in rows] == [("TL", True), ("SR", False), ("SPL", False)]
    assert rows[1].difference == pytest.approx(0.01)
    assert math.isnan(rows[2].difference)  # vlneval has no SPL


def test_multi_file_detection_reads_argparse_usage() -> None:
    for nargs, expected in (("+", True), ("*", True), (None, False)):
        p = argparse.ArgumentParser(prog="vlneval score")
        p.add_argument("--task")
        p.add_argument("--predictions", nargs=nargs)
        assert bool(MULTI_FILE.search(p.format_help())) is expected


def test_stubs_refuse_to_be_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "env", raising=False)
    monkeypatch.delitem(sys.modules, "agent", raising=False)
    install_stubs()
    from agent import BaseAgent  # type: ignore[import-not-found]
    from env import R2RBatch  # type: ignore[import-not-found]

    with pytest.raises(RuntimeError, match="benchmark stub"):
        R2RBatch(None, batch_size=1)
    with pytest.raises(RuntimeError, match="benchmark stub"):
        BaseAgent.get_agent("Stop")
    monkeypatch.delitem(sys.modules, "env")
    monkeypatch.delitem(sys.modules, "agent")
