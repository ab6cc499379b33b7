"""Getting the benchmark data: ``vlneval data fetch`` and ``vlneval data list``.

Datasets are downloaded from their official sources (or a mirror of the data-root layout),
checked against a registry of SHA-256 checksums and sizes, and renamed into place only when
they match; interrupted downloads resume. See :mod:`vlneval.fetch.registry` for where each
checksum comes from.
"""

from __future__ import annotations

from vlneval.fetch.core import FetchReport, default_root, fetch, mirror_url, status, summary_line
from vlneval.fetch.errors import ChecksumError, DownloadError, FetchError, UnverifiedError
from vlneval.fetch.registry import (
    Dataset,
    FileEntry,
    Registry,
    current_registry,
    load_registry,
    override_registry,
)
from vlneval.fetch.verify import STATES, FileStatus, check

__all__ = [
    "fetch",
    "status",
    "check",
    "default_root",
    "mirror_url",
    "summary_line",
    "FetchReport",
    "FileStatus",
    "STATES",
    "Dataset",
    "FileEntry",
    "Registry",
    "current_registry",
    "load_registry",
    "override_registry",
    "FetchError",
    "DownloadError",
    "ChecksumError",
    "UnverifiedError",
]
