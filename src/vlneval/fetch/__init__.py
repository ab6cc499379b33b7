"""Getting the benchmark data: ``vlneval data fetch`` and ``vlneval data list``.

Datasets are downloaded from their official sources (or a mirror of the data-root layout),
checked against a registry of SHA-256 checksums and sizes, and renamed into place only when
they match; interrupted downloads resume. See :mod:`vlneval.fetch.registry` for where each
checksum comes from.

The names below are imported on first use (:mod:`vlneval._lazy`), so that a module that needs
one part (the data roots' hints read only :mod:`vlneval.fetch.registry`) loads only that part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlneval._lazy import lazy_attributes

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

if TYPE_CHECKING:
    from vlneval.fetch.core import (
        FetchReport,
        default_root,
        fetch,
        mirror_url,
        status,
        summary_line,
    )
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

__getattr__ = lazy_attributes(
    __name__,
    {
        "fetch": "vlneval.fetch.core",
        "status": "vlneval.fetch.core",
        "default_root": "vlneval.fetch.core",
        "mirror_url": "vlneval.fetch.core",
        "summary_line": "vlneval.fetch.core",
        "FetchReport": "vlneval.fetch.core",
        "check": "vlneval.fetch.verify",
        "FileStatus": "vlneval.fetch.verify",
        "STATES": "vlneval.fetch.verify",
        "Dataset": "vlneval.fetch.registry",
        "FileEntry": "vlneval.fetch.registry",
        "Registry": "vlneval.fetch.registry",
        "current_registry": "vlneval.fetch.registry",
        "load_registry": "vlneval.fetch.registry",
        "override_registry": "vlneval.fetch.registry",
        "FetchError": "vlneval.fetch.errors",
        "DownloadError": "vlneval.fetch.errors",
        "ChecksumError": "vlneval.fetch.errors",
        "UnverifiedError": "vlneval.fetch.errors",
    },
)
