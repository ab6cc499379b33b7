"""Protocol cards: what a result was allowed to see and how it was scored (spec/protocol.md)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import platform
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlneval.tasks.profiles import Profile

if TYPE_CHECKING:
    from vlneval.tasks.common.result import Result

__all__ = [
    "protocol_card",
    "software_fingerprint",
    "episodes_card",
    "episodes_text",
    "DECLARABLE",
    "EPISODE_COUNTS",
    "GivenEpisodes",
    "given_episodes",
    "with_declared",
    "clash_warnings",
]

# Fields a submitter declares about a run that vlneval cannot see in a predictions file.
DECLARABLE = (
    "observations",
    "map",
    "action_space",
    "privileged",
    "inference_budget",
    "executed_path",
    "seeds",
    "n_runs",
    "checkpoint_selection",
    "model",
)

UNDECLARED = "not declared (offline predictions file)"
#: The episode counts (:func:`episodes_card`) a scorer measures itself: a declared card's are
#: dropped (a card written before they were numbers held ``"partial: 5 of 36"``).
EPISODE_COUNTS = ("episodes", "n_expected", "partial")
#: Where a card keeps what was declared for a field vlneval measured otherwise.
DIFFERENTLY = "declared_differently"


def with_declared(measured: Mapping[str, Any], declared: Mapping[str, Any]) -> dict[str, Any]:
    """A card of the fields vlneval ``measured`` (a run's environment, seed and agent id; a
    scorer's task, split and rules) and of those ``declared`` (by an agent or a submitter,
    ``model``...) where it measured none. A declared value of a measured field never replaces
    it (a teacher-using agent cannot declare itself unprivileged, a declared card cannot name
    another split): it is kept, as a claim, under ``declared_differently``.

    Example:
        >>> card = with_declared({"privileged": "goals", "seeds": [0]},
        ...                      {"privileged": "none", "model": "vlnbert"})
        >>> card["privileged"], card["model"], card["declared_differently"]
        ('goals', 'vlnbert', {'privileged': 'none'})
    """
    out = {**measured, **{k: v for k, v in declared.items() if k not in measured}}
    clashing = {k: v for k, v in declared.items() if k in measured and v != measured[k]}
    if clashing:
        out[DIFFERENTLY] = {**declared.get(DIFFERENTLY, {}), **clashing}
    return out


def clash_warnings(card: Mapping[str, Any]) -> list[str]:
    """A warning for each of the data scored (task, split, data version) that a declared card
    (a run's ``NAME.protocol.json``) gives otherwise: the predictions were made on other
    episodes than those they were scored on (a REVERIE v1 run scored against v2 matches most
    ids, so nothing else would say so).

    Example:
        >>> clash_warnings({"data_version": "v2", "declared_differently": {"data_version": "v1"}})
        ['the declared protocol card gives data_version v1, but the predictions were scored on data_version v2: score them on the data they were made on (--data-version v1), or the numbers are of other episodes']
    """
    given = card.get(DIFFERENTLY) or {}
    out = []
    for key in ("task", "split", "data_version"):
        if given.get(key) is not None and card.get(key) is not None:
            flag = "--" + key.replace("_", "-")
            out.append(
                f"the declared protocol card gives {key} {given[key]}, but the predictions were "
                f"scored on {key} {card[key]}: score them on the data they were made on "
                f"({flag} {given[key]}), or the numbers are of other episodes"
            )
    return out


def episodes_card(n: int, total: int, partial: bool | None = None) -> dict[str, Any]:
    """A card's episode counts, as the summary names them: ``episodes`` (the number run or
    scored), ``n_expected`` (in the split) and ``partial`` (default: episodes are missing).

    Example:
        >>> episodes_card(5, 36)
        {'episodes': 5, 'n_expected': 36, 'partial': True}
    """
    return {
        "episodes": n,
        "n_expected": total,
        "partial": n < total if partial is None else partial,
    }


def episodes_text(card: Mapping[str, Any]) -> str:
    """A card's episodes as text: ``"N"``, or ``"partial: N of M"`` (spec/protocol.md); a card
    written before the counts were numbers holds that text already.

    Example:
        >>> episodes_text(episodes_card(36, 36)), episodes_text(episodes_card(5, 36))
        ('36', 'partial: 5 of 36')
        >>> episodes_text({"episodes": "partial: 5 of 36"})
        'partial: 5 of 36'
    """
    n = card.get("episodes")
    if not card.get("partial") or isinstance(n, str):
        return str(n)
    return f"partial: {n} of {card.get('n_expected')}"


@dataclasses.dataclass(frozen=True)
class GivenEpisodes:
    """An episodes file given explicitly (``--episodes``, ``episodes=``), as results record it.

    Attributes:
        card: the card's ``episodes_file``: its ``name`` and ``sha256`` (the first 16 hex
            digits of its bytes' digest; no digest for a folder).
        warning: set when the file's name names another split of the task than the one scored.
    """

    card: Mapping[str, str]
    warning: str | None = None

    def mark(self, result: Result) -> Result:
        """``result`` with ``episodes_file`` on its card (after ``episodes``) and the warning."""
        card: dict[str, Any] = {}
        for key, value in result.protocol.items():
            card[key] = value
            if key == "episodes":
                card["episodes_file"] = dict(self.card)
        warnings = (*result.warnings, self.warning) if self.warning else result.warnings
        return dataclasses.replace(result, protocol=card, warnings=warnings)


def given_episodes(path: str | Path, split: str, splits: Sequence[str]) -> GivenEpisodes:
    """What a result records of the episodes file ``path`` scored as ``split`` (the task's
    splits: ``splits``).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "R2R_val_seen.json").write_text("[]")
        2
        >>> got = given_episodes(folder / "R2R_val_seen.json", "val_unseen", ("val_seen", "val_unseen"))
        >>> dict(got.card), got.warning
        ({'name': 'R2R_val_seen.json', 'sha256': '4f53cda18c2baa0c'}, 'the episodes file R2R_val_seen.json looks like split val_seen, scored as val_unseen')
        >>> given_episodes(folder / "R2R_val_seen.json", "val_seen", ("val_seen",)).warning
    """
    path = Path(path)
    card = {"name": path.name}
    if path.is_file():
        digest = hashlib.sha256()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        card["sha256"] = digest.hexdigest()[:16]
    named = [
        s for s in splits if re.search(rf"(?<![a-z0-9]){re.escape(s)}(?![a-z0-9])", path.name, re.I)
    ]
    if not named or split in named:
        return GivenEpisodes(card)
    other = max(named, key=len)
    return GivenEpisodes(
        card, f"the episodes file {path.name} looks like split {other}, scored as {split}"
    )


def software_fingerprint() -> dict[str, str]:
    """vlneval, Python and key library versions (read once per process: a scorer in a training
    loop would otherwise spend milliseconds on package metadata for every result)."""
    return dict(_fingerprint())


@functools.cache
def _fingerprint() -> dict[str, str]:
    out = {"python": platform.python_version()}
    folders = _dist_folders()
    for pkg in ("vlneval", "numpy", "scipy", "numba", "msgspec"):
        out[pkg] = _installed_version(pkg, folders)
    return out


def _installed_version(name: str, folders: list[tuple[str, list[str]]] | None) -> str:
    """The installed version of distribution ``name``, as ``importlib.metadata.version``
    gives it, or ``not installed``.

    The ``Version`` of the first ``<name>-<version>.dist-info`` (or ``.egg-info``) on
    ``sys.path`` is read directly: importing ``importlib.metadata`` (and the ``email`` package
    it parses with) costs about a fifth of a whole ``vlneval score`` run. Anything unusual (a
    zip on the path, two candidates in one folder, no ``Version``) is left to it.
    """
    if folders is not None:
        found = _version_in(name, folders)
        if found is not None:
            return found or "not installed"
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _dist_folders() -> list[tuple[str, list[str]]] | None:
    """``(folder, its metadata entries)`` of every folder of ``sys.path``, or None when an
    entry is not a plain folder (a zip file: its distributions are importlib's to find)."""
    out = []
    for entry in sys.path:
        folder = entry or "."
        if os.path.isfile(folder):
            return None
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        out.append((folder, [n for n in names if n.endswith((".dist-info", ".egg-info"))]))
    return out


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _dist_name(entry: str) -> str:
    """The normalised project name of a metadata entry: ``numpy-2.1.0.dist-info`` and an
    unversioned ``vlneval.egg-info`` (a legacy develop install) both name their project.

    Example:
        >>> _dist_name("numpy-2.1.0.dist-info"), _dist_name("vlneval.egg-info")
        ('numpy', 'vlneval')
    """
    stem = entry.rsplit(".", 1)[0]  # drop .dist-info / .egg-info
    return _normal(stem.partition("-")[0])


def _version_in(name: str, folders: list[tuple[str, list[str]]]) -> str | None:
    """The version of ``name`` from the first folder that has its metadata; ``""`` when no
    folder has it; None when importlib should decide."""
    want = _normal(name)
    for folder, entries in folders:
        hits = [n for n in entries if _dist_name(n) == want]
        if len(hits) > 1:
            return None
        if hits:
            return _header_version(os.path.join(folder, hits[0]))
    return ""


def _header_version(path: str) -> str | None:
    """The ``Version:`` header of a distribution's metadata (``METADATA``, ``PKG-INFO``, or
    an ``.egg-info`` file itself), or None."""
    if os.path.isdir(path):
        name = "METADATA" if path.endswith(".dist-info") else "PKG-INFO"
        path = os.path.join(path, name)
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():  # the end of the RFC 822 headers
                    return None
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "version":
                    return value.strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def protocol_card(
    *,
    task: str,
    split: str,
    profile: Profile,
    n_episodes: int,
    n_expected: int,
    partial: bool,
    data_version: str | None = None,
    declared: Mapping[str, Any] | None = None,
    run: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The protocol card of one result.

    Args:
        task, split, profile: what was scored and how.
        n_episodes, n_expected, partial: how much of the split was scored.
        data_version: the dataset release, where a benchmark has several.
        declared: fields the submitter declares (``--protocol FILE``), see ``DECLARABLE``.
        run: fields an online run records itself (action space, privileged access, seeds...);
            they override declared values since vlneval observed them, and neither overrides
            what the scorer knows (task, split, data version, episodes, scoring rules):
            :func:`with_declared`.

    Example:
        >>> from vlneval.tasks.profiles import get_profile
        >>> card = protocol_card(task="r2r", split="val_unseen", profile=get_profile("r2r"),
        ...                      n_episodes=10, n_expected=10, partial=False)
        >>> card["scoring"]["comparison"], card["privileged"]
        ('NE < 3.0', 'not declared (offline predictions file)')
    """
    card: dict[str, Any] = {
        "task": task,
        "split": split,
        "data_version": data_version,
        **episodes_card(n_episodes, n_expected, partial),
        "scoring": {
            "profile": profile.name,
            "profile_version": profile.version,
            "reproduces": profile.reproduces,
            f"threshold_{profile.threshold_unit}": profile.threshold,
            "comparison": profile.comparison,
            "distance": profile.distance,
        },
    }
    claimed = {k: v for k, v in (declared or {}).items() if k not in EPISODE_COUNTS}
    given = with_declared(run or {}, claimed)
    card = with_declared(card, {**dict.fromkeys(DECLARABLE, UNDECLARED), **given})
    card["software"] = software_fingerprint()
    return card
