"""The temporary files of an output: their names, and the removal of those a killed run left."""

from __future__ import annotations

import os
from pathlib import Path

TEMP_MARK = ".vlneval-tmp-"
_STALE_SECONDS = 24 * 3600  # a temporary file of another host is old after a day


def _host_tag() -> str:
    import hashlib
    import socket

    return hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]


def _temp_name(target: Path) -> Path:
    import secrets

    tag = f"{TEMP_MARK}{_host_tag()}-{os.getpid()}-{secrets.token_hex(4)}"
    return target.with_name(f".{target.name}{tag}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def clean_stale_temps(target: Path) -> list[Path]:
    """Removes the temporary files of ``target`` that a killed run left (same host: its
    process is gone; another host: older than a day); returns them.

    Example:
        >>> import tempfile
        >>> t = Path(tempfile.mkdtemp()) / "s.json"
        >>> left = t.with_name(".s.json" + TEMP_MARK + _host_tag() + "-999999999-abcd")
        >>> _ = left.write_bytes(b"{")
        >>> [p.name == left.name for p in clean_stale_temps(t)], left.exists()
        ([True], False)
    """
    import time

    prefix, host, removed = f".{target.name}{TEMP_MARK}", _host_tag(), []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        parts = entry.name[len(prefix) :].split("-")
        try:
            mine = len(parts) == 3 and parts[0] == host
            stale = (mine and not _alive(int(parts[1]))) or (
                time.time() - entry.stat(follow_symlinks=False).st_mtime > _STALE_SECONDS
            )
            if stale:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except (OSError, ValueError):
            continue
    return removed
