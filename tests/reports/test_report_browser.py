"""The report in a real headless browser: no console errors, every image decodes."""

from __future__ import annotations

from pathlib import Path

from tests.reports.browser import open_in_browser
from vlneval.diagnostics import ScoredRun
from vlneval.reports.html import ReportOptions, build_report


def test_house_report_renders(runs: tuple[ScoredRun, ScoredRun], tmp_path: Path) -> None:
    a, b = runs
    report = build_report(b, baseline=a, options=ReportOptions(n_worst=2, n_sample=2))
    path = tmp_path / "report.html"
    path.write_text(report.html, encoding="utf-8")
    seen = open_in_browser(path)
    assert seen.console == [] and seen.errors == [] and seen.failed_requests == []
    # 2 worst, 2 sampled, 2 that only B solves, and 5 figures
    assert len(seen.image_widths) == 11 and min(seen.image_widths) > 0
    assert "Why episodes fail" in seen.text
    assert "reached and stopped" in seen.text
