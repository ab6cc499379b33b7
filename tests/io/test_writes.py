"""vlneval.io.write_outputs: symlinks, streams, missing folders, outputs replaced together, and
no temporary file left after an error, SIGTERM or (by the next run) SIGKILL."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import vlneval.io.writer as vio
from vlneval.errors import VLNEvalError
from vlneval.io import TEMP_MARK, atomic_write_bytes, resolve_output, write_outputs


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TEMP_MARK in p.name)


def test_a_symlink_is_followed_and_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real" / "s.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "s.json"
    link.symlink_to(Path("real") / "s.json")  # relative, as ln -s makes them
    write_outputs([(link, b"new")])
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "s.json")
    assert real.read_text() == "new" and _temps(real.parent) == [] and _temps(tmp_path) == []


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "s.json"
    link.symlink_to(tmp_path / "target.json")
    write_outputs([(link, b"{}")])
    assert link.is_symlink() and (tmp_path / "target.json").read_bytes() == b"{}"


def test_the_mode_of_a_replaced_file_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text("old")
    p.chmod(0o640)
    write_outputs([(p, b"new")])
    assert p.stat().st_mode & 0o777 == 0o640 and p.read_bytes() == b"new"


def test_a_fifo_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_outputs([(fifo, b"a\n1\n")])
    reader.join(10)
    assert got == [b"a\n1\n"] and fifo.is_fifo()
    assert resolve_output(fifo).kind == "stream"


def test_a_device_is_written_in_place(tmp_path: Path) -> None:
    write_outputs([("/dev/null", b"x" * 100)])
    assert Path("/dev/null").is_char_device()
    link = tmp_path / "sink"
    link.symlink_to("/dev/null")
    write_outputs([(link, b"x")])
    assert link.is_symlink()


def test_stdout_by_name_and_by_path(capfd: pytest.CaptureFixture[str]) -> None:
    assert resolve_output("-").is_stdout and resolve_output("/dev/stdout").is_stdout
    assert resolve_output("/dev/stderr").kind == "stderr"


def test_a_missing_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(VLNEvalError, match=r"the folder .*/nowhere does not exist"):
        write_outputs([(tmp_path / "nowhere" / "s.json", b"{}")])
    assert not (tmp_path / "nowhere").exists()
    dangling = tmp_path / "link.json"
    dangling.symlink_to(tmp_path / "gone" / "t.json")
    with pytest.raises(VLNEvalError, match=r"folder .*/gone \(the target of .*link.json\)"):
        write_outputs([(dangling, b"{}")])
    atomic_write_bytes(tmp_path / "made" / "s.json", b"{}")  # library callers may ask for it
    assert (tmp_path / "made" / "s.json").read_bytes() == b"{}"


def test_a_folder_and_two_outputs_on_one_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(VLNEvalError, match="is a folder"):
        write_outputs([(tmp_path, b"{}")])
    with pytest.raises(VLNEvalError, match="both write to"):
        write_outputs([(tmp_path / "a", b"1"), (tmp_path / "b" / ".." / "a", b"2")])
    with pytest.raises(VLNEvalError, match="both write to stdout"):
        write_outputs([("-", b"1"), ("/dev/stdout", b"2")])


def _old_pair(tmp_path: Path) -> tuple[Path, Path]:
    rows, summary = tmp_path / "rows.csv", tmp_path / "s.json"
    rows.write_text("old rows")
    summary.write_text("old summary")
    return rows, summary


def test_a_failure_writing_the_summary_replaces_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, summary = _old_pair(tmp_path)
    fill, calls = vio._Pending._fill, []

    def full_disk(self: vio._Pending, fd: int) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        fill(self, fd)

    monkeypatch.setattr(vio._Pending, "_fill", full_disk)
    with pytest.raises(VLNEvalError, match="No space left"):
        write_outputs([(rows, b"new rows"), (summary, b"new summary")])
    assert rows.read_text() == "old rows" and summary.read_text() == "old summary"
    assert _temps(tmp_path) == []


def test_a_failure_between_the_renames_leaves_no_summary_beside_new_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, summary = _old_pair(tmp_path)
    replace = os.replace

    def fail_on_summary(src: str | Path, dst: str | Path) -> None:
        if Path(dst) == summary and TEMP_MARK not in Path(src).name:
            raise AssertionError("the summary is moved aside, not replaced in place")
        if Path(dst) == summary:
            raise OSError(errno.EIO, "Input/output error")
        replace(src, dst)

    monkeypatch.setattr(vio.os, "replace", fail_on_summary)
    with pytest.raises(VLNEvalError, match="Input/output error"):
        write_outputs([(rows, b"new rows"), (summary, b"new summary")])
    assert rows.read_text() == "new rows" and not summary.exists()  # never old beside new
    assert _temps(tmp_path) == []


def test_the_old_summary_comes_back_when_nothing_new_is_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, summary = _old_pair(tmp_path)
    replace = os.replace

    def fail_on_rows(src: str | Path, dst: str | Path) -> None:
        if Path(dst) == rows:
            raise OSError(errno.EACCES, "Permission denied")
        replace(src, dst)

    monkeypatch.setattr(vio.os, "replace", fail_on_rows)
    with pytest.raises(VLNEvalError):
        write_outputs([(rows, b"new rows"), (summary, b"new summary")])
    assert rows.read_text() == "old rows" and summary.read_text() == "old summary"
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_with_the_rows_rename_leaves_no_old_summary_beside_new_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int
) -> None:
    """The signal comes as the rows file's rename returns (where ``strace -e
    inject=rename:signal=TERM:when=2`` delivers it): the rows are new, so the old summary goes."""
    rows, summary = _old_pair(tmp_path)
    replace, seen = os.replace, []

    def signal_with_the_rows(src: str | Path, dst: str | Path) -> None:
        replace(src, dst)
        if Path(dst) == rows:
            signal.raise_signal(signum)

    monkeypatch.setattr(vio.os, "replace", signal_with_the_rows)
    handlers = {
        signal.SIGTERM: lambda n, _: seen.append(n),
        signal.SIGINT: signal.default_int_handler,
    }
    previous = {n: signal.signal(n, h) for n, h in handlers.items()}
    try:
        with pytest.raises((SystemExit, KeyboardInterrupt)) as exc:
            write_outputs([(rows, b"new rows"), (summary, b"new summary")])
    finally:
        for n, h in previous.items():
            signal.signal(n, h)
    if signum == signal.SIGTERM:  # then the caller's handler runs, as without the guard
        assert isinstance(exc.value, SystemExit) and exc.value.code == 143 and seen == [signum]
    else:
        assert isinstance(exc.value, KeyboardInterrupt)
    assert rows.read_text() == "new rows" and not summary.exists()
    assert _temps(tmp_path) == []


CHILD = """
import os, sys, time
from pathlib import Path
import vlneval.io.writer as vio
folder, mode, phase = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
if mode == "named":
    del os.O_TMPFILE  # a filesystem without O_TMPFILE: the dot-named fallback
