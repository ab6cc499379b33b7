"""Opens an HTML file in headless Chromium (Debian's ``/usr/bin/chromium`` via playwright).

Skips when playwright or the browser is missing; under ``CI=true`` that is a failure.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("VLNEVAL_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@dataclass
class Loaded:
    """What the browser saw: console messages, page errors, image sizes, visible text."""

    console: list[tuple[str, str]]
    errors: list[str]
    image_widths: list[int]
    text: str
    failed_requests: list[str]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + "; under CI the browser check must run")
    pytest.skip(reason)


def open_in_browser(path: Path, *, screenshot: Path | None = None) -> Loaded:
    """Loads ``path`` (file://) and waits until every image has decoded."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (.venv/bin/pip install playwright)")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            console: list[tuple[str, str]] = []
            errors: list[str] = []
            failed: list[str] = []
            page.on("console", lambda m: console.append((m.type, m.text)))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.goto(path.resolve().as_uri(), wait_until="load")
            page.wait_for_function(
                "Array.from(document.images).every(i => i.complete)", timeout=30_000
            )
            widths = page.eval_on_selector_all("img", "els => els.map(e => e.naturalWidth)")
            text = page.inner_text("body")
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    return Loaded(console, errors, [int(w) for w in widths], text, failed)
