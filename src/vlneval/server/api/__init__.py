"""The JSON API (``/api/v1``)."""
