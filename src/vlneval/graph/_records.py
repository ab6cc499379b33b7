"""The typed form of a connectivity record, for msgspec's fast checked decoding."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["Viewpoint"]


class Viewpoint(msgspec.Struct):
    """One record of a ``<scan>_connectivity.json`` file (other fields are ignored)."""

    image_id: str
    pose: Annotated[list[float], msgspec.Meta(min_length=16, max_length=16)]
    included: bool
    unobstructed: list[bool]
    height: float | msgspec.UnsetType = msgspec.UNSET
