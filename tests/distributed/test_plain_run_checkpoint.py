"""``vlneval run --checkpoint FILE`` without ``--shard``: FILE is checked before the run and its
fingerprint is on the protocol card, the same as on the card of the merged shards."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from vlneval.cli.main import main

AGENT = "tests.distributed.agents:CheckpointRandom"


def vlneval(*args: Any) -> int:
    return main([str(a) for a in args])


def _run(out: Path, ckpt: Path, *extra: Any) -> int:
    return vlneval("run", "--task", "demo", "--agent", AGENT, "--checkpoint", ckpt, "--out", out,
                   "--quiet", *extra)  # fmt: skip


def test_a_missing_checkpoint_is_refused_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.pth"
    assert _run(tmp_path / "p.json", missing) == 2
    assert capsys.readouterr().err == f"error: --checkpoint {missing}: no such file or folder\n"
    assert not (tmp_path / "p.json").exists()


def test_the_card_holds_the_checkpoint_as_the_merged_card_does(tmp_path: Path) -> None:
    ckpt = tmp_path / "c.pth"
    ckpt.write_text("2")
    assert _run(tmp_path / "p.json", ckpt) == 0
    card = json.loads((tmp_path / "p.protocol.json").read_text())
    assert card["checkpoint"] == {
        "path": str(ckpt),
        "sha256": hashlib.sha256(b"2").hexdigest(),
        "bytes": 1,
    }
    (tmp_path / "m").mkdir()
    merged = tmp_path / "m" / "p.json"
    for i in range(2):
        assert _run(merged, ckpt, "--shard", f"{i}/2") == 0
    assert vlneval("merge", *sorted((tmp_path / "m").glob("*.jsonl")), "--out", merged) == 0
    assert (
        json.loads(merged.with_name("p.protocol.json").read_text())["checkpoint"]
        == (card["checkpoint"])
    )
    assert merged.read_bytes() == (tmp_path / "p.json").read_bytes()
