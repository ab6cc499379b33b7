"""Fetching datasets into a data root, and the state of what is there.

:func:`fetch` resolves the names (with the datasets they require), checks what is already
present, prints each dataset's licence before its first download, and downloads the rest:
from the official URLs, or from ``<mirror>/<path under the data root>`` with a mirror. Files
without a known checksum are skipped unless ``allow_unverified``, and named at the end.
"""

from __future__ import annotations

import os
import shutil
import sys
import urllib.parse
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TextIO

from vlneval.fetch.archived import ARCHIVE_SUFFIX, folder_archive, group_status
from vlneval.fetch.download import download
from vlneval.fetch.errors import ChecksumError, FetchError, UnverifiedError
from vlneval.fetch.progress import Progress, human_size, make_progress
from vlneval.fetch.registry import Dataset, FileEntry, Registry, current_registry
from vlneval.fetch.verify import FileStatus, check, digest, sniff
from vlneval.io.paths import env_path

__all__ = ["FetchReport", "fetch", "status", "default_root", "mirror_url", "summary_line"]

#: Files of a dataset fetched at once (many small files, e.g. REVERIE's 10,567 box files).
WORKERS = 8
#: A dataset with more files than this shows one progress task for all of them.
GROUP_AT = 20


def default_root() -> Path:
    """``$VLNEVAL_DATA``, else the per-user data folder (``$XDG_DATA_HOME/vlneval``,
    ``~/.local/share/vlneval``; ``%LOCALAPPDATA%\\vlneval`` on Windows), ``~`` expanded.

    Example:
        >>> from unittest import mock
        >>> env = {"HOME": "/home/ada", "VLNEVAL_DATA": "", "XDG_DATA_HOME": ""}
        >>> with mock.patch.dict("os.environ", env), mock.patch.object(sys, "platform", "linux"):
        ...     print(default_root())
        /home/ada/.local/share/vlneval
    """
    env = env_path("VLNEVAL_DATA")
    if env is not None:
        return env
    local = env_path("LOCALAPPDATA") if sys.platform == "win32" else None
    if local is not None:
        return local / "vlneval"
    return env_path("XDG_DATA_HOME", "~/.local/share") / "vlneval"


def mirror_url(mirror: str, path: str) -> str:
    """The URL of a file on a mirror: ``<mirror>/<path under the data root>``.

    Example:
        >>> mirror_url("http://127.0.0.1:8000/data/", "r2r/R2R_val seen.json")
        'http://127.0.0.1:8000/data/r2r/R2R_val%20seen.json'
    """
    return mirror.rstrip("/") + "/" + urllib.parse.quote(path)


@dataclass
class FetchReport:
    """What a fetch did, per dataset: files already present, downloaded, skipped (unverified;
    ``optional_skipped``: unverified files the datasets are usable without)."""

    root: Path
    present: dict[str, int] = field(default_factory=dict)
    downloaded: dict[str, int] = field(default_factory=dict)
    downloaded_bytes: int = 0
    skipped: list[str] = field(default_factory=list)
    optional_skipped: list[str] = field(default_factory=list)
    licences_shown: list[str] = field(default_factory=list)


def status(root: Path, names: Sequence[str] | None = None) -> dict[str, list[FileStatus]]:
    """The state of every file of the named datasets (default: all) under ``root``."""
    reg = current_registry()
    keys = list(reg.datasets) if not names else reg.resolve(names)
    return {k: _dataset_status(reg, k, root) for k in keys}


def _dataset_status(reg: Registry, name: str, root: Path) -> list[FileStatus]:
    """Every file's state, a folder's files inside its ``.tar.gz`` when only that is there."""
    d = reg.datasets[name]
    out = [check(e, root) for e in d.files]
    for g in d.groups:
        out.extend(group_status(reg.group_files(g), g.folder, root))
    return out


