"""Outputs written atomically and together (:func:`write_outputs`), and strict JSON bytes
(:func:`to_json_bytes`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

from vlneval.errors import VLNEvalError
from vlneval.io.outputs import Output, check_outputs, resolve_output
from vlneval.io.temps import _temp_name, clean_stale_temps


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while outputs were being written."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass
class _Pending:
    """One file output between its writing and its rename."""

    out: Output
    data: bytes
    mode: int | None = None  # permission bits of the file replaced (kept)
    fd: int | None = None  # the anonymous (O_TMPFILE) file, until linked
    temp: Path | None = None  # the named temporary file, once there is one
    placed: bool = False  # renamed over the target

    @property
    def target(self) -> Path:
        return cast(Path, self.out.path)

    def prepare(self) -> None:
        """Writes the data to an anonymous file (or a dot-named one) beside the target."""
        clean_stale_temps(self.target)
        try:
            self.mode = stat.S_IMODE(self.target.stat().st_mode)
        except OSError:
            self.mode = None
        flag = getattr(os, "O_TMPFILE", 0)
        if flag and os.path.isdir("/proc/self/fd"):
            try:
                self.fd = os.open(self.target.parent, flag | os.O_WRONLY | os.O_CLOEXEC, 0o666)
            except OSError:  # the filesystem has no O_TMPFILE: a named file instead
                self.fd = None
        if self.fd is None:
            self._write_named()
        else:
            self._fill(self.fd)

    def _fill(self, fd: int) -> None:
        view = memoryview(self.data)
        while view:
            view = view[os.write(fd, view) :]
        if self.mode is not None:
            os.fchmod(fd, self.mode)
        os.fsync(fd)

    def _write_named(self) -> None:
        self.temp = _temp_name(self.target)
        fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            self._fill(fd)
        finally:
            os.close(fd)

    def commit(self) -> None:
        """Renames the new file over the target (an anonymous one is linked first); ``placed``
        says so even when a signal comes with the rename."""
        if self.fd is not None:
            self.temp = _temp_name(self.target)
            try:
                os.link(f"/proc/self/fd/{self.fd}", self.temp, follow_symlinks=True)
            except OSError:  # no linkat through /proc here: write it again, named
                self._write_named()
            os.close(self.fd)
            self.fd = None
        with _signals_held():  # else one arriving in the rename raises before it is recorded
            os.replace(cast(Path, self.temp), self.target)
            self.temp = None
            self.placed = True

    def discard(self) -> None:
        """Removes what is left of the new file."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)
            self.temp = None


def _write_stream(out: Output, data: bytes) -> None:
    """Writes to stdout, stderr, an open descriptor or a non-regular file, in place."""
    if out.kind in ("stdout", "stderr"):
        stream = sys.stdout if out.kind == "stdout" else sys.stderr
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:  # a text stream without bytes underneath (an embedding host's)
            stream.write(data.decode("utf-8"))
            stream.flush()
        return
    fd = out.fd if out.kind == "fd" else os.open(cast(Path, out.path), os.O_WRONLY | os.O_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(cast(int, fd), view) :]
    finally:
        if out.kind != "fd":
            os.close(cast(int, fd))


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT wait until the block ends (where threads have signal masks)."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    names = ("SIGTERM", "SIGHUP", "SIGINT")
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {getattr(signal, n) for n in names})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)  # a held signal acts here


class _SignalGuard:
    """While outputs are written, SIGTERM and SIGHUP raise (so that ``finally`` removes the
    temporary files), then act as they would have."""

    SIGNALS = ("SIGTERM", "SIGHUP")

    def __init__(self) -> None:
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _SignalGuard:
        import signal  # here, not at the top: nothing else on the score path loads it
        import threading

        if threading.current_thread() is not threading.main_thread():
            return self  # only the main thread may set handlers; its own signals still work
        for name in self.SIGNALS:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            old = signal.getsignal(signum)
            if old is signal.SIG_IGN or old is None:
                continue
            self.previous[signum] = old
            signal.signal(signum, self._raise)
        return self

    @staticmethod
    def _raise(signum: int, frame: Any) -> None:
        raise _Terminated(signum)

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        import signal

        for signum, old in self.previous.items():
            signal.signal(signum, old)
        if isinstance(exc, _Terminated):
            signal.raise_signal(exc.signum)  # the default action ends the process here
            raise SystemExit(128 + exc.signum)  # a handler of the caller's returned


