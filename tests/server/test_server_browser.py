"""The HTML pages in headless Chromium (Playwright driving Debian's /usr/bin/chromium).

They load with no console error and no failed request, show the leaderboard and a
submission's status, scores and messages, and keep one team out of another's submissions; the
upload form and the leaderboard controls (pick, hide, withdraw) work, a form posted from
elsewhere is refused, the "Submit with" hint names this server, and the board fits a 1,400 px
window, also for a REVERIE phase on real data with every metric in each entry's details.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.server.helpers import DEMO_PREDICTIONS, encode, stop_predictions
from tests.server.live import LiveServer
from vlneval.server.services import admin

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
    assert "not declared" in first  # the privileged column
    rows.nth(0).locator("details summary").click()
    assert "demo v1" in rows.nth(0).locator("details .popup").inner_text()
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


def _login(page, server, token: str) -> None:
    page.goto(server.url + "/login")
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url(server.url + "/submissions")


def test_the_upload_form_submits_and_shows_problems(browser, live, tmp_path):
    srv, server, _, _ = live
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page)
    _login(page, server, srv.beta)
    page.goto(server.url + "/c/demo/val")
    page.click("#upload-link")
    page.wait_for_url(server.url + "/c/demo/val/submit")
    good = tmp_path / "mine.json"
    good.write_bytes(DEMO_PREDICTIONS.read_bytes())
    page.set_input_files("#file", str(good))
    page.fill("#method", "uploaded in a browser")
    page.fill("#protocol", '{"privileged": "none"}')
    page.click("#upload button[type=submit]")
    page.wait_for_url(server.url + "/submissions/*")
    assert page.inner_text("#status").split()[0] in ("queued", "running")
    srv.work()
    page.reload()
    assert page.inner_text("#status").strip() == "finished"
    assert assert_no_console(watch)
    page.goto(server.url + "/c/demo/val/submit")
    bad = tmp_path / "bad.json"
    bad.write_text('{"instr_id": ')
    page.set_input_files("#file", str(bad))
    page.click("#upload button[type=submit]")
    page.wait_for_selector("#error")
    assert "bad.json was not accepted" in page.inner_text("#error")
    context.close()


def assert_no_console(watch: Watch) -> bool:
    return [p for p in watch.problems if not p[:3].isdigit()] == []


def test_the_leaderboard_controls(browser, live):
    srv, server, ok, _ = live
    # alpha's second finished entry, a stop agent that scores 0
    stop = srv.submit(srv.alpha, encode(stop_predictions()), method="alpha stop").json()["id"]
    srv.work()
    context = browser.new_context()
    page = context.new_page()
    watch = Watch(page)
    _login(page, server, srv.alpha)
    page.goto(server.url + "/c/demo/val")

    def board() -> list[tuple[str, str]]:
        rows = page.locator("#leaderboard tbody tr")
        return [
            tuple(rows.nth(i).locator("td").all_inner_texts()[1:3]) for i in range(rows.count())
        ]

    assert board()[0] == ("alpha", "shortest-ish mix")
    page.locator(f"#sub-{stop} button", has_text="make our entry").click()
    page.wait_for_url(server.url + "/c/demo/val#yours")
    assert ("alpha", "alpha stop") in board() and ("alpha", "shortest-ish mix") not in board()
    assert "our entry" in page.inner_text(f"#sub-{stop} .state")
    page.click("#show-none")
    assert [t for t, _ in board()] == ["beta"]
    assert page.inner_text("#choice") == "no entry"
    page.click("#show-best")
    assert board()[0] == ("alpha", "shortest-ish mix")
    page.locator(f"#sub-{ok} button", has_text="hide").click()
    assert "hidden" in page.inner_text(f"#sub-{ok} .state")
    assert board()[0] != ("alpha", "shortest-ish mix")
    page.locator(f"#sub-{ok} button", has_text="show").click()
    assert board()[0] == ("alpha", "shortest-ish mix")
    assert watch.problems == []
    context.close()


def test_a_form_posted_from_another_page_is_refused(browser, live):
    srv, server, ok, _ = live
    context = browser.new_context()
    page = context.new_page()
    _login(page, server, srv.alpha)
    evil = context.new_page()
    evil.set_content(
        f'<form method="post" action="{server.url}/c/demo/val/entry">'
        f'<input name="action" value="hide"><input name="submission" value="{ok}">'
        '<input name="csrf" value="guess"><button id="go">go</button></form>'
    )
    with evil.expect_navigation():
        evil.click("#go")
    # SameSite=Lax: the browser sends no session with a cross-site POST, so nothing is done
    assert evil.url.startswith(server.url + "/login")
    page.goto(server.url + "/c/demo/val")
    assert (
        page.locator("#leaderboard tbody tr").nth(0).locator("td").all_inner_texts()[1] == "alpha"
    )
    context.close()


def test_the_board_fits_1400_pixels(browser, live, tmp_path):
    import json

    from vlneval.server.services.entries import moderate

    srv, server, ok, _ = live
    long = ("a long method name " + "x" * 100)[:100]
    for i in range(6):
        name = f"team-with-a-rather-long-name-number-{i}-" + "y" * 40
        token = admin.create_team(srv.db, name)
        proto = json.dumps({"privileged": "ground-truth goals" if i == 0 else "none"})
        uid = srv.submit(
            token, DEMO_PREDICTIONS.read_bytes(), method=long, protocol=proto,
            url="https://example.org/" + "p" * 200,
        ).json()["id"]  # fmt: skip
        if i == 1:
            srv.work()
            moderate(srv.db, uid, "flag", "same file as another team's " + "z" * 100)
        if i == 2:
            srv.work()
            moderate(srv.db, uid, "baseline")
    admin.create_phase(srv.db, "demo", "r2r-like", task="demo", primary_metric="nDTW")
    srv.work()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    watch = Watch(page)
    page.goto(server.url + "/c/demo/val")
    assert page.locator("#leaderboard tbody tr").count() == 7  # 5 ranked + 1 baseline + beta
    assert page.locator("#privileged tbody tr").count() == 1
    width = "document.documentElement.scrollWidth"
    assert page.evaluate(width) <= 1400
    page.locator("#leaderboard details summary").last.click()
    assert page.locator("#leaderboard details .popup").last.is_visible()
    assert page.evaluate(width) <= 1400
    page.screenshot(path=str(tmp_path / "board-1400.png"), full_page=True)
    for path in ("/", "/c/demo", "/c/demo/r2r-like"):
        page.goto(server.url + path)
        assert page.evaluate(width) <= 1400, path
    assert watch.problems == []
    context.close()


def test_a_team_withdraws_an_entry_and_the_hint_names_this_server(browser, live):
    srv, server, ok, _ = live
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    watch = Watch(page)
    _login(page, server, srv.alpha)
    page.goto(server.url + "/c/demo/val")
    hint = page.inner_text(".howto code")
    assert (
        hint
        == f"vlneval submit --server {server.url} --challenge demo --phase val --predictions FILE"
    )
    teams = page.locator("#leaderboard tbody td.team").all_inner_texts()
    assert teams == ["alpha", "beta"]
    page.locator(f"#sub-{ok} button", has_text="withdraw").click()
    page.wait_for_url(server.url + "/c/demo/val#yours")
    assert page.inner_text(f"#sub-{ok} .state").startswith("withdrawn")
    assert page.locator(f"#sub-{ok} button").count() == 0  # withdrawn for good: no controls
    assert page.locator("#leaderboard tbody td.team").all_inner_texts() == ["beta"]
    assert watch.problems == []
    context.close()


def _reverie_records(episodes, kind: str) -> list[dict]:
    out = []
    for ep in episodes:
        path = ep["path"] if kind == "path" else ep["path"][:1]
        obj = ep["objId"] if kind == "path" else None
        for k in range(len(ep["instructions"])):
            traj = [[vp, 0.0, 0.0] for vp in path]
            out.append({"instr_id": f"{ep['id']}_{k}", "trajectory": traj, "predObjId": obj})
    return out


def test_a_reverie_board_with_every_metric_fits_1400_pixels(browser, data_root, sqlite_server):
    """A REVERIE phase (every metric of its profile in each entry's details) on real data:
    no horizontal scroll at 1,400 px, with each entry's details open in turn."""
    import gzip
    import json

    from vlneval.reports.terminal import shown_unit
    from vlneval.tasks.profiles import get_profile

    srv = sqlite_server
    f = data_root / "reverie" / "REVERIE_val_unseen.json.gz"
    admin.create_phase(
        srv.db, "demo", "reverie", task="reverie", split="val_unseen", episodes_file=str(f),
        graphs=str(data_root / "matterport3d" / "connectivity"), title="REVERIE val unseen",
    )  # fmt: skip
    episodes = json.loads(gzip.decompress(f.read_bytes()))
    for i, kind in enumerate(("path", "stop", "path")):
        token = admin.create_team(srv.db, f"a-team-with-a-long-name-{i}-" + "q" * 30)
        r = srv.submit(
            token, encode(_reverie_records(episodes, kind)), phase="reverie",
            method=("reference path " if kind == "path" else "stop ") + "m" * 60,
            url="https://example.org/" + "p" * 150, description="d " * 200,
        )  # fmt: skip
        assert r.status_code == 202, r.text
    assert srv.work() == 3
    metrics = list(get_profile("reverie").metrics)
    server = LiveServer(srv.app)
    try:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        page = context.new_page()
        watch = Watch(page)
        page.goto(server.url + "/c/demo/reverie")
        rows = page.locator("#leaderboard tbody tr")
        assert rows.count() == 3
        width = "document.documentElement.scrollWidth"
        assert page.evaluate(width) <= 1400
        for i in range(3):
            rows.nth(i).locator("details summary").click()
            popup = rows.nth(i).locator("details .popup")
            assert popup.is_visible()
            assert popup.locator("dl.all dt").all_inner_texts() == [
                f"{m} ({shown_unit(m)})" for m in metrics
            ]
            box = popup.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1400
            assert page.evaluate(width) <= 1400
            rows.nth(i).locator("details summary").click()
        assert watch.problems == []
        context.close()
    finally:
        server.stop()
