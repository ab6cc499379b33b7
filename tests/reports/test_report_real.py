"""The README's commands on the real R2R predictions: NaviLLM's report, seq2seq 5000 vs 20000."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.reports.browser import open_in_browser
from vlneval.cli.main import main

P = "predictions/r2r"
NAVILLM = P + "/navillm_sadanand1120/navillm_val_unseen_compact.json.gz"
SEQ = P + "/seq2seq_r2r_baseline_sadanand1120/seq2seq_sample_imagenet_val_unseen_iter_{}.json.gz"


def test_navillm_report_in_a_browser(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, data = tmp_path / "navillm.html", tmp_path / "navillm.json"
    code = main([
        "report", "--task", "r2r", "--split", "val_unseen", "--data-root", str(data_root),
        "--predictions", str(data_root / NAVILLM), "--skip-summary-records",
        "--out", str(out), "--json", str(data),
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    record = json.loads(data.read_text())
    assert record["metrics"]["SR"] == pytest.approx(0.6709237973605789, abs=1e-12)
    sr = record["diagnostics"]["intervals"]["SR"]
    assert sr["low"] < sr["estimate"] < sr["high"] and sr["n"] == 2349
    seen = open_in_browser(out)
    assert seen.console == [] and seen.errors == [] and seen.failed_requests == []
    assert len(seen.image_widths) == 6 + 6 + 4 and min(seen.image_widths) > 0
    assert "2349 of 2349 episodes" in seen.text
    assert "1576 (67.1%)" in seen.text  # reached and stopped


def test_seq2seq_comparison(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scipy.stats import binomtest

    out = tmp_path / "cmp.json"
    args = [
        "compare", "--task", "r2r", "--split", "val_unseen", "--data-root", str(data_root),
        str(data_root / SEQ.format(5000)), str(data_root / SEQ.format(20000)), "--json", str(out),
    ]  # fmt: skip
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "· resampled by path, 783 paths, seed 0" in captured.out
    record = json.loads(out.read_text())
    assert record["settings"] == {
        "n_resamples": 2000, "n_permutations": 10000, "confidence": 0.95, "correction": "holm",
        "seed": 0, "resampling": "paths", "n_paths": 783,
    }  # fmt: skip
    rows = {r["metric"]: r for r in record["metrics"]}
    sr = rows["SR"]  # the README's line: whole paths resampled, their signs flipped together
    assert sr["test"] == "cluster-permutation-monte-carlo"
    shown = [f"{100 * sr[k]:.2f}" for k in ("ci_low", "ci_high")]
    assert shown + [f"{sr['p_value']:.4f}", f"{sr['p_holm']:.4f}"] == [
        "1.40", "6.13", "0.0025", "0.0150",
    ]  # fmt: skip

    assert main([*args, "--by-episode"]) == 0  # the episode unit and McNemar's test, as before
    assert "· resampled by episode, seed 0" in capsys.readouterr().out
    record = json.loads(out.read_text())
    assert record["n_paired"] == 2349 and record["forced"] is False
    assert record["success_pairs"] == {"both": 181, "only_a": 224, "only_b": 313, "neither": 1631}
    assert record["settings"]["resampling"] == "episodes" and "n_paths" not in record["settings"]
    rows = {r["metric"]: r for r in record["metrics"]}
    assert rows["SR"]["difference_B_minus_A"] == pytest.approx((494 - 405) / 2349, abs=1e-12)
    assert rows["SR"]["p_value"] == pytest.approx(binomtest(224, 537, 0.5).pvalue, rel=1e-12)
    assert rows["SR"]["ci_low"] > 0  # iteration 20000 succeeds more often, beyond doubt
    assert rows["nDTW"]["ci_low"] < 0 < rows["nDTW"]["ci_high"]  # but follows paths no better
    sr = rows["SR"]
    shown = [f"{100 * sr[k]:.2f}" for k in ("ci_low", "ci_high")]
    assert shown + [f"{sr['p_value']:.4f}", f"{sr['p_holm']:.4f}"] == [
        "1.92", "5.75", "0.0001", "0.0008",
    ]  # fmt: skip
