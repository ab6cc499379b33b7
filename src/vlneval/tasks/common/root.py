"""Where benchmark files live: ``--data-root``, ``$VLNEVAL_DATA`` or the embedded demo data.

The default layout is the layout of the project's shared data folder::

    <root>/matterport3d/connectivity/<scan>_connectivity.json[.gz]
    <root>/r2r/R2R_<split>.json[.gz]
    <root>/r4r/R4R_<split>.json[.gz]
    <root>/rxr/rxr_<split>_guide.jsonl[.gz]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from vlneval.errors import MissingDataError, did_you_mean
from vlneval.io.paths import env_path, user_path

__all__ = [
    "data_root",
    "demo_root",
    "find_file",
    "graphs_dir",
    "check_root",
    "splits_found",
    "missing_split",
    "missing_version_split",
]

#: The folder of the navigation graphs under a data root (the first level of its layout).
GRAPHS_FOLDER = "matterport3d"


def demo_root() -> Path:
    """The folder of the synthetic demo benchmark shipped inside the package."""
    return Path(__file__).resolve().parents[2] / "demo_data"


def data_root(explicit: str | Path | None = None) -> Path | None:
    """The data root: ``explicit``, else ``$VLNEVAL_DATA``, else None; ``~`` expanded.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict("os.environ", {"HOME": "/home/ada", "VLNEVAL_DATA": "~/vln"}):
        ...     print(data_root(), data_root("~/other"))
        /home/ada/vln /home/ada/other
    """
    if explicit:
        return user_path(explicit)
    return env_path("VLNEVAL_DATA")


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


#: Where the files of the tasks that ``vlneval data fetch`` cannot fetch come from.
_RELEASES = {"hanna": "khanhptnk/hanna", "soon": "ZhuFengdaaa/SOON"}


# The fetch registry (msgspec Structs) is read only to word a missing-data error: this module is
# on the CLI's start-up path (its help) and of ``import vlneval.tasks``, which load no msgspec.
def _fetch_hint(task: str) -> str:
    """How to get a task's files: ``vlneval data fetch`` when it knows the task, else the
    benchmark's own repository when known.

    Example:
        >>> _fetch_hint("hanna")
        'vlneval cannot fetch hanna: get its files from the khanhptnk/hanna repository on GitHub and put them there'
    """
    try:
        from vlneval.fetch.registry import current_registry  # deferred: msgspec (see above)

        current_registry().canonical(task)
    except Exception:  # noqa: BLE001 - no fetchable dataset of that name: a plainer hint
        if task in _RELEASES:
            return (
                f"vlneval cannot fetch {task}: get its files from the {_RELEASES[task]} "
                "repository on GitHub and put them there"
            )
        return "put its files there (`vlneval data list` shows what can be fetched)"
    return f"get its files with `vlneval data fetch {task}`"


def _too_deep(root: Path, folder: str) -> bool:
    """Whether ``root`` looks like a folder inside a data root rather than the root itself."""
    parent = root.parent
    if parent == root:
        return False
    first = folder.split("/")[0]
    return (
        (parent / folder).is_dir()
        or (parent / GRAPHS_FOLDER).is_dir()
        or root.name in (first, GRAPHS_FOLDER)
        or (root / "connectivity").is_dir()
    )


def check_root(root: Path, task: str, folder: str, patterns: Sequence[str] = ()) -> None:
    """Says what is wrong with a data root that does not hold ``task``'s ``folder``.

    Raises:
        MissingDataError: ``root`` does not exist; looks one level too deep (names the
            parent to pass); or has no ``folder`` (names what was expected and the fetch).

    Example:
        >>> import tempfile
        >>> top = Path(tempfile.mkdtemp()); (top / "r2r").mkdir()
        >>> check_root(top, "r2r", "r2r")
        >>> try:
        ...     check_root(top / "r2r", "r2r", "r2r")
        ... except MissingDataError as e:
        ...     print(str(e).replace(str(top), "DIR").split(";")[0])
        the data root DIR/r2r looks one level too deep (no r2r/ folder in it)
    """
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise MissingDataError(
            f"the data root {root} {what}; pass --data-root DIR (or set VLNEVAL_DATA) with "
            f"the folder that holds {folder}/ and {GRAPHS_FOLDER}/"
        )
    if (root / folder).is_dir():
        return
    expected = f"{root / folder}/" + (patterns[0].format(split="<split>") if patterns else "")
    if _too_deep(root, folder):
        raise MissingDataError(
            f"the data root {root} looks one level too deep (no {folder}/ folder in it); "
            f"pass --data-root {root.parent}, the folder that holds {folder}/ and "
            f"{GRAPHS_FOLDER}/"
        )
    raise MissingDataError(
        f"the data root {root} has no {folder}/ folder for task {task} (expected {expected}); "
        f"{_fetch_hint(task)}, or pass --data-root DIR that holds it"
    )


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A regular expression of a file-name pattern (``{split}`` captured, ``.gz`` optional)."""
    parts = [re.escape(p) for p in pattern.split("{split}")]
    body = parts[0]
    for k, part in enumerate(parts[1:]):
        body += ("(?P<split>[^/]+)" if k == 0 else "(?P=split)") + part
    return re.compile(body + r"(?:\.gz)?")


def splits_found(folder: Path, patterns: Sequence[str]) -> list[str]:
    """The splits whose files (any of ``patterns``, plain or ``.gz``) are in ``folder``.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> for n in ("R2R_train.json", "R2R_val_seen.json.gz", "notes.txt"):
        ...     _ = (d / n).write_text("[]")
        >>> splits_found(d, ["R2R_{split}.json"])
        ['train', 'val_seen']
    """
    found: set[str] = set()
    for pattern in patterns:
        regex = _pattern_regex(pattern)
        depth = pattern.count("/")
        glob = "/".join(["*"] * (depth + 1))
        for path in folder.glob(glob):
            m = regex.fullmatch(path.relative_to(folder).as_posix())
            if m is not None and path.is_file():
                found.add(m.group("split"))
    return sorted(found)


