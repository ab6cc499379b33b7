"""The structural JSON scan the upload checks use: :mod:`vlneval._jsonshape`, shared with the
file reader (:mod:`vlneval.io`), so that the server and the command measure a file one way."""

from __future__ import annotations

from vlneval._jsonshape import JsonShape, ScanLimits, scan_json

__all__ = ["JsonShape", "scan_json", "ScanLimits"]
