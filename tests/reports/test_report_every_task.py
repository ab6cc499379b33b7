"""``vlneval report`` works for every registered task, not only those with a navigation error:
each task's fixture (and the real Touchdown dev routes) goes through the command, and the page
shows the distribution and the worst episodes of the task's own error metric."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from vlneval.cli.main import main

Capture = pytest.CaptureFixture[str]
#: task -> (its fixture's command-line arguments, given a temporary folder).
Setup = Callable[[Path], list[str]]


def _cli(task: str, split: str, predictions: Path, root: Path | None, *extra: str) -> list[str]:
    data = ["--data-root", str(root)] if root is not None else []
    return ["--task", task, "--split", split, *data, "--predictions", str(predictions), *extra]


def _demo(tmp: Path) -> list[str]:
    from vlneval.tasks.common.root import demo_root

    return ["--task", "demo", "--predictions", str(demo_root() / "demo" / "predictions_val.json")]


def _r2r(tmp: Path) -> list[str]:
    from tests.reports.house import house_root, write_predictions

    root, preds = house_root(tmp / "root"), write_predictions(tmp / "p.json")
    return _cli("r2r", "val", preds, root)


def _rxr(tmp: Path) -> list[str]:
    from tests.tasks.r2r.test_rxr import _root

    p = tmp / "preds.jsonl"
    p.write_text(
        '{"instruction_id": 11, "path": ["S", "G"]}\n'
        '{"instruction_id": 12, "path": ["S", "A", "B", "G"]}\n'
    )
    return _cli("rxr", "val_unseen", p, _root(tmp / "root"))


def _ndh(tmp: Path) -> list[str]:
    from tests.tasks.cvdn.fixture import make_root, predictions

    root, p = make_root(tmp / "root"), predictions(tmp)
    return _cli("ndh", "val_seen", p, root)


def _hanna(tmp: Path) -> list[str]:
    from tests.tasks.hanna.fixture import make_root, predictions

    root, p = make_root(tmp / "root"), predictions(tmp)
    return _cli("hanna", "val_unseen", p, root)


def _touchdown(tmp: Path) -> list[str]:
    from tests.tasks.touchdown.fixture import make_root, nav

    root, p = make_root(tmp / "root"), nav(tmp)
    return _cli("touchdown", "dev", p, root)


def _touchdown_sdr(tmp: Path) -> list[str]:
    from tests.tasks.touchdown.fixture import SDR, make_root, write

    root, p = make_root(tmp / "root"), write(tmp, SDR)
    return _cli("touchdown-sdr", "dev", p, root, "--subset")


def _reverie(tmp: Path) -> list[str]:
    from tests.tasks.reverie.reverie_fixtures import dump, rev_preds, reverie_root
    from tests.tasks.reverie.test_reverie_scoring import HAND

    p = dump(tmp / "preds.json", rev_preds(HAND, "predObjId"))
    root = reverie_root(tmp / "root")
    return _cli("reverie", "val", p, root, "--data-version", "v1")


def _soon(tmp: Path) -> list[str]:
    from tests.tasks.soon.soon_fixtures import dump, soon_preds, soon_root

    p, root = dump(tmp / "preds.json", soon_preds()), soon_root(tmp / "root")
    return _cli("soon", "val", p, root)


def _vlnce(tmp: Path) -> list[str]:
    from tests.tasks.vlnce.helpers import steps, write_split

    episodes, gt = write_split(tmp)
    line = [[0.0, 0.0, -float(k)] for k in range(5)]
    p = tmp / "p.json"
    p.write_text(json.dumps({"1": steps(line, [4.0, 3.0, 2.0, 1.0, 0.0]),
                             "2": steps(line[:2], [4.0, 3.0])}))  # fmt: skip
    return _cli("r2r-ce", "val", p, None, "--episodes", str(episodes), "--gt-file", str(gt))


SETUPS: dict[str, Setup] = {
    "demo": _demo,
    "r2r": _r2r,
    "rxr": _rxr,
    "ndh": _ndh,
    "hanna": _hanna,
    "touchdown": _touchdown,
    "touchdown-sdr": _touchdown_sdr,
    "reverie": _reverie,
    "soon": _soon,
    "r2r-ce": _vlnce,
}
#: The error metric a task's distribution and worst episodes are about.
ERROR = {"touchdown": "SPD", "touchdown-sdr": "SDR_dist"}


def _report(args: list[str], tmp: Path, capsys: Capture) -> tuple[str, dict]:  # type: ignore[type-arg]
    out, data = tmp / "r.html", tmp / "r.json"
    code = main(["report", *args, "--out", str(out), "--json", str(data), "--resamples", "50"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "internal error" not in captured.err
    return out.read_text(encoding="utf-8"), json.loads(data.read_text())


@pytest.mark.parametrize("task", sorted(SETUPS))
def test_report_every_task(task: str, tmp_path: Path, capsys: Capture) -> None:
    html, record = _report(SETUPS[task](tmp_path), tmp_path, capsys)
    assert html.startswith("<!DOCTYPE html>")
    assert record["task"] == task
    label = ERROR.get(task, "NE")  # REVERIE reports no NE but measures it: NE it is
    if task in ERROR:  # no path lengths on a street graph or a panorama
        assert f"<h2>Distributions of {label}</h2>" in html and "TL / d*" not in html
    else:
        assert f"<h2>Distributions of {label} and TL / d*</h2>" in html
    assert f"ECDF of {label}: the share of episodes with {label} ≤ x " in html


def test_touchdown_fixture_report(tmp_path: Path, capsys: Capture) -> None:
    """Touchdown has no NE, no trajectories and no metres: the page says what it shows instead,
    and its success rule is in hops."""
    html, record = _report(_touchdown(tmp_path), tmp_path, capsys)
    assert set(record["diagnostics"]["intervals"]) == {"TC", "SPD", "SED"}
    assert (
        "ECDF of SPD: the share of episodes with SPD ≤ x hops; its height at δ is about the "
        "success rate." in html
    )
    assert "success is SPD &lt;= 1 hop (the goal or a neighbour)." in html
    assert "Not available: this task's scorer does not keep trajectories." in html


def test_r2r_report_keeps_its_texts(tmp_path: Path, capsys: Capture) -> None:
    html, _ = _report(_r2r(tmp_path), tmp_path, capsys)
    assert "success is NE &lt; 3.0 m." in html
    assert (
        "ECDF of NE: the share of episodes with NE ≤ x m; its height at δ is about the success "
        "rate." in html
    )
    assert "<p class='muted'>largest navigation error first</p>" in html


def test_touchdown_real_dev_report(data_root: Path, tmp_path: Path, capsys: Capture) -> None:
    """The real unseen-area dev routes: stop at the start (SPD = the route's hops)."""
    with gzip.open(data_root / "touchdown/touchdown_unseen_split/dev.json.gz", "rt") as fh:
        routes = [json.loads(line) for line in fh]
    p = tmp_path / "stay.json"
    p.write_text(json.dumps([{"route_id": r["route_id"], "trajectory": r["route_panoids"][:1]}
                             for r in routes]))  # fmt: skip
    args = ["--task", "touchdown", "--split", "dev", "--data-root", str(data_root)]
    html, record = _report([*args, "--predictions", str(p)], tmp_path, capsys)
    assert record["n_episodes"] == 800
    assert record["diagnostics"]["intervals"]["SPD"]["n"] == 800
    assert "<h2>Distributions of SPD</h2>" in html


def test_touchdown_sdr_real_subset_report(data_root: Path, tmp_path: Path, capsys: Capture) -> None:
    """SDR on the real dev routes, only the main locations predicted (--subset), 20 px off."""
    with gzip.open(data_root / "touchdown/touchdown_unseen_split/dev.json.gz", "rt") as fh:
        routes = [json.loads(line) for line in fh]
    body = []
    for r in routes:
        c = json.loads(r["main_static_center"])
        if c != {"x": -1, "y": -1}:
            body.append({"route_id": r["route_id"], "pano": "main",
                         "x": c["x"] * 3680 + 20.0, "y": c["y"] * 800})  # fmt: skip
    p = tmp_path / "sdr.json"
    p.write_text(json.dumps(body))
    args = ["--task", "touchdown-sdr", "--split", "dev", "--data-root", str(data_root), "--subset"]
    html, record = _report([*args, "--predictions", str(p)], tmp_path, capsys)
    assert record["n_episodes"] == len(body)
    assert record["metrics"]["SDR@40"] == 1.0
    # SDR's thresholds are its own (40, 80, 120 px), not the profile's δ: no δ line
    assert "ECDF of SDR_dist: the share of episodes with SDR_dist ≤ x px." in html


def test_touchdown_comparison_report(tmp_path: Path, capsys: Capture) -> None:
    """With a baseline, the breakdowns show the baseline's TC (Touchdown has no SR)."""
    from tests.tasks.touchdown.fixture import ROUTES, nav

    (tmp_path / "ref").mkdir()
    reference = nav(tmp_path / "ref", {r["route_id"]: r["route_panoids"] for r in ROUTES})
    args = [*_touchdown(tmp_path), "--compare", str(reference)]
    html, record = _report(args, tmp_path, capsys)
    assert record["comparison"]["n_paired"] == 3
    assert '<th class="num">TC of A (baseline)</th>' in html
    assert "the last column is the baseline A&#x27;s TC." in html


def test_ndh_report_draws_episodes_and_keeps_both_ends_of_a_long_name(
    tmp_path: Path, capsys: Capture
) -> None:
    """NDH trajectories are Matterport3D graph paths: drawn as R2R's. A long file name keeps
    its start (the model) and its end (split and checkpoint), not only its last characters."""
    args = _ndh(tmp_path)
    given = Path(args[args.index("--predictions") + 1])
    long = tmp_path / "val-seq2seq-all-trusted_path-40-sample-imagenet_val_seen_iter_100.json"
    long.write_bytes(given.read_bytes())
    args[args.index("--predictions") + 1] = str(long)
    html, _ = _report(args, tmp_path, capsys)
    assert "does not keep trajectories" not in html
    assert "top-down view of the paths" in html and "<h3>Worst episodes</h3>" in html
    assert '<th class="num">val-seq2seq-all…seen_iter_100 (n, %)</th>' in html