@dataclass
class _Fetcher:
    reg: Registry
    root: Path
    mirror: str | None
    allow_unverified: bool
    progress: Progress
    retries: int
    backoff: float

    def __post_init__(self) -> None:
        self.report = FetchReport(self.root)

    def licence(self, name: str) -> None:
        """Prints a dataset's licence before its first download (the full text once a run)."""
        lic = self.reg.licence(name)
        d = self.reg.datasets[name]
        if lic.name in self.report.licences_shown:
            self.progress.message(f"{name}: {d.title}. Licence: {lic.name} (shown above).")
            return
        self.report.licences_shown.append(lic.name)
        self.progress.message(f"{name}: {d.title}.\nLicence: {lic.name}. {lic.text}")

    def todo(self, name: str) -> list[FileEntry]:
        """The files of a dataset that must be downloaded (missing, partial or corrupt)."""
        need: list[FileEntry] = []
        present = 0
        for st in _dataset_status(self.reg, name, self.root):
            if st.state in ("ok", "unverified"):
                present += 1
                continue
            _not_in_archive(st, self.reg.datasets[name], self.root)
            if st.state == "corrupt" and st.path is not None:
                self.progress.message(f"replacing {st.path} (its checksum does not match)")
                st.path.unlink()
            if not st.entry.verified and not self.allow_unverified:
                skipped = self.report.optional_skipped if st.entry.optional else self.report.skipped
                skipped.append(st.entry.path)
                continue
            need.append(st.entry)
        self.report.present[name] = present
        return need

    def one(self, entry: FileEntry, on_bytes: Callable[[int], None]) -> None:
        url = mirror_url(self.mirror, entry.path) if self.mirror else entry.url
        if not url:
            raise FetchError(f"{entry.path} has no download URL of its own")
        path = download(
            entry,
            self.root,
            url,
            on_bytes=on_bytes,
            retries=self.retries,
            backoff=self.backoff,
            mirror=self.mirror is not None,
        )
        if not entry.verified:
            wrong = sniff(path, entry.path)
            if wrong is not None:
                path.unlink(missing_ok=True)
                raise FetchError(
                    f"{url} sent {wrong} for {entry.path}, which has no known checksum; it was "
                    "removed (the host may want a sign-in or a confirmation in a browser: "
                    f"download it by hand to {self.root / entry.path})"
                )
            d = digest(path)
            self.progress.message(
                f"warning: {entry.path} is unverified (no known checksum); its sha256 is {d.sha256}"
            )

    def files(self, name: str, need: list[FileEntry]) -> None:
        total = sum(e.size or 0 for e in need) if all(e.size for e in need) else None
        if len(need) > GROUP_AT:
            task = self.progress.start(f"{name} ({len(need):,} files)", total)
            advance = partial(self.progress.advance, task)
            pool = ThreadPoolExecutor(WORKERS)
            try:
                futures = [pool.submit(self.one, e, advance) for e in need]
                done, _ = wait(futures, return_when=FIRST_EXCEPTION)
                failed = [f.exception() for f in done if f.exception() is not None]
                if failed:
                    raise failed[0]  # type: ignore[misc]
            finally:
                # on an error or Ctrl-C, files not started are dropped; running ones finish
                # (or leave a .part that the next fetch resumes)
                pool.shutdown(wait=True, cancel_futures=True)
            self.progress.finish(task)
        else:
            for e in need:
                task = self.progress.start(e.path, e.size)
                self.one(e, partial(self.progress.advance, task))
                self.progress.finish(task)
        self.report.downloaded[name] = len(need)
        self.report.downloaded_bytes += sum(
            (self.root / e.path).stat().st_size for e in need if (self.root / e.path).exists()
        )

    def archive(self, name: str, d: Dataset, need: list[FileEntry]) -> None:
        """Downloads the dataset's archive, extracts and verifies the needed files."""
        if d.archive is None:
            raise FetchError(f"{name} has no archive")
        arc = FileEntry(d.archive.path, d.archive.url)
        task = self.progress.start(d.archive.path, None)
        path = download(
            arc,
            self.root,
            d.archive.url,
            on_bytes=partial(self.progress.advance, task),
            retries=self.retries,
            backoff=self.backoff,
        )
        self.progress.finish(task)
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
                for e in need:
                    _extract(zf, names, e, self.root, d.archive.strip, d.archive.url)
        except zipfile.BadZipFile as exc:
            raise FetchError(f"{d.archive.url} is not a readable zip archive ({exc})") from None
        finally:
            path.unlink(missing_ok=True)
        self.report.downloaded[name] = len(need)

    def run(self, names: Sequence[str]) -> FetchReport:
        for name in self.reg.resolve(names):
            need = self.todo(name)
            if not need:
                continue
            self.licence(name)
            d = self.reg.datasets[name]
            if d.archive is not None and not self.mirror:
                self.archive(name, d, need)
            else:
                self.files(name, need)
        return self.report


