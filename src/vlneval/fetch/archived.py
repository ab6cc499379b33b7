"""A registered folder kept as one ``.tar.gz`` of it, as the readers accept it (REVERIE's
``BBox.tar.gz``, read by the scorer without unpacking): its files are checked inside it.

Example:
    >>> import hashlib, io, pathlib, tarfile, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "d").mkdir()
    >>> with tarfile.open(root / "d" / "F.tar.gz", "w:gz") as tf:
    ...     info = tarfile.TarInfo("F/a.json"); info.size = 2
    ...     tf.addfile(info, io.BytesIO(b"{}"))
    >>> a = FileEntry("d/F/a.json", sha256=hashlib.sha256(b"{}").hexdigest(), size=2)
    >>> [st.state for st in group_status([a, FileEntry("d/F/b.json", size=1)], "d/F/", root)]
    ['ok', 'missing']
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from vlneval.fetch.registry import FileEntry
from vlneval.fetch.verify import Digest, FileStatus, check, digest_bytes

__all__ = ["folder_archive", "group_status", "ARCHIVE_SUFFIX"]

ARCHIVE_SUFFIX = ".tar.gz"


def folder_archive(folder: str, root: Path) -> Path | None:
    """The ``<folder>.tar.gz`` standing for a registered folder absent from ``root``, or None
    (the folder itself wins when it is there, as it does for the readers)."""
    base = root / folder.rstrip("/")
    arc = base.with_name(base.name + ARCHIVE_SUFFIX)
    return arc if not base.is_dir() and arc.is_file() else None


def group_status(entries: list[FileEntry], folder: str, root: Path) -> list[FileStatus]:
    """The state of a folder's registered files: on disk, or inside ``<folder>.tar.gz`` when
    only that is there (a member ``<top>/<name>`` is the file ``<folder><name>``; ``path`` of
    an ``ok`` one is the archive, of any other None: the archive is never replaced for it)."""
    arc = folder_archive(folder, root)
    if arc is None:
        return [check(e, root) for e in entries]
    members = _member_digests(arc)
    out = []
    for e in entries:
        d = None if members is None else members.get(e.path.removeprefix(folder))
        if d is None:
            out.append(FileStatus(e, "missing" if members is not None else "corrupt"))
        elif not e.verified or d.matches(e):
            out.append(FileStatus(e, "ok" if e.verified else "unverified", arc, d.size, d))
        else:
            out.append(FileStatus(e, "corrupt", None, d.size, d))
    return out


def _member_digests(arc: Path) -> dict[str, Digest] | None:
    """The digests of an archive's files by their name under its top folder; None when the
    archive cannot be read."""
    out: dict[str, Digest] = {}
    try:
        with tarfile.open(arc, "r:gz") as tf:
            for m in tf:
                fh = tf.extractfile(m) if m.isfile() else None
                if fh is not None:
                    out[m.name.removeprefix("./").split("/", 1)[-1]] = digest_bytes(fh.read())
    except (tarfile.TarError, OSError, EOFError):
        return None
    return out
