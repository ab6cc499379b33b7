"""The package version: one place, importable from every layer without the public API."""

__version__ = "0.1.0"
