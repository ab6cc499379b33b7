"""A folder of many files kept as its ``.tar.gz`` (REVERIE's ``BBox.tar.gz``, which the scorer
reads as it is): ``data list`` and ``fetch`` count its files as present, checked inside it."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from tests.fetch.server import Site, serve
from vlneval.cli.main import main
from vlneval.fetch import FetchError, fetch, override_registry, status
from vlneval.fetch.registry import Dataset, Group, Licence, Registry

OPEN = Licence("Toy Open Licence", "http://example.invalid/open", "Toy open licence text.")


def _bodies(n: int) -> dict[str, bytes]:
    return {f"scan_vp{i}.json": json.dumps({f"vp{i}": {}}).encode() for i in range(n)}


BODIES = _bodies(3)


def _registry(base: Path, bodies: dict[str, bytes] = BODIES) -> Registry:
    rows = [[n, len(b), hashlib.sha256(b).hexdigest()] for n, b in bodies.items()]
    (base / "boxes.json.gz").write_bytes(gzip.compress(json.dumps(rows).encode()))
    group = Group("reverie/BBox/", "http://127.0.0.1:9/BBox/", "boxes.json.gz", len(rows))
    return Registry(
        1, {"open": OPEN}, {"boxes": Dataset("toy boxes", "open", groups=[group])}, str(base)
    )


def _tar(root: Path, bodies: dict[str, bytes]) -> Path:
    path = root / "reverie" / "BBox.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, body in bodies.items():
            info = tarfile.TarInfo(f"BBox/{name}")
            info.size = len(body)
            tf.addfile(info, io.BytesIO(body))
    return path


@pytest.mark.parametrize(
    ("n", "row"),
    [
        (3, "  ok                 11 B  reverie/BBox/scan_vp1.json (inside reverie/BBox.tar.gz)"),
        (
            25,
            "  ok                290 B  reverie/BBox/ (25 files: 25 ok, inside reverie/BBox.tar.gz)",
        ),
    ],
)
def test_list_counts_the_archived_folder_present(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int, row: str
) -> None:
    root = tmp_path / "data"
    bodies = _bodies(n)
    _tar(root, bodies)
    with override_registry(_registry(tmp_path, bodies)):
        assert {st.state for st in status(root, ["boxes"])["boxes"]} == {"ok"}
        assert main(["data", "list", "--data-root", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"  licence: Toy Open Licence; complete ({n} ok)" in lines
    assert row in lines


def test_fetch_downloads_nothing_the_archive_holds(tmp_path: Path) -> None:
    root = tmp_path / "data"
    arc = _tar(root, BODIES)
    site = Site(files={f"reverie/BBox/{n}": b for n, b in BODIES.items()})
    with serve(site) as s, override_registry(_registry(tmp_path)):
        report = fetch(["boxes"], root, mirror=s.url, stream=io.StringIO())
    assert site.log == [] and report.present == {"boxes": 3} and report.downloaded == {}
    assert not (root / "reverie" / "BBox").exists() and arc.is_file()


def test_archive_lacking_a_file_is_named_and_kept(tmp_path: Path) -> None:
    root = tmp_path / "data"
    arc = _tar(root, {**BODIES, "scan_vp1.json": b"{}"})
    site = Site(files={f"reverie/BBox/{n}": b for n, b in BODIES.items()})
    with serve(site) as s, override_registry(_registry(tmp_path)):
        assert [st.state for st in status(root, ["boxes"])["boxes"]] == ["ok", "corrupt", "ok"]
        with pytest.raises(FetchError) as info:
            fetch(["boxes"], root, mirror=s.url, stream=io.StringIO())
    assert str(info.value) == (
        f"{arc} stands for reverie/BBox/ but its scan_vp1.json is corrupt: replace or remove "
        "the archive, then fetch again"
    )
    assert site.log == [] and arc.is_file()


def test_folder_beside_its_archive_is_checked_as_a_folder(tmp_path: Path) -> None:
    """The readers take the folder first: so does the check."""
    root = tmp_path / "data"
    _tar(root, BODIES)
    (root / "reverie" / "BBox").mkdir()
    with override_registry(_registry(tmp_path)):
        assert {st.state for st in status(root, ["boxes"])["boxes"]} == {"missing"}


def test_real_reverie_archive_verifies_every_box_file(data_root: Path) -> None:
    if not (data_root / "reverie" / "BBox.tar.gz").is_file():
        pytest.skip("no reverie/BBox.tar.gz in the data")
    files = status(data_root, ["reverie"])["reverie"]
    boxes = [st.state for st in files if st.entry.path.startswith("reverie/BBox/")]
    assert len(boxes) == 10_567 and set(boxes) == {"ok"}


def test_an_archive_that_cannot_be_read_is_named_as_a_whole(tmp_path: Path) -> None:
    root = tmp_path / "data"
    arc = _tar(root, BODIES)
    arc.write_bytes(b"not a tar.gz")
    site = Site(files={f"reverie/BBox/{n}": b for n, b in BODIES.items()})
    with serve(site) as s, override_registry(_registry(tmp_path)):
        assert {st.state for st in status(root, ["boxes"])["boxes"]} == {"corrupt"}
        with pytest.raises(FetchError) as info:
            fetch(["boxes"], root, mirror=s.url, stream=io.StringIO())
    assert str(info.value) == (
        f"{arc} stands for reverie/BBox/ but cannot be read as a .tar.gz: replace or remove "
        "the archive, then fetch again"
    )
    assert site.log == [] and arc.is_file()
