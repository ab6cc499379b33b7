"""Where benchmark files live: ``--data-root``, ``$VLNEVAL_DATA`` or the embedded demo data.

The default layout is the layout of the project's shared data folder::

    <root>/matterport3d/connectivity/<scan>_connectivity.json[.gz]
    <root>/r2r/R2R_<split>.json[.gz]
    <root>/r4r/R4R_<split>.json[.gz]
    <root>/rxr/rxr_<split>_guide.jsonl[.gz]
"""

from __future__ import annotations

import os
from pathlib import Path

from vlneval.errors import MissingDataError

__all__ = ["data_root", "demo_root", "find_file", "graphs_dir"]


def demo_root() -> Path:
    """The folder of the synthetic demo benchmark shipped inside the package."""
    return Path(__file__).resolve().parents[2] / "demo_data"


def data_root(explicit: str | Path | None = None) -> Path | None:
    """The data root: ``explicit``, else ``$VLNEVAL_DATA``, else None."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("VLNEVAL_DATA")
    return Path(env) if env else None


def find_file(folder: Path, names: list[str], what: str) -> Path:
    """The first of ``names`` (each tried plain and with ``.gz``) that exists in ``folder``."""
    for name in names:
        for candidate in (folder / name, folder / f"{name}.gz"):
            if candidate.exists():
                return candidate
    tried = ", ".join(str(folder / n) + "[.gz]" for n in names)
    raise MissingDataError(
        f"no {what} found (looked for {tried}); pass --data-root DIR (or set VLNEVAL_DATA), "
        "or name the file with --episodes FILE"
    )


def graphs_dir(root: Path) -> Path:
    """The connectivity folder under a data root."""
    path = root / "matterport3d" / "connectivity"
    if not path.is_dir():
        raise MissingDataError(
            f"no connectivity folder at {path}; pass --graphs DIR or --data-root DIR"
        )
    return path
