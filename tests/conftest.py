"""Shared fixtures: the real data folder (skip when absent, fail under CI) and tiny graphs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vlneval.io import env_path

REPO = Path(__file__).resolve().parent.parent


def real_data_path() -> Path:
    """``$VLNEVAL_DATA`` (``~`` expanded, as vlneval expands it) or ``../shared/data`` relative
    to the repository root."""
    return env_path("VLNEVAL_DATA", REPO.parent / "shared" / "data")


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The real data folder; skips (or fails under CI=true) when it is absent."""
    path = real_data_path()
    if not path.is_dir():
        message = f"real data not found at {path} (set VLNEVAL_DATA)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + "; under CI a missing data path is a failure")
        pytest.skip(message)
    return path


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test session uses its own distance cache, shared by its pytest-xdist workers (the
    cache's files are written atomically, so two workers filling one entry is safe)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    cache = root / "vlneval-cache"
    cache.mkdir(exist_ok=True)
    os.environ["VLNEVAL_CACHE"] = str(cache)
