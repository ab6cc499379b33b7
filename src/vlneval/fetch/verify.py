"""Checksums of files on disk and the state of each registered file under a data root.

A file may be on disk as its official name or, where the official name has no ``.gz``, as a
gzip of it (``R2R_train.json.gz``; the readers accept both): the gzip is checked by the
checksum of its decompressed bytes.

Example:
    >>> import pathlib, tempfile, hashlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "a.txt").write_bytes(b"abc")
    >>> e = FileEntry("a.txt", sha256=hashlib.sha256(b"abc").hexdigest(), size=3)
    >>> check(e, root).state
    'ok'
    >>> check(FileEntry("b.txt", sha256="0" * 64), root).state
    'missing'
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

from vlneval.fetch.registry import FileEntry
from vlneval.io import BOM, GZIP_MAGIC

__all__ = [
    "Digest",
    "FileStatus",
    "digest",
    "check",
    "local_path",
    "part_path",
    "sniff",
    "STATES",
]

#: ok: verified; corrupt: checksum differs; unverified: present, no known checksum;
#: partial: an interrupted download that the next fetch resumes; missing: not there.
STATES = ("ok", "corrupt", "unverified", "partial", "missing")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Digest:
    """The checksums of some bytes."""

    sha256: str
    git_sha1: str
    size: int

    def matches(self, entry: FileEntry) -> bool:
        """Whether these bytes are the entry's (every known checksum and the size agree), or
        one of its accepted alternates."""
        if any(a.sha256 == self.sha256 and a.size == self.size for a in entry.alternates):
            return True
        if entry.size is not None and self.size != entry.size:
            return False
        if entry.sha256 is not None and self.sha256 != entry.sha256:
            return False
        return entry.git_sha1 is None or self.git_sha1 == entry.git_sha1

    def expected_vs_actual(self, entry: FileEntry) -> tuple[str, str]:
        """The expected and the actual checksum, as ``sha256:...`` or ``git-sha1:...``."""
        if entry.sha256 is not None:
            return f"sha256:{entry.sha256}", f"sha256:{self.sha256}"
        return f"git-sha1:{entry.git_sha1}", f"git-sha1:{self.git_sha1}"


def _hash(path: Path, gunzip: bool, prefix: bytes | None) -> tuple[str, str, int]:
    """(sha256, sha1 of ``prefix`` + bytes, size) in one pass."""
    h, g, size = hashlib.sha256(), hashlib.sha1(prefix or b""), 0
    opener = gzip.open if gunzip else open
    with opener(path, "rb") as f:  # type: ignore[operator]
        while block := f.read(CHUNK):
            h.update(block)
            g.update(block)
            size += len(block)
    return h.hexdigest(), g.hexdigest(), size


def digest(path: Path, *, gunzip: bool = False) -> Digest:
    """SHA-256, git blob SHA-1 and size of a file (of its decompressed bytes with ``gunzip``).

    The git blob SHA-1 is ``sha1(b"blob <size>\\0" + bytes)``, what git records in a tree.
    A plain file is read once; a gzip twice (its decompressed size is known only at the end).
    """
    if not gunzip:
        n = path.stat().st_size
        sha, git, _ = _hash(path, False, b"blob %d\0" % n)
        return Digest(sha, git, n)
    sha, _, n = _hash(path, True, None)
    _, git, _ = _hash(path, True, b"blob %d\0" % n)
    return Digest(sha, git, n)


def digest_bytes(data: bytes) -> Digest:
    """:func:`digest` of bytes in memory (a member of an archive).

    Example:
        >>> d = digest_bytes(b"{}")
        >>> d.size, d.sha256 == hashlib.sha256(b"{}").hexdigest(), len(d.git_sha1)
        (2, True, 40)
    """
    git = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return Digest(hashlib.sha256(data).hexdigest(), git, len(data))


def part_path(target: Path) -> Path:
    """Where an interrupted download of ``target`` is kept to be resumed."""
    return target.with_name(target.name + ".part")


def local_path(entry: FileEntry, root: Path) -> tuple[Path, bool] | None:
    """The file on disk for an entry and whether it is the gzipped variant; None if absent."""
    target = root / entry.path
    if target.is_file():
        return target, False
    if not entry.path.endswith(".gz"):
        gz = target.with_name(target.name + ".gz")
        if gz.is_file():
            return gz, True
    return None


@dataclass(frozen=True)
class FileStatus:
    """The state of one registered file under a data root."""

    entry: FileEntry
    state: str
    path: Path | None = None
    size: int | None = None
    actual: Digest | None = None


def check(entry: FileEntry, root: Path) -> FileStatus:
    """Finds and verifies one registered file (reads it all when a checksum is known)."""
    found = local_path(entry, root)
    if found is None:
        part = part_path(root / entry.path)
        if part.is_file():
            return FileStatus(entry, "partial", part, part.stat().st_size)
        return FileStatus(entry, "missing")
    path, gz = found
    if not entry.verified:
        return FileStatus(entry, "unverified", path, path.stat().st_size)
    try:
        d = digest(path, gunzip=gz)
    except (OSError, EOFError, gzip.BadGzipFile):
        return FileStatus(entry, "corrupt", path, path.stat().st_size)
    return FileStatus(entry, "ok" if d.matches(entry) else "corrupt", path, d.size, d)


_KINDS = (
    (b"PK\x03\x04", "a zip archive"),
    (GZIP_MAGIC, "gzip data"),
    (b"%PDF", "a PDF document"),
)


def sniff(path: Path, name: str) -> str | None:
    """What is unmistakably wrong with a file that has no checksum to vouch for it, judged by
    the kind its registered ``name`` promises; None when nothing is. Refused: an HTML page
    (hosts such as Google Drive answer with a sign-in, quota or virus-scan page instead of the
    file), anything but gzip for a ``.gz``, and an archive or document for a ``.json``.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "f"
        >>> _ = p.write_bytes(b"<!DOCTYPE html><html>Sign in</html>")
        >>> sniff(p, "reverie/data_v2/BBoxes.json")
        'an HTML page, not JSON'
        >>> _ = p.write_bytes(b' {"a": 1}')
        >>> sniff(p, "x.json") is None, sniff(p, "x.jsonl.gz")
        (True, 'JSON text, not gzip data')
    """
    with open(path, "rb") as f:
        head = f.read(512)
    low = name.lower()
    kind = _kind(head)
    if low.endswith(".gz"):
        return None if head.startswith(GZIP_MAGIC) else f"{kind}, not gzip data"
    wanted = "JSON" if low.endswith((".json", ".jsonl")) else "the file"
    if kind == "an HTML page" and not low.endswith((".html", ".htm")):
        return f"{kind}, not {wanted}"
    if wanted == "JSON" and kind in {k for _, k in _KINDS}:
        return f"{kind}, not JSON"
    return None


def _kind(head: bytes) -> str:
    """A few words naming what some bytes look like."""
    for magic, kind in _KINDS:
        if head.startswith(magic):
            return kind
    text = head.removeprefix(BOM).lstrip()
    if text[:1] == b"<":
        return "an HTML page" if b"html" in text[:200].lower() else "markup (XML or HTML)"
    if text[:1] in (b"{", b"["):
        return "JSON text"
    return "an empty file" if not head else "unrecognised bytes"
