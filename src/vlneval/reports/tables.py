"""Per-episode tables (.csv, .jsonl, .parquet by suffix) and summary JSON, written atomically."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from vlneval.errors import VLNEvalError
from vlneval.io import atomic_write_bytes

__all__ = ["write_rows", "write_summary", "to_json_bytes", "check_table_suffix", "TABLE_SUFFIXES"]

TABLE_SUFFIXES = (".csv", ".jsonl", ".parquet")


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def to_json_bytes(obj: Any, *, indent: bool = True) -> bytes:
    """Strict JSON (no NaN literals: NaN becomes null, infinity the string "inf")."""
    import msgspec

    raw = msgspec.json.encode(_clean(obj))
    return msgspec.json.format(raw, indent=2) + b"\n" if indent else raw


def write_summary(path: str | Path, summary: dict[str, Any]) -> None:
    """Writes the summary JSON atomically."""
    atomic_write_bytes(path, to_json_bytes(summary))


def check_table_suffix(path: str | Path) -> None:
    """Raises a clear error unless ``path`` ends in a per-episode table suffix.

    Example:
        >>> check_table_suffix("rows.csv")
    """
    if Path(path).suffix.lower() not in TABLE_SUFFIXES:
        raise VLNEvalError(
            f"{path}: unknown table format {Path(path).suffix!r}; use one of {', '.join(TABLE_SUFFIXES)}"
        )


def write_rows(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Writes the per-episode table; the format follows the suffix.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
        >>> write_rows(p, [{"instr_id": "1_0", "success": 1.0}])
        >>> p.read_text().splitlines()
        ['instr_id,success', '1_0,1.0']
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        buf = io.StringIO()
        fields = list(rows[0]) if rows else []
        writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        atomic_write_bytes(path, buf.getvalue().encode("utf-8"))
    elif suffix == ".jsonl":
        import msgspec

        enc = msgspec.json.Encoder()
        atomic_write_bytes(path, b"".join(enc.encode(_clean(r)) + b"\n" for r in rows))
    elif suffix == ".parquet":
        _write_parquet(path, rows)
    else:
        raise VLNEvalError(
            f"{path}: unknown table format {suffix!r}; use one of {', '.join(TABLE_SUFFIXES)}"
        )


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise VLNEvalError(
            "writing .parquet needs pyarrow: pip install 'vlneval[parquet]'"
        ) from exc
    table = pa.Table.from_pylist(rows)
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf)
    atomic_write_bytes(path, buf.getvalue().to_pybytes())
