"""One file's download: resumable over HTTP Range, verified, then renamed into place.

pooch (:func:`pooch.retrieve`) owns the last step: it hands the downloader a temporary file in
the target folder, checks the SHA-256, and moves the file to its name only when it matches
(the temporary file is removed on any failure, including Ctrl-C). pooch's own
``HTTPDownloader`` restarts from zero, so :class:`RangeDownloader` is passed to it instead: it
keeps the bytes received so far in ``<name>.part`` beside the target and asks for the rest
with ``Range: bytes=N-`` (a server that ignores the header sends the whole file again, which is
handled). A connection that drops mid-file is resumed in the same call up to ``retries`` times;
a later ``vlneval data fetch`` resumes what an interrupted one left.

The finished ``.part`` is verified (SHA-256, or the git blob SHA-1 where only that is known)
before it becomes pooch's file; a mismatch removes it and raises :class:`ChecksumError`. A
file without a known checksum is never resumed (a stale part could not be detected).
"""

from __future__ import annotations

import http.client
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pooch

from vlneval._version import __version__
from vlneval.fetch.errors import ChecksumError, DownloadError
from vlneval.fetch.registry import FileEntry
from vlneval.fetch.verify import digest, part_path

__all__ = ["RangeDownloader", "download"]

BLOCK = 1 << 16
USER_AGENT = f"vlneval/{__version__} (+https://github.com/vlneval/vlneval)"
# Errors worth a retry: resets, timeouts, truncated bodies, 5xx.
_TRANSIENT = (ConnectionError, TimeoutError, http.client.HTTPException, urllib.error.URLError)


class _Restart(Exception):
    """The partial file cannot be continued; start again from byte 0."""


class RangeDownloader:
    """A pooch downloader that resumes into ``<target>.part`` with HTTP Range requests.

    Args:
        entry: the registered file (its checksum verifies the finished download).
        target: the file's final path (the part file lives beside it).
        on_bytes: called with each number of bytes received (negative when a restart
            discards bytes already counted).
        retries: how many times a dropped connection is resumed within one call.
        timeout: seconds to wait for the server on each read.
        backoff: seconds before the first retry (doubled each time, at most 10 s).
    """

    def __init__(
        self,
        entry: FileEntry,
        target: Path,
        *,
        on_bytes: Callable[[int], None] = lambda n: None,
        retries: int = 3,
        timeout: float = 60.0,
        backoff: float = 0.5,
        mirror: bool = False,
    ) -> None:
        self.entry, self.target, self.part = entry, target, part_path(target)
        self.on_bytes, self.retries, self.timeout = on_bytes, retries, timeout
        self.backoff, self.mirror = backoff, mirror
        self.requests: list[str | None] = []  # the Range header of each request (for tests)

    def __call__(self, url: str, output_file: str, pooch_obj: Any, check_only: bool = False) -> Any:
        """Downloads ``url`` to ``output_file`` (the pooch protocol)."""
        if check_only:
            return self._exists(url)
        if not self.entry.verified:
            self.part.unlink(missing_ok=True)
        already = self.part.stat().st_size if self.part.exists() else 0
        self.on_bytes(already)
        attempt = 0
        while True:
            try:
                self._transfer(url)
                break
            except _Restart:
                self._discard()
            except _TRANSIENT as exc:  # an HTTPError is worth a retry only when it is a 5xx
                client_error = isinstance(exc, urllib.error.HTTPError) and exc.code < 500
                if client_error or attempt >= self.retries:
                    raise DownloadError(url, _reason(exc), mirror=self.mirror) from None
                attempt += 1
                time.sleep(min(self.backoff * 2 ** (attempt - 1), 10.0))
        self._verify(url)
        os.replace(self.part, output_file)
        return None

    def _exists(self, url: str) -> bool:
        req = urllib.request.Request(url, method="HEAD", headers={"User-Agent": USER_AGENT})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout):
                return True
        except (urllib.error.URLError, OSError):
            return False

    def _discard(self) -> None:
        have = self.part.stat().st_size if self.part.exists() else 0
        self.part.unlink(missing_ok=True)
        self.on_bytes(-have)

    def _transfer(self, url: str) -> None:
        have = self.part.stat().st_size if self.part.exists() else 0
        size = self.entry.size
        if size is not None and have > size:
            raise _Restart
        if size is not None and have == size and have > 0:
            return  # complete already: only verification is left
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if have:
            headers["Range"] = f"bytes={have}-"
        self.requests.append(headers.get("Range"))
        req = urllib.request.Request(url, headers=headers)
        try:
            resp = urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and have:
                raise _Restart from None  # the part is not a prefix the server knows
            raise
        with resp:
            if have and resp.status != 206:
                self._discard()  # the server ignored Range and sends everything
                have = 0
            length = resp.headers.get("Content-Length")
            expected = have + int(length) if length is not None else None
            with open(self.part, "ab" if have else "wb") as f:
                while block := resp.read(BLOCK):
                    f.write(block)
                    self.on_bytes(len(block))
                    have += len(block)
            if expected is not None and have < expected:
                raise http.client.IncompleteRead(b"", expected - have)

    def _verify(self, url: str) -> None:
        if not self.entry.verified:
            return
        d = digest(self.part)
        if not d.matches(self.entry):
            self.part.unlink(missing_ok=True)
            expected, actual = d.expected_vs_actual(self.entry)
            if self.entry.size is not None and d.size != self.entry.size:
                expected += f" ({self.entry.size:,} bytes)"
                actual += f" ({d.size:,} bytes)"
            raise ChecksumError(self.entry.path, url, expected, actual)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"{exc.reason}"
    if isinstance(exc, http.client.IncompleteRead):
        return "the connection closed before the end of the file"
    return str(exc) or type(exc).__name__


def download(
    entry: FileEntry,
    root: Path,
    url: str,
    *,
    on_bytes: Callable[[int], None] = lambda n: None,
    retries: int = 3,
    timeout: float = 60.0,
    backoff: float = 0.5,
    mirror: bool = False,
) -> Path:
    """Downloads one registered file to ``root/entry.path`` through pooch; returns the path.

    Raises:
        DownloadError: the URL could not be read (after ``retries`` resumed attempts).
        ChecksumError: the bytes are not the registered ones (nothing is left behind).
    """
    target = root / entry.path
    target.parent.mkdir(parents=True, exist_ok=True)
    downloader = RangeDownloader(
        entry,
        target,
        on_bytes=on_bytes,
        retries=retries,
        timeout=timeout,
        backoff=backoff,
        mirror=mirror,
    )
    pooch.get_logger().setLevel(logging.WARNING)  # its INFO lines would duplicate ours
    # pooch checks the SHA-256 again before its rename; an entry with accepted alternates is
    # checked by the downloader alone (pooch knows one hash per file)
    known = f"sha256:{entry.sha256}" if entry.sha256 and not entry.alternates else None
    path = pooch.retrieve(
        url, known, fname=target.name, path=target.parent, downloader=downloader, progressbar=False
    )
    return Path(path)
