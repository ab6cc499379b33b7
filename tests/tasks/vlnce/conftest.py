"""The tiny synthetic VLN-CE split of :mod:`tests.tasks.vlnce.helpers`, in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tasks.vlnce.helpers import write_split


@pytest.fixture()
def split(tmp_path: Path) -> tuple[Path, Path]:
    """``val.json`` and ``val_gt.json``: episodes 1 and 2, goals 4 m ahead, dense gt 1 m apart."""
    return write_split(tmp_path)
