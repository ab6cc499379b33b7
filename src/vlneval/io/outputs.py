"""Where each output goes (:func:`resolve_output`), resolved and checked before writing."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlneval.errors import VLNEvalError

# ----- writing -------------------------------------------------------------------------------
#
# Every output (summary JSON, per-episode table, predictions, protocol card, HTML report) is
# written by :func:`write_outputs`:
#
# - ``-`` is stdout; so is a path that is the process's stdout (``/dev/stdout``, or the file
#   stdout is redirected to); ``/dev/stderr`` likewise.
# - A symlink is followed: its target is written, atomically in the target's folder.
# - A file that is not a regular file (a FIFO, a device, an open descriptor ``/dev/fd/N``) is
#   written in place, never renamed over.
# - A missing folder is an error naming it (library callers may ask for it to be made).
# - Outputs given together are replaced together: every new file is written first, then each
#   is renamed into place in the given order, the last (the summary) last; an old last file
#   is moved aside first, so that a kill in between leaves the new files without a summary,
#   never beside the old one.
# - No temporary file survives: where the filesystem allows it the data goes to an anonymous
#   file (``O_TMPFILE``, invisible until it is linked under a dot-name and renamed at once);
#   elsewhere to a dot-named file ``.NAME.vlneval-tmp-HOST-PID-RANDOM``. Either is removed on
#   any exception, on SIGINT and on SIGTERM/SIGHUP; one left by a SIGKILL (which cannot be
#   caught) is removed by the next write of the same file, once its process is gone.

STDOUT = "-"
_PROC_FD = re.compile(r"^/proc/(self|\d+)/fd/(\d+)$")


@dataclass(frozen=True)
class Output:
    """Where one output goes, resolved before anything is written (see :func:`resolve_output`).

    Attributes:
        given: the name as given (for messages).
        kind: ``"file"`` (replaced atomically), ``"stream"`` (written in place: a FIFO, a
            device), ``"fd"`` (an open descriptor of this process, ``/dev/fd/N``),
            ``"stdout"`` or ``"stderr"``.
        path: the file written (a symlink's target); None for stdout and stderr.
        fd: the descriptor of kind ``"fd"``.

    Example:
        >>> resolve_output("-").kind
        'stdout'
    """

    given: str
    kind: str
    path: Path | None = None
    fd: int | None = None

    @property
    def is_stdout(self) -> bool:
        """True when this output is the process's stdout."""
        return self.kind == "stdout"


def _same_as_fd(st: os.stat_result, fd: int) -> bool:
    try:
        return os.path.samestat(st, os.fstat(fd))
    except OSError:
        return False


def _proc_fd(p: Path) -> int | None:
    """N when ``p`` is this process's ``/proc/self/fd/N`` (or ``/proc/PID/fd/N``)."""
    m = _PROC_FD.match(p.as_posix())
    if m is None or m.group(1) not in ("self", str(os.getpid())):
        return None
    return int(m.group(2))


def _walk_links(path: Path) -> Path:
    """``path`` with its folders resolved and its symlinks followed, stopping at a
    ``/proc/PID/fd/N`` link (the open file it names is written in place)."""
    p = Path(os.path.realpath(path.parent)) / path.name
    for _ in range(40):  # the kernel's own limit on a symlink chain
        if _PROC_FD.match(p.as_posix()) or not p.is_symlink():
            return p
        link = Path(os.readlink(p))
        q = link if link.is_absolute() else p.parent / link
        p = Path(os.path.realpath(q.parent)) / q.name
    raise VLNEvalError(f"{path}: too many levels of symbolic links")


def resolve_output(path: str | Path, *, what: str = "output", make_parents: bool = False) -> Output:
    """Where writing ``path`` goes (see the rules above this function's source).

    Args:
        path: a file name, or ``-`` for stdout.
        what: the option or role, for messages (``--json``).
        make_parents: create a missing folder instead of refusing.

    Raises:
        VLNEvalError: a folder, a missing folder, or a symlink loop; the message names it.

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> (d / "link.json").symlink_to(d / "real.json")
        >>> resolve_output(d / "link.json").path == d / "real.json"
        True
        >>> try:
        ...     resolve_output(d / "nowhere" / "s.json", what="--json")
        ... except VLNEvalError as e:
        ...     print(str(e).replace(str(d), "D"))
        --json D/nowhere/s.json: the folder D/nowhere does not exist (create it first)
    """
    given = str(path)
    if given == STDOUT:
        return Output(given, "stdout")
    target = _walk_links(Path(path))
    fd = _proc_fd(target)
    if fd is not None:
        return Output(given, {1: "stdout", 2: "stderr"}.get(fd, "fd"), target, fd)
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    except NotADirectoryError as exc:
        raise VLNEvalError(
            f"{what} {given}: cannot write the file ({_file_in_path(target)} is a file, not a "
            "folder)"
        ) from exc
    except OSError as exc:
        raise VLNEvalError(
            f"{what} {given}: cannot write the file ({exc.strerror or exc})"
        ) from exc
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise VLNEvalError(f"{what} {given}: is a folder; give a file name")
        if _same_as_fd(st, 1):
            return Output(given, "stdout")
        if _same_as_fd(st, 2):
            return Output(given, "stderr")
        if not stat.S_ISREG(st.st_mode):
            return Output(given, "stream", target)
        return Output(given, "file", target)
    folder = target.parent
    if not folder.is_dir():
        if make_parents:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise VLNEvalError(
                    f"{what} {given}: cannot create the folder {folder} ({exc.strerror or exc})"
                ) from exc
        else:
            via = "" if target == Path(os.path.abspath(path)) else f" (the target of {given})"
            raise VLNEvalError(
                f"{what} {given}: the folder {folder}{via} does not exist (create it first)"
            )
    return Output(given, "file", target)


def _file_in_path(target: Path) -> Path:
    """The first folder of ``target``'s path that is a file."""
    for parent in reversed(target.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return target.parent


def check_outputs(outputs: Mapping[str, Output]) -> None:
    """Refuses two outputs to stdout, or two outputs that are one file.

    Args:
        outputs: option name (``--json``) -> its resolved output.

    Raises:
        VLNEvalError: naming both options.

    Example:
        >>> try:
        ...     check_outputs({"--json": resolve_output("-"), "--per-episode": resolve_output("-")})
        ... except VLNEvalError as e:
        ...     print(e)
        --json and --per-episode both write to stdout; send one of them to a file
    """
    seen: dict[Any, str] = {}
    for name, out in outputs.items():
        key: Any = out.kind if out.kind in ("stdout", "stderr") else out.path
        if key in seen:
            where = "stdout" if key == "stdout" else ("stderr" if key == "stderr" else str(key))
            raise VLNEvalError(
                f"{seen[key]} and {name} both write to {where}; send one of them to "
                + ("a file" if key in ("stdout", "stderr") else "another file")
            )
        seen[key] = name
