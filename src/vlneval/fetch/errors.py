"""Errors of ``vlneval data fetch`` (all :class:`vlneval.errors.VLNEvalError`: exit code 2)."""

from __future__ import annotations

from vlneval.errors import VLNEvalError

__all__ = ["FetchError", "DownloadError", "ChecksumError", "UnverifiedError"]


class FetchError(VLNEvalError):
    """A dataset could not be fetched."""


class DownloadError(FetchError):
    """A URL could not be downloaded (no network, HTTP error, connection dropped)."""

    def __init__(self, url: str, reason: object, *, mirror: bool = False) -> None:
        self.url = url
        hint = (
            "check that the mirror serves the data-root layout"
            if mirror
            else "check the network, or fetch from a local copy with --mirror URL"
        )
        super().__init__(f"could not download {url}: {reason}; {hint}")


class ChecksumError(FetchError):
    """Downloaded bytes are not the registered ones; nothing was kept."""

    def __init__(self, path: str, url: str, expected: str, actual: str) -> None:
        self.path, self.expected, self.actual = path, expected, actual
        super().__init__(
            f"checksum mismatch for {path} (from {url}): expected {expected}, got {actual}; "
            "the download was removed"
        )


class UnverifiedError(FetchError):
    """Files without a known checksum were skipped (``--allow-unverified`` fetches them)."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        shown = ", ".join(paths[:6]) + (f" and {len(paths) - 6} more" if len(paths) > 6 else "")
        super().__init__(
            f"{len(paths)} file{'s' if len(paths) != 1 else ''} ha{'ve' if len(paths) != 1 else 's'} "
            f"no known checksum and {'were' if len(paths) != 1 else 'was'} not fetched: {shown}; "
            "pass --allow-unverified to download them anyway"
        )
