"""The shipped registry through a loopback mirror: REVERIE's real files (shared data, decompressed)
fetched and verified; its v2 boxes (Google Drive, no published checksum) optional and
unverified; a host that answers with an HTML page instead of an unverified file is refused;
``data list`` says which files have no checksum."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from tests.fetch.server import Site, serve
from vlneval.cli.main import main
from vlneval.fetch import (
    FetchError,
    UnverifiedError,
    fetch,
    load_registry,
    override_registry,
    status,
)
from vlneval.fetch.registry import Dataset, FileEntry, Registry

N_BOXES = 40  # BBox files served (of 10,567): enough for the many-files path (over 20)
V2_BOXES = "reverie/data_v2/BBoxes.json"
HTML = b"<!DOCTYPE html><html><head><title>Google Drive - Virus scan warning</title></html>"


def _shared(data_root: Path) -> tuple[Registry, dict[str, bytes]]:
    """The shipped REVERIE entries whose official bytes the shared data holds (plus the v2
    boxes entry), as a one-dataset registry, and those bytes by path."""
    shipped = load_registry()
    body: dict[str, bytes] = {}
    entries: list[FileEntry] = []
    with tarfile.open(data_root / "reverie/BBox.tar.gz") as tar:
        names = sorted(m.name for m in tar.getmembers() if m.isfile())[:N_BOXES]
        boxes = {f"reverie/{n}": tar.extractfile(n).read() for n in names}  # type: ignore[union-attr]
    for e in shipped.files("reverie"):
        gz = data_root / (e.path + ".gz")
        if gz.is_file():
            body[e.path] = gzip.decompress(gz.read_bytes())
        elif e.path in boxes:
            body[e.path] = boxes[e.path]
        elif e.path != V2_BOXES:
            continue
        entries.append(e)
    d = shipped.datasets["reverie"]
    one = Registry(1, shipped.licences, {"reverie": Dataset(d.title, d.licence, files=entries)})
    return one, body


def test_the_v2_boxes_are_registered_optional_and_unverified() -> None:
    (e,) = [e for e in load_registry().files("reverie") if e.path == V2_BOXES]
    assert not e.verified and e.optional and e.sha256 is None
    assert e.url.startswith("https://drive.usercontent.google.com/download?id=1QXvcfIdxCyMxuamg2")
    # the datasets with no published checksum are unverified file by file, never guessed
    for name in ("rxr", "ndh"):
        assert not any(f.verified for f in load_registry().files(name)), name


def test_real_reverie_files_through_a_loopback_mirror(data_root: Path, tmp_path: Path) -> None:
    reg, body = _shared(data_root)
    v2 = b'{"17DRP5sb8fy_00ebbf3782c64d74aaf7dd39cd561175": {}}'
    with serve(Site(files={**body, V2_BOXES: v2})) as site, override_registry(reg):
        out = io.StringIO()
        report = fetch(["reverie"], tmp_path, mirror=site.url, stream=out, backoff=0)
        text = out.getvalue()
        # the optional unverified file is a note, not an error; everything else is verified
        assert f"note: {V2_BOXES} has no known checksum and was not fetched (optional)" in text
        assert report.optional_skipped == [V2_BOXES] and report.skipped == []
        assert not (tmp_path / V2_BOXES).exists()
        states = [st.state for st in status(tmp_path, ["reverie"])["reverie"]]
        assert states.count("ok") == len(body) == 8 + N_BOXES
        assert states.count("missing") == 1
        for path, data in body.items():
            assert (tmp_path / path).read_bytes() == data
        # with --allow-unverified it is fetched, and its sha256 printed
        out = io.StringIO()
        fetch(["reverie"], tmp_path, mirror=site.url, stream=out, allow_unverified=True)
        assert (tmp_path / V2_BOXES).read_bytes() == v2
        sha = hashlib.sha256(v2).hexdigest()
        assert f"warning: {V2_BOXES} is unverified (no known checksum); its sha256 is {sha}" in (
            out.getvalue()
        )
        assert {p for p, _ in site.log} == {*body, V2_BOXES}


def test_an_html_page_instead_of_an_unverified_file_is_refused(
    data_root: Path, tmp_path: Path
) -> None:
    reg, body = _shared(data_root)
    refused = pytest.raises(FetchError, match=f"sent an HTML page, not JSON for {V2_BOXES}")
    with serve(Site(files={**body, V2_BOXES: HTML})) as site, override_registry(reg), refused:
        fetch(["reverie"], tmp_path, mirror=site.url, stream=io.StringIO(), allow_unverified=True)
    target = tmp_path / V2_BOXES
    assert not target.exists()
    assert not [p.name for p in target.parent.iterdir() if p.name.startswith(("BBoxes", "."))]


def test_a_required_unverified_file_is_still_an_error(tmp_path: Path) -> None:
    entry = FileEntry("rxr/rxr_val_seen_guide.jsonl.gz", "http://127.0.0.1:9/unused")
    reg = Registry(1, load_registry().licences, {"rxr": Dataset("RxR", "rxr", files=[entry])})
    with serve(Site(files={entry.path: gzip.compress(b'{"a": 1}\n')})) as site:
        with override_registry(reg), pytest.raises(UnverifiedError, match="--allow-unverified"):
            fetch(["rxr"], tmp_path, mirror=site.url, stream=io.StringIO())
        with override_registry(reg):  # a gzip where a gzip is promised passes the sniff
            fetch(["rxr"], tmp_path, mirror=site.url, stream=io.StringIO(), allow_unverified=True)
    assert (tmp_path / entry.path).is_file()


def test_list_says_which_files_have_no_checksum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["data", "list", "reverie", "rxr", "ndh", "--data-root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"missing    size unknown  {V2_BOXES} (unverified: no known checksum)" in out
    assert "unverified: 1 of 10577 files has no known checksum" in out
    assert "`vlneval data fetch reverie --allow-unverified` downloads it as served" in out
    assert "unverified: 4 of 4 files have no known checksum" in out
    assert (
        "missing    size unknown  rxr/rxr_train_guide.jsonl.gz (unverified: no known checksum)"
        in out
    )
    assert "missing    size unknown  cvdn/NDH/train.json (unverified: no known checksum)" in out
    # files vouched for by their git blob SHA-1 only are not called unverified
    assert "missing    size unknown  reverie/REVERIE_train.json\n" in out
