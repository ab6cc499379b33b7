"""The arguments of the commands of :mod:`vlneval.cli.data` (imported without it: a
command's ``--help`` loads no library module it runs)."""

from __future__ import annotations

import argparse

from vlneval.io import path_option

__all__ = ["register"]


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Adds ``vlneval data fetch`` and ``vlneval data list``."""
    d = sub.add_parser("data", help="fetch benchmark data and list what is there")
    dsub = d.add_subparsers(dest="data_command", required=True)
    f = dsub.add_parser(
        "fetch",
        help="download datasets from their official sources, verified",
        description="Download datasets (and the ones they need, e.g. r2r needs connectivity) "
        "from their official sources into the data root, each file checked against its "
        "registered SHA-256. Interrupted downloads resume. Each dataset's licence or terms "
        "of use are printed before its first download.",
    )
    f.add_argument("names", nargs="+", metavar="NAME", help="datasets (vlneval data list)")
    _root_arg(f)
    f.add_argument(
        "--mirror",
        default=None,
        metavar="URL",
        help="fetch every file from URL/<its path under the data root> instead",
    )
    f.add_argument(
        "--allow-unverified",
        action="store_true",
        help="also download files that have no known checksum (skipped by default)",
    )
    f.set_defaults(func="vlneval.cli.data:cmd_fetch")
    ls = dsub.add_parser("list", help="list datasets and the state of their files")
    ls.add_argument("names", nargs="*", metavar="NAME", help="datasets (default: all)")
    _root_arg(ls)
    ls.set_defaults(func="vlneval.cli.data:cmd_list")


def _root_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-root",
        default=None,
        type=path_option,
        metavar="DIR",
        help="data folder (default: $VLNEVAL_DATA, else the per-user data folder)",
    )