fill, commit, calls = vio._Pending._fill, vio._Pending.commit, []
def pause():
    (folder / "ready").write_text("x")
    time.sleep(60)
def slow_fill(self, fd):  # the second file (the summary) is being written
    calls.append(1)
    fill(self, fd)
    if len(calls) == 2 and phase == "writing":
        pause()
def slow_commit(self):  # the old summary is aside, nothing renamed yet
    if phase == "renaming":
        pause()
    commit(self)
vio._Pending._fill, vio._Pending.commit = slow_fill, slow_commit
vio.write_outputs([(folder / "rows.csv", b"new rows" * 1000), (folder / "s.json", b"new")])
"""


def _child(folder: Path, mode: str, phase: str) -> subprocess.Popen[bytes]:
    code = textwrap.dedent(CHILD)
    proc = subprocess.Popen([sys.executable, "-c", code, str(folder), mode, phase])
    deadline = time.monotonic() + 60
    while not (folder / "ready").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the child did not start"
        time.sleep(0.05)
    return proc


# What is visible meanwhile: with O_TMPFILE nothing while the data is written (the moved-aside
# old summary while renaming); with dot-named files, the files written so far.
VISIBLE = {
    ("anonymous", "writing"): 0,
    ("anonymous", "renaming"): 1,
    ("named", "writing"): 2,
    ("named", "renaming"): 3,
}


@pytest.mark.parametrize(("mode", "phase"), list(VISIBLE))
def test_no_temporary_file_survives_sigterm(tmp_path: Path, mode: str, phase: str) -> None:
    rows, summary = _old_pair(tmp_path)
    proc = _child(tmp_path, mode, phase)
    assert len(_temps(tmp_path)) == VISIBLE[mode, phase]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == -signal.SIGTERM  # ended by the signal, as without the handler
    assert _temps(tmp_path) == []
    assert rows.read_text() == "old rows" and summary.read_text() == "old summary"


def test_sigint_removes_them_too(tmp_path: Path) -> None:
    rows, summary = _old_pair(tmp_path)
    proc = _child(tmp_path, "named", "writing")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) != 0
    assert _temps(tmp_path) == [] and rows.read_text() == "old rows"


def test_a_sigkill_leftover_is_removed_by_the_next_write(tmp_path: Path) -> None:
    _old_pair(tmp_path)
    proc = _child(tmp_path, "named", "writing")
    proc.kill()
    proc.wait(30)
    assert len(_temps(tmp_path)) == 2  # SIGKILL cannot be caught
    write_outputs([(tmp_path / "rows.csv", b"r"), (tmp_path / "s.json", b"s")])
    assert _temps(tmp_path) == []
    assert (tmp_path / "s.json").read_bytes() == b"s"
    assert (tmp_path / "rows.csv").read_bytes() == b"r"


def test_a_live_process_temporary_file_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    mine = vio._temp_name(target)  # this process is alive
    mine.write_bytes(b"partial")
    write_outputs([(target, b"{}")])
    assert mine.exists()
