"""Lazy package attributes: the bottom module the package ``__init__`` files share.

It imports only :mod:`importlib`, so that ``import vlneval`` (and ``vlneval.agents``,
``vlneval.envs``, ``vlneval.continuous``) costs next to nothing until a name is used.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing itself is not imported at run time (mypy reads it as usual)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's module ``__getattr__`` that imports each of ``names`` (name -> module) on
    first use, so that importing the package stays light.

    Example:
        >>> get = lazy_attributes("pkg", {"did_you_mean": "vlneval.errors"})
        >>> get("did_you_mean").__name__
        'did_you_mean'
        >>> get("nothing")
        Traceback (most recent call last):
        ...
        AttributeError: module 'pkg' has no attribute 'nothing'
    """

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(names[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