def missing_split(
    root: Path, task: str, folder: str, patterns: Sequence[str], split: str,
    declared: Sequence[str] = (), *, versions: Sequence[tuple[str, str]] = (),
    version: str | None = None, lead: str | None = None,
) -> MissingDataError:  # fmt: skip
    """The error for a split whose file is not under ``root``: the closest split name and the
    splits whose files are there.

    With ``versions`` (a task's ``(data version, file pattern)`` pairs) the splits are those of
    ``version`` (of every version when None), and a split found only under another version
    names it (see :func:`missing_version_split`).

    Example:
        >>> import tempfile
        >>> top = Path(tempfile.mkdtemp()); (top / "r2r").mkdir()
        >>> _ = (top / "r2r" / "R2R_val_unseen.json").write_text("[]")
        >>> e = missing_split(top, "r2r", "r2r", ["R2R_{split}.json"], "valunseen")
        >>> print(str(e).replace(str(top), "DIR"))
        no r2r valunseen episodes found under DIR/r2r; did you mean 'val_unseen'? (splits found there: val_unseen)
    """
    if versions:
        return missing_version_split(root, task, folder, versions, split, declared, version, lead)
    base = root / folder
    found = splits_found(base, patterns)
    known = sorted(set(found) | set(declared))
    hint = did_you_mean(split, known) if split not in known else None
    msg = f"no {task} {split} episodes found under {base}"
    if hint:
        msg += f"; did you mean {hint!r}?"
    elif split in declared:
        msg += f" (its file is not there; {_fetch_hint(task)})"
    msg += (
        f" (splits found there: {', '.join(found)})" if found else " (no split files found there)"
    )
    absent = [s for s in declared if s not in found]
    if absent and not found:
        msg += f"; declared splits: {', '.join(declared)}"
    return MissingDataError(msg)


def missing_version_split(
    root: Path, task: str, folder: str, versions: Sequence[tuple[str, str]], split: str,
    declared: Sequence[str] = (), version: str | None = None, lead: str | None = None,
) -> MissingDataError:  # fmt: skip
    """The error for a split missing under one data version (or, with ``version`` None, under
    all): the splits found for that version, the closest split name, the version whose files
    hold the split, and how to fetch the files. ``lead`` replaces the opening words
    (``no <task> <split> episodes for data version <version>``).

    Example:
        >>> import tempfile
        >>> top = Path(tempfile.mkdtemp()); (top / "rev" / "v2").mkdir(parents=True)
        >>> for name in ("R_val.json", "v2/R_val.json", "v2/R_train.json"):
        ...     _ = (top / "rev" / name).write_text("[]")
        >>> versions = [("v2", "v2/R_{split}.json"), ("v1", "R_{split}.json")]
        >>> e = missing_version_split(top, "rev", "rev", versions, "train", ["train", "val"], "v1")
        >>> print(str(e).replace(str(top), "DIR"))
        no rev train episodes for data version v1 under DIR/rev (splits found for v1: val); train is there for data version v2: pass --data-version v2
        >>> e = missing_version_split(top, "rev", "rev", versions, "vall", ["train", "val"], "v2")
        >>> print(str(e).replace(str(top), "DIR"))
        no rev vall episodes for data version v2 under DIR/rev; did you mean 'val'? (splits found for v2: train, val)
    """
    base = root / folder
    found = {v: splits_found(base, [pattern]) for v, pattern in versions}
    wanted = [version] if version is not None else [v for v, _ in versions]
    here = sorted({s for v in wanted for s in found.get(v, [])})
    hint = did_you_mean(split, sorted(set(here) | set(declared))) if split not in here else None
    hint = hint if hint != split else None
    target = hint or split
    where = f"for data version {version}" if version is not None else "for any data version"
    msg = f"{lead or f'no {task} {split} episodes {where}'} under {base}"
    if hint:
        msg += f"; did you mean {hint!r}?"
    if version is not None:
        msg += f" (splits found for {version}: {', '.join(found.get(version, [])) or 'none'})"
    else:
        each = "; ".join(f"{v}: {', '.join(found[v]) or 'none'}" for v, _ in versions)
        msg += f" (splits found per data version: {each})"
    if target in here:
        return MissingDataError(msg)
    elsewhere = [v for v, _ in versions if v not in wanted and target in found[v]]
    if elsewhere:
        msg += f"; {target} is there for data version {elsewhere[0]}: pass --data-version {elsewhere[0]}"
    elif target in declared:
        patterns = dict(versions)
        fetch = _version_fetch_hint(task, folder, [patterns[v] for v in wanted if v in patterns])
        msg += f"; {fetch}"
    return MissingDataError(msg)


def _version_fetch_hint(task: str, folder: str, patterns: Sequence[str]) -> str:
    """How to get the files of ``patterns``: the fetchable dataset that holds such a file, else
    the task's hint."""
    try:
        from vlneval.fetch.registry import current_registry  # deferred: msgspec (see _fetch_hint)

        reg = current_registry()
        regexes = [_pattern_regex(f"{folder}/{p}") for p in patterns]
        names = [
            name
            for name, d in reg.datasets.items()
            if any(r.fullmatch(f.path) for f in d.files for r in regexes)
        ]
    except Exception:  # noqa: BLE001 - the registry is a hint only
        names = []
    if names:
        return f"get its files with `vlneval data fetch {' '.join(names)}`"
    return _fetch_hint(task)
