"""The HTML pages in headless Chromium (Playwright driving Debian's /usr/bin/chromium).

They load with no console error and no failed request, show the leaderboard and a
submission's status, scores and messages, and keep one team out of another's submissions.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.server.helpers import DEMO_PREDICTIONS, encode, stop_predictions
from tests.server.live import LiveServer

CHROMIUM = os.environ.get("VLNEVAL_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed") if os.environ.get(
            "CI"
        ) == "true" else pytest.skip("no playwright")
    if not Path(CHROMIUM).exists():
        message = f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
        pytest.fail(message) if os.environ.get("CI") == "true" else pytest.skip(message)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


class Watch:
    """Console errors, page errors, failed requests and 4xx/5xx responses of one page."""

    def __init__(self, page) -> None:
        self.problems: list[str] = []
        page.on(
            "console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}")
        )
        page.on("pageerror", lambda e: self.problems.append(f"pageerror: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url}"))
        page.on(
            "response", lambda r: r.status >= 400 and self.problems.append(f"{r.status}: {r.url}")
        )


@pytest.fixture
def live(sqlite_server):
    srv = sqlite_server
    ok = srv.submit(srv.alpha, DEMO_PREDICTIONS.read_bytes(), method="shortest-ish mix").json()[
        "id"
    ]
    srv.submit(srv.beta, encode(stop_predictions()), method="stop agent")
    bad = srv.submit(srv.alpha, encode(stop_predictions()[:-1]), name="short.json").json()["id"]
    srv.work()
    server = LiveServer(srv.app)
    yield srv, server, ok, bad
    server.stop()


def test_leaderboard_page_shows_the_results_without_console_errors(browser, live, tmp_path):
    srv, server, ok, _ = live
    page = browser.new_page()
    watch = Watch(page)
    page.goto(server.url + "/")
    assert page.title() == "vlneval evaluation server"
    page.click("text=Validation")
    page.wait_for_selector("#leaderboard")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 2
    first, second = (
        rows.nth(0).locator("td").all_inner_texts(),
        rows.nth(1).locator("td").all_inner_texts(),
    )
    assert first[:3] == ["1", "alpha", "shortest-ish mix"] and second[:3] == [
        "2",
        "beta",
        "stop agent",
    ]
    headers = page.locator("#leaderboard thead th").all_inner_texts()
    spl = headers.index("SPL (%)")
    assert first[spl] == "47.08" and second[spl] == "0.00"
    assert "demo v1" in first and "not declared" in first
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
    assert watch.problems == []
    page.close()


def test_submission_pages_after_logging_in(browser, live):
    srv, server, ok, bad = live
    page = browser.new_page()
    watch = Watch(page)
    page.goto(server.url + "/login")
    page.fill("#token", srv.alpha)
    page.click("button[type=submit]")
    page.wait_for_url(server.url + "/submissions")
    assert "team alpha" in page.inner_text("header")
    assert page.locator("table tbody tr").count() == 2
    page.goto(server.url + f"/submissions/{ok}")
    assert page.inner_text("#status").strip() == "finished"
    scores = page.locator("#scores")
    labels = scores.locator("th").all_inner_texts()
    values = scores.locator("td").all_inner_texts()
    assert dict(zip(labels, values, strict=True))["SPL (%)"] == "47.08"
    page.goto(server.url + f"/submissions/{bad}")
    assert page.inner_text("#status").strip() == "failed"
    assert page.inner_text("#messages").startswith(
        "short.json: 1 of 36 episodes have no prediction"
    )
    assert watch.problems == []
    page.click("text=log out")
    page.wait_for_url(server.url + "/")
    assert "log in" in page.inner_text("header")
    page.close()


def test_another_team_gets_a_404_page(browser, live):
    srv, server, ok, _ = live
    context = browser.new_context()
    page = context.new_page()
    page.goto(server.url + "/login")
    page.fill("#token", srv.beta)
    page.click("button[type=submit]")
    page.wait_for_url(server.url + "/submissions")
    response = page.goto(server.url + f"/submissions/{ok}")
    assert response.status == 404
    assert "your team has no such submission" in page.inner_text("main")
    assert "47.08" not in page.content()
    context.close()


def test_a_wrong_token_is_refused_on_the_login_page(browser, live):
    _, server, _, _ = live
    page = browser.new_page()
    page.goto(server.url + "/login")
    page.fill("#token", "vlt_wrong")
    page.click("button[type=submit]")
    page.wait_for_selector("#error")
    assert page.inner_text("#error") == "that token is not valid"
    page.close()
