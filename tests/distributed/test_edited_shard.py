"""A complete shard's manifest holds the sha256 of its records: a records file edited after the
run (same number of lines) is refused by merge, naming the file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from vlneval.cli.main import main


def vlneval(*args: Any) -> int:
    return main([str(a) for a in args])


def test_merge_refuses_records_edited_after_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "a.json"
    for i in range(2):
        assert vlneval("run", "--task", "demo", "--agent", "random", "--out", out, "--quiet",
                       "--shard", f"{i}/2") == 0  # fmt: skip
    records = tmp_path / "a.shard-1-of-2.jsonl"
    manifest = json.loads((tmp_path / "a.shard-1-of-2.manifest.json").read_text())
    wrote = hashlib.sha256(records.read_bytes()).hexdigest()
    assert manifest["records_sha256"] == wrote
    lines = records.read_text().splitlines()
    line = json.loads(lines[3])
    line["record"]["trajectory"] = line["record"]["trajectory"][:1]
    lines[3] = json.dumps(line)
    records.write_text("\n".join(lines) + "\n")
    now = hashlib.sha256(records.read_bytes()).hexdigest()
    shards = sorted(tmp_path.glob("a.shard-*-of-2.jsonl"))
    assert vlneval("merge", *shards, "--out", tmp_path / "m.json") == 2
    assert capsys.readouterr().err == (
        f"error: {records}: the records were changed after the shard ran (sha256 {now[:12]}, "
        f"the manifest says {wrote[:12]}): run the shard again without --resume\n"
    )
    assert not (tmp_path / "m.json").exists()


def test_merge_reads_each_records_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A complete shard's records are read once: the bytes parsed are the bytes hashed."""
    from vlneval.distributed.merge import merge

    out = tmp_path / "a.json"
    for i in range(2):
        assert vlneval("run", "--task", "demo", "--agent", "random", "--out", out, "--quiet",
                       "--shard", f"{i}/2") == 0  # fmt: skip
    reads: list[str] = []
    read_bytes = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self.name)
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    merged = merge(sorted(tmp_path.glob("a.shard-*-of-2.jsonl")))
    assert sorted(n for n in reads if n.endswith(".jsonl")) == [
        "a.shard-0-of-2.jsonl",
        "a.shard-1-of-2.jsonl",
    ]
    assert merged.n_episodes == merged.n_expected
