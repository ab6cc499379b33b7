"""JSON lines with every bad line named: the files of RxR and of VLN-CE's ``rxr-jsonl`` form."""

from __future__ import annotations

from typing import Any

from vlneval.errors import ProblemCollector

__all__ = ["iter_jsonl"]


def iter_jsonl(raw: bytes, pc: ProblemCollector) -> list[tuple[int, Any]]:
    """Decodes JSON lines; a bad line is recorded as a problem naming its line number."""
    import msgspec

    decoder = msgspec.json.Decoder()
    rows: list[tuple[int, Any]] = []
    for lineno, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((lineno, decoder.decode(line)))
        except msgspec.DecodeError as exc:
            pc.add(f"not valid JSON ({exc})", field=f"line {lineno}")
    return rows
