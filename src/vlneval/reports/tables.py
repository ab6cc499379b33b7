"""Per-episode tables (.csv, .jsonl, .parquet) and summary JSON, as bytes and as files.

Files are written by :func:`vlneval.io.write_outputs`: ``-`` is stdout, symlinks are followed,
a FIFO or device is written in place, and a table written with its summary
(:func:`write_results`) is replaced together with it, the summary last. JSON is strict: a
non-finite number (NaN, infinity) is ``null``, never a string.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

import msgspec

from vlneval.errors import VLNEvalError
from vlneval.io import STDOUT, Output, to_json_bytes, write_outputs

__all__ = [
    "write_rows",
    "write_summary",
    "write_results",
    "rows_bytes",
    "table_format",
    "TABLE_SUFFIXES",
    "STREAM_FORMATS",
]

TABLE_SUFFIXES = (".csv", ".jsonl", ".parquet")
#: The per-episode formats that can go to stdout (text).
STREAM_FORMATS = ("csv", "jsonl")


def table_format(path: str | Path, fmt: str | None = None, *, stream: bool = False) -> str:
    """The per-episode format of ``path``: ``fmt`` when given (it must agree with a file's
    suffix), else the suffix; stdout (``-``), or a ``stream`` (``/dev/stdout``, a FIFO) whose
    name has no table suffix, needs ``fmt``: ``csv`` or ``jsonl``.

    Raises:
        VLNEvalError: an unknown suffix, stdout without a text format, or a disagreement.

    Example:
        >>> table_format("rows.csv"), table_format("-", "jsonl")
        ('csv', 'jsonl')
    """
    suffix = Path(path).suffix.lower()
    if str(path) == STDOUT or (stream and suffix not in TABLE_SUFFIXES):
        if fmt not in STREAM_FORMATS:
            raise VLNEvalError(
                f"--per-episode {path} writes the table to a stream: say which format with "
                "--format csv or --format jsonl"
            )
        return fmt
    if suffix not in TABLE_SUFFIXES:
        raise VLNEvalError(
            f"{path}: unknown table format {suffix!r}; use one of {', '.join(TABLE_SUFFIXES)}"
        )
    if fmt is not None and fmt != suffix[1:]:
        raise VLNEvalError(f"--per-episode {path} is {suffix[1:]} by its name, not {fmt}")
    return suffix[1:]


def rows_bytes(rows: list[dict[str, Any]], fmt: str) -> bytes:
    """The per-episode table in ``fmt`` (``csv``, ``jsonl`` or ``parquet``). A value that is
    not a finite number (an unreachable episode's NE) is an empty cell in CSV and null in
    JSONL, so a column's mean is over the episodes that have a value, as the summary's.

    Example:
        >>> rows_bytes([{"instr_id": "1_0", "nav_error": float("inf")}], "jsonl")
        b'{"instr_id":"1_0","nav_error":null}\\n'
        >>> rows_bytes([{"instr_id": "1_0", "nav_error": float("inf")}], "csv")
        b'instr_id,nav_error\\n1_0,\\n'
    """
    if fmt == "csv":
        buf = io.StringIO()
        fields = list(dict.fromkeys(k for r in rows for k in r)) if rows else []
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in r.items()} for r in rows)
        return buf.getvalue().encode("utf-8")
    if fmt == "jsonl":
        enc = msgspec.json.Encoder()
        return b"".join(enc.encode(r) + b"\n" for r in rows)
    if fmt == "parquet":
        return _parquet(rows)
    raise VLNEvalError(f"unknown table format {fmt!r}; use one of csv, jsonl, parquet")


def _cell(value: Any) -> Any:
    """A CSV cell: empty for a float that is not finite (NaN, infinity)."""
    return "" if isinstance(value, float) and not math.isfinite(value) else value


def write_rows(
    path: str | Path | Output, rows: list[dict[str, Any]], *, fmt: str | None = None
) -> None:
    """Writes the per-episode table; the format follows the suffix (or ``fmt``, needed for
    stdout, ``-``).

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
        >>> write_rows(p, [{"instr_id": "1_0", "success": 1.0}])
        >>> p.read_text().splitlines()
        ['instr_id,success', '1_0,1.0']
    """
    write_results(rows_to=path, rows=rows, fmt=fmt)


def write_summary(path: str | Path | Output, summary: dict[str, Any]) -> None:
    """Writes the summary JSON (``-``: stdout)."""
    write_results(summary_to=path, summary=summary)


def write_results(
    *,
    summary_to: str | Path | Output | None = None,
    summary: Any = None,
    rows_to: str | Path | Output | None = None,
    rows: list[dict[str, Any]] | None = None,
    fmt: str | None = None,
) -> None:
    """Writes the per-episode table and the summary together, the summary last (so that a
    summary never stands beside the rows of another run).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> write_results(summary_to=d / "s.json", summary={"SR": 1.0},
        ...               rows_to=d / "r.jsonl", rows=[{"success": 1}])
        >>> sorted(p.name for p in d.iterdir())
        ['r.jsonl', 's.json']
    """
    items: list[tuple[Output | str | Path, bytes]] = []
    if rows_to is not None:
        if isinstance(rows_to, Output):
            form = table_format(rows_to.given, fmt, stream=rows_to.kind != "file")
        else:
            form = table_format(rows_to, fmt)
        items.append((rows_to, rows_bytes(rows or [], form)))
    if summary_to is not None:
        items.append((summary_to, to_json_bytes(summary)))
    if items:
        write_outputs(items)


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    try:
        import pyarrow as pa  # deferred: pyarrow
        import pyarrow.parquet as pq  # deferred: pyarrow
    except ImportError as exc:
        raise VLNEvalError(
            "writing .parquet needs pyarrow: pip install 'vlneval[parquet]'"
        ) from exc
    table = pa.Table.from_pylist(rows)
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    return bytes(buf.getvalue().to_pybytes())
