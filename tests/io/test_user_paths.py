"""A leading ``~`` in a path the user gives (an environment variable, a default under the home
folder) is expanded everywhere vlneval reads one: the shell expands it only at the start of a
word, so ``VLNEVAL_DATA="~/vln"`` reaches the program as written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tests.conftest
from vlneval.fetch import default_root
from vlneval.graph.distances import cache_dir
from vlneval.io import env_path, user_path
from vlneval.server.core.config import ServerConfig, default_data_dir
from vlneval.tasks.common.root import data_root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home folder as ``$HOME``, with none of the path variables set."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    for name in ("VLNEVAL_DATA", "VLNEVAL_CACHE", "VLNEVAL_SERVER_DATA", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    return folder


def test_user_path_and_env_path(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert user_path("~/a/b") == home / "a" / "b"
    assert user_path("a/~b") == Path("a/~b")  # only a leading ~
    assert env_path("VLNEVAL_DATA") is None
    assert env_path("VLNEVAL_DATA", "~/d") == home / "d"
    monkeypatch.setenv("VLNEVAL_DATA", "")  # set but empty: unset
    assert env_path("VLNEVAL_DATA", "~/d") == home / "d"
    monkeypatch.setenv("VLNEVAL_DATA", "~/vln")
    assert env_path("VLNEVAL_DATA", "~/d") == home / "vln"
    monkeypatch.setenv("VLNEVAL_DATA", "/srv/vln")
    assert env_path("VLNEVAL_DATA") == Path("/srv/vln")


def test_the_data_root(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert data_root() is None
    assert data_root("~/given") == home / "given"
    monkeypatch.setenv("VLNEVAL_DATA", "~/vln")
    assert data_root() == home / "vln"
    assert data_root(Path("~/given")) == home / "given"  # the explicit root wins


def test_the_distance_cache(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_dir() == home / ".cache" / "vlneval"
    monkeypatch.setenv("VLNEVAL_CACHE", "~/cache")
    assert cache_dir() == home / "cache"


def test_the_fetch_root(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    assert default_root() == home / ".local" / "share" / "vlneval"
    monkeypatch.setenv("XDG_DATA_HOME", "~/xdg")
    assert default_root() == home / "xdg" / "vlneval"
    monkeypatch.setenv("VLNEVAL_DATA", "~/vln")
    assert default_root() == home / "vln"


def test_the_fetch_root_on_windows(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", "~/AppData/Local")
    assert default_root() == home / "AppData" / "Local" / "vlneval"


def test_the_server_data_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_data_dir() == home / ".local" / "share" / "vlneval" / "server"
    monkeypatch.setenv("XDG_DATA_HOME", "~/xdg")
    assert default_data_dir() == home / "xdg" / "vlneval" / "server"
    monkeypatch.setenv("VLNEVAL_SERVER_DATA", "~/srv")
    assert default_data_dir() == home / "srv"
    assert ServerConfig().data_dir == (home / "srv").resolve()


def test_the_test_suite_s_data_path(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert tests.conftest.real_data_path() == tests.conftest.REPO.parent / "shared" / "data"
    monkeypatch.setenv("VLNEVAL_DATA", "~/vln")
    assert tests.conftest.real_data_path() == home / "vln"
