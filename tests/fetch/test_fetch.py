"""``vlneval data fetch`` / ``data list`` against a loopback HTTP server (never the internet).

Fixture files are generated here and registered through a test-only registry override; one
real file of the shared data is checked against the shipped registry.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import socket
import zipfile
from pathlib import Path

import pytest

from tests.fetch.server import Site, serve
from vlneval.cli.main import main
from vlneval.errors import UnknownNameError
from vlneval.fetch import (
    ChecksumError,
    DownloadError,
    UnverifiedError,
    check,
    fetch,
    load_registry,
    override_registry,
    status,
)
from vlneval.fetch.registry import Archive, Dataset, FileEntry, Licence, Registry

TERMS = Licence("Toy Terms of Use", "http://example.invalid/terms", "Toy terms: research only.")
OPEN = Licence("Toy Open Licence", "http://example.invalid/open", "Toy open licence text.")


def _blob(seed: int, n: int) -> bytes:
    out, block = bytearray(), hashlib.sha256(str(seed).encode()).digest()
    while len(out) < n:
        out += block
        block = hashlib.sha256(block).digest()
    return bytes(out[:n])


FILES = {
    "toygraph/a_connectivity.json": _blob(1, 5_000),
    "toygraph/b_connectivity.json": _blob(2, 7_000),
    "toy/TOY_val.json": _blob(3, 300_000),
    "toy/TOY_test.json": _blob(4, 1_000),
    "open/routes.json": _blob(5, 2_000),
    "open/nochecksum.json": _blob(6, 900),
}


def _entry(path: str, *, checksum: bool = True) -> FileEntry:
    body = FILES[path]
    if not checksum:
        return FileEntry(path, "http://127.0.0.1:9/unused")
    return FileEntry(path, "http://127.0.0.1:9/unused", hashlib.sha256(body).hexdigest(), len(body))


def toy_registry(official_base: str = "http://127.0.0.1:9") -> Registry:
    """Three datasets: toy (needs toygraph, same terms), open (one unverified file)."""

    def ds(title: str, lic: str, paths: list[str], requires: list[str] | None = None) -> Dataset:
        files = [
            FileEntry(e.path, f"{official_base}/{e.path}", e.sha256, e.size)
            for e in (_entry(p, checksum=not p.endswith("nochecksum.json")) for p in paths)
        ]
        return Dataset(title, lic, requires or [], [], files)

    return Registry(
        1,
        {"terms": TERMS, "open": OPEN},
        {
            "toygraph": ds(
                "toy graphs",
                "terms",
                ["toygraph/a_connectivity.json", "toygraph/b_connectivity.json"],
            ),
            "toy": ds(
                "toy benchmark", "terms", ["toy/TOY_val.json", "toy/TOY_test.json"], ["toygraph"]
            ),
            "open": ds("open toy", "open", ["open/routes.json", "open/nochecksum.json"]),
        },
    )


@pytest.fixture
def site():
    with serve(Site(files=dict(FILES))) as s:
        yield s


def _leftovers(root: Path) -> list[str]:
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p.name not in {Path(k).name for k in FILES}
    )


def test_good_fetch_from_a_mirror(site: Site, tmp_path: Path) -> None:
    out = io.StringIO()
    with override_registry(toy_registry()):
        report = fetch(["TOY"], tmp_path, mirror=site.url + "/", stream=out, backoff=0)
        for path in (
            "toygraph/a_connectivity.json",
            "toygraph/b_connectivity.json",
            "toy/TOY_val.json",
        ):
            assert (tmp_path / path).read_bytes() == FILES[path]
        assert report.downloaded == {"toygraph": 2, "toy": 2}
        assert all(st.state == "ok" for files in status(tmp_path, ["toy"]).values() for st in files)
    assert _leftovers(tmp_path) == []
    text = out.getvalue()
    assert "fetching toy/TOY_val.json (300.0 kB)" in text and "done toy/TOY_val.json" in text
    # every request went to the mirror at the file's path under the data root
    assert {p for p, _ in site.log} == {
        "toygraph/a_connectivity.json",
        "toygraph/b_connectivity.json",
        "toy/TOY_val.json",
        "toy/TOY_test.json",
    }


def test_licence_printed_once_before_the_first_download(site: Site, tmp_path: Path) -> None:
    out = io.StringIO()
    with override_registry(toy_registry()):
        fetch(["toy"], tmp_path, mirror=site.url, stream=out)
        text = out.getvalue()
        # the full terms once, before any file; the second dataset under them refers back
        assert text.count(TERMS.text) == 1
        assert text.index(TERMS.text) < text.index("fetching")
        assert "toy: toy benchmark. Licence: Toy Terms of Use (shown above)." in text
        again = io.StringIO()
        report = fetch(["toy"], tmp_path, mirror=site.url, stream=again)
    assert TERMS.name not in again.getvalue()  # nothing downloaded, nothing to agree to
    assert report.downloaded == {} and report.present == {"toygraph": 2, "toy": 2}


def test_dropped_connection_is_resumed_with_range(site: Site, tmp_path: Path) -> None:
    site.drop_once["toy/TOY_val.json"] = 150_000
    with override_registry(toy_registry()):
        fetch(["toy"], tmp_path, mirror=site.url, stream=io.StringIO(), backoff=0)
    assert (tmp_path / "toy/TOY_val.json").read_bytes() == FILES["toy/TOY_val.json"]
    assert [r for p, r in site.log if p == "toy/TOY_val.json"] == [None, "bytes=150000-"]
    assert _leftovers(tmp_path) == []


def test_interrupted_fetch_is_resumed_by_the_next_one(site: Site, tmp_path: Path) -> None:
    site.drop_once["toy/TOY_val.json"] = 100_000
    with override_registry(toy_registry()):
        with pytest.raises(DownloadError, match="toy/TOY_val.json: the connection closed"):
            fetch(["toy"], tmp_path, mirror=site.url, stream=io.StringIO(), retries=0)
        part = tmp_path / "toy/TOY_val.json.part"
        assert part.stat().st_size == 100_000 and not (tmp_path / "toy/TOY_val.json").exists()
        assert [st.state for st in status(tmp_path, ["toy"])["toy"]] == ["partial", "missing"]
        fetch(["toy"], tmp_path, mirror=site.url, stream=io.StringIO())
    assert (tmp_path / "toy/TOY_val.json").read_bytes() == FILES["toy/TOY_val.json"]
    assert [r for p, r in site.log if p == "toy/TOY_val.json"] == [None, "bytes=100000-"]
    assert not part.exists()


def test_server_that_ignores_range_sends_everything_again(site: Site, tmp_path: Path) -> None:
    site.drop_once["toy/TOY_val.json"] = 100_000
    site.ignore_range = True
    with override_registry(toy_registry()):
        fetch(["toy"], tmp_path, mirror=site.url, stream=io.StringIO(), backoff=0)
    assert (tmp_path / "toy/TOY_val.json").read_bytes() == FILES["toy/TOY_val.json"]


def test_corrupted_file_is_an_error_and_nothing_is_left(site: Site, tmp_path: Path) -> None:
    good = FILES["toy/TOY_test.json"]
    site.files["toy/TOY_test.json"] = b"X" + good[1:]
    with override_registry(toy_registry()), pytest.raises(ChecksumError) as info:
        fetch(["toy"], tmp_path, mirror=site.url, stream=io.StringIO())
    msg = str(info.value)
    assert "toy/TOY_test.json" in msg
    assert f"expected sha256:{hashlib.sha256(good).hexdigest()}" in msg
    assert f"got sha256:{hashlib.sha256(site.files['toy/TOY_test.json']).hexdigest()}" in msg
    folder = tmp_path / "toy"
    assert sorted(p.name for p in folder.iterdir()) == ["TOY_val.json"]  # no part, no temp file


def test_corrupt_file_on_disk_is_replaced(site: Site, tmp_path: Path) -> None:
    with override_registry(toy_registry()):
        fetch(["toygraph"], tmp_path, mirror=site.url, stream=io.StringIO())
        (tmp_path / "toygraph/a_connectivity.json").write_bytes(b"damaged")
        assert [st.state for st in status(tmp_path, ["toygraph"])["toygraph"]] == ["corrupt", "ok"]
        out = io.StringIO()
        fetch(["toygraph"], tmp_path, mirror=site.url, stream=out)
    assert "replacing" in out.getvalue()
    assert (tmp_path / "toygraph/a_connectivity.json").read_bytes() == FILES[
        "toygraph/a_connectivity.json"
    ]


def test_unverified_files_are_skipped_unless_allowed(site: Site, tmp_path: Path) -> None:
    with override_registry(toy_registry()):
        with pytest.raises(UnverifiedError, match="open/nochecksum.json.*--allow-unverified"):
            fetch(["open"], tmp_path, mirror=site.url, stream=io.StringIO())
        assert (tmp_path / "open/routes.json").exists()  # the verified file was still fetched
        assert not (tmp_path / "open/nochecksum.json").exists()
        out = io.StringIO()
        fetch(["open"], tmp_path, mirror=site.url, stream=out, allow_unverified=True)
        sha = hashlib.sha256(FILES["open/nochecksum.json"]).hexdigest()
        assert (
            f"warning: open/nochecksum.json is unverified (no known checksum); its sha256 is {sha}"
            in out.getvalue()
        )
        assert [st.state for st in status(tmp_path, ["open"])["open"]] == ["ok", "unverified"]


def test_no_network_names_the_url_and_suggests_a_mirror(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    reg = toy_registry(f"http://127.0.0.1:{port}")
    with override_registry(reg), pytest.raises(DownloadError) as info:
        fetch(["toygraph"], tmp_path, stream=io.StringIO(), retries=1, backoff=0)
    msg = str(info.value)
    assert f"http://127.0.0.1:{port}/toygraph/a_connectivity.json" in msg
    assert "--mirror URL" in msg
    assert _leftovers(tmp_path) == []


def test_http_404_from_a_mirror(site: Site, tmp_path: Path) -> None:
    del site.files["toy/TOY_test.json"]
    with (
        override_registry(toy_registry()),
        pytest.raises(DownloadError, match="HTTP 404.*mirror serves"),
    ):
        fetch(["toy"], tmp_path, mirror=site.url, stream=io.StringIO())


def test_unknown_name_did_you_mean() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'reverie'"):
        fetch(["revrie"], Path("unused"))


def test_cli_unknown_name_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["data", "fetch", "R2RR", "--data-root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown dataset 'r2rr'; did you mean 'r2r'?" in err
    assert list(tmp_path.iterdir()) == []


def test_cli_fetch_and_list(site: Site, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(tmp_path)
    with override_registry(toy_registry()):
        assert main(["data", "fetch", "toy", "--data-root", root, "--mirror", site.url]) == 0
        err = capsys.readouterr().err
        assert "4 files downloaded (313.0 kB), 0 already present" in err
        (tmp_path / "toy/TOY_test.json").write_bytes(b"broken")
        gz = tmp_path / "open/routes.json.gz"  # a gzipped copy counts, checked decompressed
        gz.parent.mkdir()
        gz.write_bytes(gzip.compress(FILES["open/routes.json"]))
        assert main(["data", "list", "--data-root", root]) == 0
    out = capsys.readouterr().out
    assert f"data root: {root}\n" in out
    assert "toy: toy benchmark\n  licence: Toy Terms of Use; incomplete (1 ok, 1 corrupt)" in out
    assert "ok               5.0 kB  toygraph/a_connectivity.json" in out
    assert "corrupt             6 B  toy/TOY_test.json" in out
    assert "ok               2.0 kB  open/routes.json (as .gz)" in out
    assert "missing    size unknown  open/nochecksum.json" in out


def test_cli_list_of_an_empty_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "nothing-yet"
    assert main(["data", "list", "connectivity", "--data-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "(does not exist yet)" in out
    assert "missing         23.8 MB  matterport3d/connectivity/ (92 files: 92 missing)" in out


def test_real_file_checked_against_the_shipped_registry(data_root: Path, tmp_path: Path) -> None:
    """R2R val_seen as the official link serves it (the shared copy, decompressed)."""
    shipped = load_registry()
    (entry,) = [e for e in shipped.files("r2r") if e.path == "r2r/R2R_val_seen.json"]
    body = gzip.decompress((data_root / "r2r/R2R_val_seen.json.gz").read_bytes())
    one = Registry(
        1, shipped.licences, {"r2r": Dataset("R2R val_seen", "matterport3d", files=[entry])}
    )
    out = io.StringIO()
    with serve(Site(files={entry.path: body})) as s, override_registry(one):
        fetch(["r2r"], tmp_path, mirror=s.url, stream=out)
    assert (tmp_path / entry.path).read_bytes() == body
    assert "Matterport3D Terms of Use" in out.getvalue() and "MP_TOS.pdf" in out.getvalue()


def _archive_registry(url: str, members: dict[str, bytes]) -> Registry:
    files = [
        FileEntry(f"ce/{name}", "", hashlib.sha256(body).hexdigest(), len(body))
        for name, body in members.items()
    ]
    arc = Archive(url, "ce/pre.zip", "ce/")
    return Registry(
        1, {"terms": TERMS}, {"ce": Dataset("toy CE", "terms", files=files, archive=arc)}
    )


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    return buf.getvalue()


def test_archive_is_downloaded_extracted_verified_and_removed(tmp_path: Path) -> None:
    members = {"pre/val/val.json.gz": _blob(7, 3_000), "pre/val/val_gt.json.gz": _blob(8, 4_000)}
    site = Site(
        files={
            "dl/pre.zip": _zip(
                {
                    "pre/val/val.json.gz": members["pre/val/val.json.gz"],
                    "pre/val/val_gt.json.gz": members["pre/val/val_gt.json.gz"],
                    "pre/other.bin": b"unused",
                }
            )
        }
    )
    with serve(site) as s, override_registry(_archive_registry(s.url + "/dl/pre.zip", members)):
        fetch(["ce"], tmp_path, stream=io.StringIO())
    for name, body in members.items():
        assert (tmp_path / "ce" / name).read_bytes() == body
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "ce/pre/val/val.json.gz",
        "ce/pre/val/val_gt.json.gz",
    ]


def test_archive_member_with_wrong_bytes_is_refused(tmp_path: Path) -> None:
    members = {"pre/val/val.json.gz": _blob(7, 3_000)}
    site = Site(files={"pre.zip": _zip({"pre/val/val.json.gz": b"not the registered bytes"})})
    match = r"ce/pre/val/val.json.gz \(from .*pre.zip \(pre/val/val.json.gz\)\)"
    with (
        serve(site) as s,
        override_registry(_archive_registry(s.url + "/pre.zip", members)),
        pytest.raises(ChecksumError, match=match),
    ):
        fetch(["ce"], tmp_path, stream=io.StringIO())
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_shipped_registry_matches_the_shared_data(data_root: Path) -> None:
    """Every registered file present in the shared data (plain or gzipped) verifies."""
    reg = load_registry()
    checked = 0
    for name in reg.datasets:
        for st in (check(e, data_root) for e in reg.files(name)):
            if st.entry.verified and st.state != "missing":
                assert st.state == "ok", (st.entry.path, st.actual)
                checked += 1
    # 92 graphs, 4 R2R, 1 R4R, 8 REVERIE, 2 + 2 Touchdown, 5 VLN-CE
    assert checked >= 114


def test_registry_names_and_requirements() -> None:
    reg = load_registry()
    assert reg.resolve(["r2r", "CVDN", "touchdown-unseen"]) == [
        "connectivity",
        "r2r",
        "ndh",
        "touchdown-graph",
        "touchdown-unseen",
    ]
    assert len(reg.files("connectivity")) == 92
    assert len(reg.files("reverie")) == 10 + 10_567  # with the v2 boxes (unverified)
    assert all(e.url.startswith("https://") for n in reg.datasets for e in reg.files(n) if e.url)


def test_many_files_are_fetched_together_and_listed_as_one_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies = {f"boxes/scan_{i:03d}.json": _blob(100 + i, 500 + i) for i in range(40)}
    files = [FileEntry(p, "", hashlib.sha256(b).hexdigest(), len(b)) for p, b in bodies.items()]
    reg = Registry(1, {"open": OPEN}, {"boxes": Dataset("toy boxes", "open", files=files)})
    out = io.StringIO()
    with serve(Site(files=dict(bodies))) as s, override_registry(reg):
        fetch(["boxes"], tmp_path, mirror=s.url, stream=out)
        (tmp_path / "boxes/scan_007.json").write_bytes(b"{}")
        assert main(["data", "list", "--data-root", str(tmp_path)]) == 0
    assert all((tmp_path / p).read_bytes() == b for p, b in bodies.items() if "007" not in p)
    text = out.getvalue()
    assert text.startswith("boxes: toy boxes.\nLicence: Toy Open Licence.")
    assert "fetching boxes (40 files) (20.8 kB)" in text and "done boxes (40 files)" in text
    listed = capsys.readouterr().out
    assert "mixed           20.3 kB  boxes/ (40 files: 39 ok, 1 corrupt)"  # sizes on disk in listed
    assert "  corrupt             2 B  boxes/scan_007.json" in listed


def test_progress_bar_on_a_terminal() -> None:
    from vlneval.fetch.progress import RichProgress, make_progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    p = make_progress(stream)
    assert isinstance(p, RichProgress)
    t = p.start("r2r/R2R_val_seen.json", 2_000)
    p.advance(t, 2_000)
    p.finish(t)
    p.close()
    assert "r2r/R2R_val_seen.json" in stream.getvalue()


def test_a_bad_file_among_many_stops_the_fetch_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    bodies = {f"boxes/scan_{i:03d}.json": _blob(200 + i, 300) for i in range(30)}
    files = [FileEntry(p, "", hashlib.sha256(b).hexdigest(), len(b)) for p, b in bodies.items()]
    reg = Registry(1, {"open": OPEN}, {"boxes": Dataset("toy boxes", "open", files=files)})
    served = dict(bodies)
    served["boxes/scan_013.json"] = b"y" * 300
    with (
        serve(Site(files=served)) as s,
        override_registry(reg),
        pytest.raises(ChecksumError, match="boxes/scan_013.json"),
    ):
        fetch(["boxes"], tmp_path, mirror=s.url, stream=io.StringIO())
    names = {p.name for p in (tmp_path / "boxes").iterdir()}
    assert "scan_013.json" not in names
    assert all(n.startswith("scan_") and n.endswith(".json") for n in names)
