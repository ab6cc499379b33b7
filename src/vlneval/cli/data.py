"""``vlneval data fetch`` and ``vlneval data list``: get the benchmark files, see what is there."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from vlneval.fetch import current_registry, default_root, fetch, status, summary_line
from vlneval.fetch.archived import ARCHIVE_SUFFIX
from vlneval.fetch.progress import human_size
from vlneval.fetch.verify import FileStatus

__all__ = ["cmd_fetch", "cmd_list"]

#: Folders with more files than this are listed as one line with counts.
SUMMARISE_AT = 20


def _root(args: argparse.Namespace) -> Path:

    return Path(args.data_root) if args.data_root else default_root()  # ~ expanded by its parser


def cmd_fetch(args: argparse.Namespace) -> int:
    """Fetches the named datasets; progress and licences on stderr."""

    root = _root(args)
    report = fetch(args.names, root, mirror=args.mirror, allow_unverified=args.allow_unverified)
    print(summary_line(report), file=sys.stderr)
    if not args.data_root:
        print(f"pass --data-root {root} (or set VLNEVAL_DATA={root}) to use it", file=sys.stderr)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """Prints every dataset, its licence and the state of its files."""

    root = _root(args)
    reg = current_registry()
    print(f"data root: {root}" + ("" if root.is_dir() else " (does not exist yet)"))
    for name, files in status(root, args.names or None).items():
        d = reg.datasets[name]
        counts = Counter(st.state for st in files)
        state = "complete" if counts["ok"] + counts["unverified"] == len(files) else "incomplete"
        tally = ", ".join(f"{n} {s}" for s, n in counts.most_common())
        print(f"\n{name}: {d.title}")
        print(f"  licence: {reg.licence(name).name}; {state} ({tally})")
        if d.note:
            print(f"  note: {d.note}")
        line = _unverified_line(name, files)
        if line:
            print(f"  {line}")
        for line in _rows(files):
            print(f"  {line}")
    return 0


def _unverified_line(name: str, files: list[FileStatus]) -> str | None:
    """Says how many of a dataset's files have no known checksum and how they are fetched."""
    n = sum(not st.entry.verified for st in files)
    if not n:
        return None
    some = f"{n} of {len(files)} files have" if n != 1 else f"1 of {len(files)} files has"
    return (
        f"unverified: {some} no known checksum (none published, and no known-good copy to "
        f"compute one); `vlneval data fetch {name} --allow-unverified` downloads "
        f"{'them' if n != 1 else 'it'} as served"
    )


def _rows(files: list[FileStatus]) -> list[str]:
    """One row per file, or one per folder of many files (with its files that are not ok)."""

    by_folder: dict[str, list[FileStatus]] = {}
    for st in files:
        by_folder.setdefault(st.entry.path.rsplit("/", 1)[0] + "/", []).append(st)
    rows: list[str] = []
    for folder, group in by_folder.items():
        if len(group) <= SUMMARISE_AT:
            rows.extend(_row(st) for st in group)
            continue
        counts = Counter(st.state for st in group)
        size = sum(st.size or st.entry.size or 0 for st in group)
        tally = ", ".join(f"{n:,} {s}" for s, n in counts.most_common())
        if any(st.path is not None and st.path.name.endswith(ARCHIVE_SUFFIX) for st in group):
            tally += f", inside {folder.rstrip('/')}{ARCHIVE_SUFFIX}"
        state = counts.most_common(1)[0][0] if len(counts) == 1 else "mixed"
        rows.append(
            f"{state:10s} {human_size(size):>12s}  {folder} ({len(group):,} files: {tally})"
        )
        bad = [st for st in group if st.state not in ("ok", "missing")]
        rows.extend("  " + _row(st) for st in bad[:5])
        if len(bad) > 5:
            rows.append(f"  ... and {len(bad) - 5:,} more")
    return rows


def _row(st: FileStatus) -> str:

    size = st.size if st.size is not None else st.entry.size
    where = st.entry.path
    if (
        st.path is not None
        and st.path.name.endswith(ARCHIVE_SUFFIX)
        and not where.endswith(ARCHIVE_SUFFIX)
    ):
        where += f" (inside {where.rsplit('/', 1)[0]}{ARCHIVE_SUFFIX})"
    elif st.path is not None and st.path.name.endswith(".gz") and not where.endswith(".gz"):
        where += " (as .gz)"
    if st.state == "partial":
        where += " (partial download, resumed by the next fetch)"
    if st.state in ("missing", "partial") and not st.entry.verified:
        where += " (unverified: no known checksum)"
    return f"{st.state:10s} {human_size(size):>12s}  {where}"