def _not_in_archive(st: FileStatus, d: Dataset, root: Path) -> None:
    """Refuses to download a file its folder's archive should hold: the readers take the folder
    first, and a folder of a few files would hide the archive's others."""
    for g in d.groups:
        arc = folder_archive(g.folder, root) if st.entry.path.startswith(g.folder) else None
        if arc is not None and st.state == "corrupt" and st.size is None:  # unreadable
            raise FetchError(
                f"{arc} stands for {g.folder} but cannot be read as a {ARCHIVE_SUFFIX}: "
                "replace or remove the archive, then fetch again"
            )
        if arc is not None:
            raise FetchError(
                f"{arc} stands for {g.folder} but its {st.entry.path.removeprefix(g.folder)} "
                f"is {st.state}: replace or remove the archive, then fetch again"
            )


def _extract(
    zf: zipfile.ZipFile, names: list[str], entry: FileEntry, root: Path, strip: str, url: str
) -> None:
    """Extracts one registered file from an archive to a temporary name, verifies, renames."""
    inner = entry.path.removeprefix(strip)
    member = next((n for n in names if n == inner or n.endswith("/" + inner)), None)
    if member is None:
        raise FetchError(f"{url} holds no {inner} (needed for {entry.path})")
    target = root / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.extracting")
    try:
        with zf.open(member) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        d = digest(tmp)
        if entry.verified and not d.matches(entry):
            expected, actual = d.expected_vs_actual(entry)
            raise ChecksumError(entry.path, f"{url} ({member})", expected, actual)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def fetch(
    names: Sequence[str],
    root: Path | None = None,
    *,
    mirror: str | None = None,
    allow_unverified: bool = False,
    stream: TextIO | None = None,
    retries: int = 3,
    backoff: float = 0.5,
) -> FetchReport:
    """Fetches datasets (and the ones they require) into a data root.

    Args:
        names: dataset names (``r2r``, ``connectivity``, ...; case-insensitive, aliases ok).
        root: the data root (default :func:`default_root`).
        mirror: fetch every file from ``<mirror>/<its path under the data root>`` instead.
        allow_unverified: also download files that have no known checksum.
        stream: where licences and progress go (default stderr).
        retries: resumed attempts per file after a dropped connection.
        backoff: seconds before the first retry.

    Raises:
        UnknownNameError: a name is not a dataset (with the closest one).
        DownloadError, ChecksumError: a file could not be fetched intact.
        UnverifiedError: after fetching everything else, when unverified files were skipped.
    """
    root = Path(root) if root is not None else default_root()
    reg = current_registry()
    reg.resolve(names)  # unknown names fail before anything is printed
    progress = make_progress(stream)
    try:
        report = _Fetcher(reg, root, mirror, allow_unverified, progress, retries, backoff).run(
            names
        )
    finally:
        progress.close()
    for path in report.optional_skipped:
        (stream or sys.stderr).write(
            f"note: {path} has no known checksum and was not fetched (optional); "
            "--allow-unverified downloads it as served\n"
        )
    if report.skipped:
        raise UnverifiedError(report.skipped)
    return report


def summary_line(report: FetchReport) -> str:
    """One line: what was downloaded and what was already there."""
    got = sum(report.downloaded.values())
    had = sum(report.present.values())
    return (
        f"{got:,} file{'s' if got != 1 else ''} downloaded ({human_size(report.downloaded_bytes)}), "
        f"{had:,} already present, in {report.root}"
    )
