"""The report page says what ``vlneval report`` prints, names its runs as ``compare`` does and
reads right on odd runs (an oracle, jumps, one episode, n/a metrics): each asserts the exact
new text."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from html import escape
from pathlib import Path

import pytest

from tests.reports.conftest import House
from tests.reports.house import REFERENCES, write_predictions
from vlneval.cli import report as cli_report
from vlneval.cli.main import main
from vlneval.reports.html import report_css

Capture = pytest.CaptureFixture[str]

#: Every stop on the goal by the reference path: a shortest-path oracle.
ORACLE = {f"{k}_0": path for k, path in REFERENCES.items()}
#: From the start straight to the goal: one jump between non-adjacent viewpoints each.
TELEPORT = {f"{k}_0": [path[0], path[-1]] for k, path in REFERENCES.items()}


def _report(house: House, tmp_path: Path, *args: str) -> str:
    """The page ``vlneval report`` writes on the house."""
    out = tmp_path / "r.html"
    data = ["--task", "r2r", "--split", "val", "--data-root", str(house.root)]
    assert main(["report", *data, "--out", str(out), "--worst", "1", "--sample", "1", *args]) == 0
    return out.read_text(encoding="utf-8")


def _checks(html: str) -> str:
    return html[html.index('<section id="checks">') : html.index('<section id="protocol">')]


def test_the_oracle_note_is_on_the_page_as_on_stderr(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    oracle = write_predictions(tmp_path / "oracle.json", ORACLE)
    html = _report(house, tmp_path, "--predictions", str(oracle))
    note = (
        "note: NE is 0 on all 6 episodes (every stop on the goal): a shortest-path oracle? "
        "declare its privileged access with --protocol"
    )
    assert note in capsys.readouterr().err
    checks = _checks(html)
    assert f"<b>Warnings and notes</b><ul><li>{escape(note)}</li></ul>" in checks
    assert "No warnings." not in checks


def test_a_run_identical_to_its_baseline_is_warned_on_the_page(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    copy = tmp_path / "copy.json"
    shutil.copy(house.a, copy)
    html = _report(house, tmp_path, "--predictions", str(copy), "--compare", str(house.a))
    warning = (
        "warning: B (copy) has exactly the results of A (run_a) (every metric, to the last "
        "digit): most likely one run given twice (a copied file, or the same predictions under "
        "another name)"
    )
    assert warning in capsys.readouterr().err
    comparison = html[html.index('<section id="comparison">') :]
    assert f"<b>Warnings</b><ul><li>{escape(warning)}</li></ul>" in comparison


def test_jumps_are_counted_on_the_page_with_the_profile_rule(
    house: House, tmp_path: Path, capsys: Capture
) -> None:
    teleport = write_predictions(tmp_path / "teleport.json", TELEPORT)
    html = _report(house, tmp_path, "--predictions", str(teleport), "--profile", "r2r-duet")
    note = (
        "note: 6 of 6 episodes jump between non-adjacent viewpoints (6 jumps), scored under "
        "profile r2r-duet v1 (jumps are scored with their shortest distance; nested trajectories "
        "flattened): TL counts each jump at its shortest distance"
    )
    assert note in capsys.readouterr().err
    assert f"<li>{escape(note)}</li>" in _checks(html)
    assert "1 steps · 1 jump(s) between non-adjacent viewpoints</p>" in html  # each card too


def test_report_compare_names_same_named_files_by_their_folders(
    house: House, tmp_path: Path
) -> None:
    a, b = tmp_path / "runA" / "preds.json", tmp_path / "runB" / "preds.json"
    a.parent.mkdir(), b.parent.mkdir()
    shutil.copy(house.a, a), shutil.copy(house.b, b)
    html = _report(house, tmp_path, "--predictions", str(b), "--compare", str(a))
    assert "<h3>A: runA/preds</h3><table>" in html and "<h3>B: runB/preds</h3><table>" in html
    assert "<p><b>A</b> = runA/preds (baseline), <b>B</b> = runB/preds; 6 episodes" in html
    assert "<h3>runB/preds (B)</h3>" in html and "<h3>runA/preds (A, baseline)</h3>" in html
    assert 'download="runB_preds_per_episode.csv"' in html


def test_na_metrics_say_why_on_the_page(tmp_path: Path, capsys: Capture) -> None:
    from tests.tasks.hanna.fixture import RUNS, make_root, predictions

    root = make_root(tmp_path / "root")
    preds = predictions(tmp_path, {k: (v, None) for k, (v, _) in RUNS.items()})
    out = tmp_path / "h.html"
    argv = ["report", "--task", "hanna", "--split", "val_unseen", "--data-root", str(root),
            "--predictions", str(preds), "--out", str(out), "--worst", "0", "--sample", "0"]  # fmt: skip
    assert main(argv) == 0
    why = (
        "help_requests is n/a: the predictions have no agent_ask (help requests are not "
        "recorded); give each record agent_ask, its ask action at each step (0 do_nothing, 1 "
        "request_help)"
    )
    assert f"note: {why}" in capsys.readouterr().err
    html = out.read_text(encoding="utf-8")
    summary = html[html.index('<section id="summary">') : html.index('<section id="checks">')]
    assert f"<b>Not available</b><ul><li>{escape(why)}</li></ul>" in summary
    row = re.search(r"<tr><td><b>help_requests</b></td>.*?</tr>", summary)
    assert row is not None and '<td class="num">n/a</td>' in row.group(0)


def test_long_words_wrap_instead_of_widening_the_page() -> None:
    assert "main { overflow-wrap: anywhere; }" in report_css()
    assert "grid-template-columns: max-content minmax(0, 1fr);" in report_css()  # the card's paths


def test_the_progress_bar_counts_every_step(
    house: House, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, int] = {"calls": 0}

    @contextmanager
    def progress(total: int, label: str, quiet: bool = False) -> Iterator[object]:
        seen["total"] = total

        def step(message: str) -> None:
            seen["calls"] += 1

        yield step

    monkeypatch.setattr(cli_report, "_progress", progress)
    _report(house, tmp_path, "--predictions", str(house.b), "--compare", str(house.a))
    # 2 scored, compared, diagnosed, the comparison's figure, the distributions, 1 worst,
    # 1 sampled and 2 of the 4 disagreements (A solves no episode B fails): never past the total
    assert (seen["calls"], seen["total"]) == (10, 12)


def test_one_episode_has_no_interval_and_says_why(house: House, tmp_path: Path) -> None:
    one = write_predictions(tmp_path / "one.json", {"1_0": REFERENCES[1]})
    html = _report(house, tmp_path, "--predictions", str(one), "--subset")
    assert (
        escape(
            "TL, NE, OSR, SR, SPL, nDTW, sDTW, CLS: no interval, as the value is of one episode "
            "only; a bootstrap resamples that one value, which says nothing about other episodes."
        )
        in html
    )
    assert "the interval has zero width" not in html
    assert '<td class="num">8.00 m</td><td class="num ci">–</td><td class="num">1</td>' in html


def test_the_title_and_header_name_task_split_and_profile(house: House, tmp_path: Path) -> None:
    html = _report(house, tmp_path, "--predictions", str(house.b), "--profile", "r2r-duet")
    assert "<title>r2r val · profile r2r-duet v1 · run_b</title>" in html
    assert "<h1>r2r val · profile r2r-duet v1 · run_b</h1>" in html


def test_worst_episodes_of_equal_errors_say_so(house: House, tmp_path: Path) -> None:
    oracle = write_predictions(tmp_path / "oracle.json", ORACLE)
    html = _report(house, tmp_path, "--predictions", str(oracle))
    assert (
        "<h3>Worst episodes</h3><p class='muted'>every episode has the same navigation error "
        "(0.00 m), so none is worse: the first episodes in order</p>"
    ) in html
    assert "largest navigation error first" not in html