def write_outputs(
    items: Sequence[tuple[Output | str | Path, bytes]], *, make_parents: bool = False
) -> None:
    """Writes each ``(output, data)`` and replaces the files together, the last one last.

    Args:
        items: outputs (resolved or names) and their bytes, the summary last.
        make_parents: create missing folders (library callers); the CLI refuses them.

    Raises:
        VLNEvalError: an output cannot be resolved or written (nothing is replaced when the
            new files cannot be written).

    Example:
        >>> import tempfile
        >>> d = Path(tempfile.mkdtemp())
        >>> write_outputs([(d / "rows.csv", b"a\\n1\\n"), (d / "s.json", b"{}")])
        >>> sorted(p.name for p in d.iterdir())
        ['rows.csv', 's.json']
    """
    outs = [
        o if isinstance(o, Output) else resolve_output(o, make_parents=make_parents)
        for o, _ in items
    ]
    check_outputs({o.given: o for o in outs})
    pending = [_Pending(o, d) for o, (_, d) in zip(outs, items, strict=True) if o.kind == "file"]
    by_output = {id(p.out): p for p in pending}
    aside: tuple[Path, Path] | None = None
    done = 0
    with _SignalGuard():
        try:
            for p in pending:
                _guarded(p.out, p.prepare)
            last = outs[-1]
            if len(pending) > 1 and last.kind == "file" and cast(Path, last.path).is_file():
                aside = (cast(Path, last.path), _temp_name(cast(Path, last.path)))
                _guarded(last, partial(os.replace, *aside))
            for out, (_, data) in zip(outs, items, strict=True):
                job = by_output.get(id(out))
                _guarded(out, job.commit if job is not None else partial(_write_stream, out, data))
                done += 1
        except BaseException:
            if aside is not None:
                with contextlib.suppress(OSError):
                    if done or any(p.placed for p in pending):  # something new is in place
                        os.unlink(aside[1])
                    else:  # nothing new is in place: the old summary goes back
                        os.replace(aside[1], aside[0])
            raise
        finally:
            for p in pending:
                p.discard()
        if aside is not None:
            with contextlib.suppress(OSError):
                os.unlink(aside[1])


def _guarded(out: Output, step: Callable[[], Any]) -> None:
    try:
        step()
    except OSError as exc:
        raise VLNEvalError(f"{out.given}: cannot write the file ({exc.strerror or exc})") from exc


def atomic_write_bytes(path: str | Path, data: bytes, *, make_parents: bool = True) -> None:
    """Writes ``data`` to ``path`` as :func:`write_outputs` does (``-`` is stdout; symlinks
    followed; a FIFO or device written in place); makes a missing folder unless told not to.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "sub" / "a.txt"
        >>> atomic_write_bytes(p, b"hi")
        >>> p.read_bytes(), [q.name for q in p.parent.iterdir()]
        (b'hi', ['a.txt'])
    """
    write_outputs([(path, data)], make_parents=make_parents)


def atomic_write_text(path: str | Path, text: str, *, make_parents: bool = True) -> None:
    """Writes UTF-8 ``text`` to ``path`` as :func:`atomic_write_bytes` does."""
    atomic_write_bytes(path, text.encode("utf-8"), make_parents=make_parents)


def to_json_bytes(obj: Any, *, indent: bool = True) -> bytes:
    """Strict JSON: NaN and infinity become null (a summary says why in ``unavailable``).

    msgspec writes a non-finite float as ``null`` itself, so the value is encoded as it is
    (no walk over every value first). A message with marked hints (a ``str`` subclass,
    :class:`vlneval.errors.Hinted`) is written as its text.

    Example:
        >>> to_json_bytes({"TL": float("inf"), "SR": 0.5}, indent=False)
        b'{"TL":null,"SR":0.5}'
    """
    import msgspec

    raw = msgspec.json.encode(obj, enc_hook=_text)
    return msgspec.json.format(raw, indent=2) + b"\n" if indent else raw


def _text(obj: Any) -> str:
    if isinstance(obj, str):
        return str(obj)
    raise TypeError(f"Encoding objects of type {type(obj).__name__} is unsupported")
