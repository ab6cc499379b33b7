"""Paths a user writes: in an environment variable, an option or a default under the home
folder, each with a leading ``~`` expanded (a shell expands it only at the start of a word:
``--data-root=~/vln`` and ``VLNEVAL_DATA="~/vln"`` reach the program as written)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import overload

__all__ = ["env_path", "user_path", "path_option"]


def user_path(text: str | os.PathLike[str]) -> Path:
    """The path ``text`` names, a leading ``~`` (or ``~user``) expanded to that home folder.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"HOME": "/home/ada"}):
        ...     print(user_path("~/vln/data"), user_path("data/r2r"))
        /home/ada/vln/data data/r2r
    """
    return Path(text).expanduser()


def path_option(text: str) -> Path | None:
    """The path of a command-line option (``--data-root``, ``--graphs``), ``~`` expanded; an
    empty value (``--data-root ""``) gives none, so that the default applies as when the
    option is left out.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"HOME": "/home/ada"}):
        ...     print(path_option("~/vln"), path_option(""))
        /home/ada/vln None
    """
    return user_path(text) if text else None


@overload
def env_path(name: str, default: None = None) -> Path | None: ...
@overload
def env_path(name: str, default: str | os.PathLike[str]) -> Path: ...
def env_path(name: str, default: str | os.PathLike[str] | None = None) -> Path | None:
    """The path in the environment variable ``name``, else ``default`` (None: no path), either
    with ``~`` expanded (:func:`user_path`); a variable set to the empty string counts as unset.

    Example:
        >>> from unittest import mock
        >>> env = {"HOME": "/home/ada", "VLNEVAL_CACHE": "~/cache", "VLNEVAL_DATA": ""}
        >>> with mock.patch.dict("os.environ", env):
        ...     print(env_path("VLNEVAL_CACHE", "~/.cache/vlneval"))
        ...     print(env_path("VLNEVAL_DATA", "~/.local/share/vlneval"), env_path("VLNEVAL_DATA"))
        /home/ada/cache
        /home/ada/.local/share/vlneval None
    """
    value = os.environ.get(name) or default
    return None if value is None else user_path(value)
