"""The fast path for large, valid prediction files.

msgspec decodes each chunk straight into typed records (type checks in C), and viewpoint ids
are mapped to node indices with one C-level ``map`` over a dict of every viewpoint of the
split's scans. Anything unusual (a type error, an unknown viewpoint, a duplicate id, NaN) makes
the fast path give up, and the validating path (:mod:`vlneval.data.predictions`) reads the file
again to name every problem. Valid files never pay for the validating path.
"""

from __future__ import annotations

from array import array
from itertools import chain
from typing import Any

import numpy as np

from vlneval.data.episodes import EpisodeTable
from vlneval.graph.store import GraphStore

__all__ = ["FastPathDeclined", "fast_records", "viewpoint_codes", "SCAN_STRIDE"]

SCAN_STRIDE = 1 << 20  # code = scan position * SCAN_STRIDE + node index


class FastPathDeclined(Exception):
    """The fast path cannot read this file; the validating path will explain why."""


def viewpoint_codes(episodes: EpisodeTable, graphs: GraphStore) -> tuple[dict[str, int], dict[str, int]]:
    """``{viewpoint: scan_pos * SCAN_STRIDE + node}`` over the split's scans, and ``{scan: pos}``."""
    scans = sorted(set(episodes.scans))
    codes: dict[str, int] = {}
    for pos, scan in enumerate(scans):
        base = pos * SCAN_STRIDE
        codes.update({vp: base + k for k, vp in enumerate(graphs.graph(scan).ids)})
    return codes, {s: k for k, s in enumerate(scans)}


def _record_type(id_field: str, key: str, form: str) -> Any:
    import msgspec

    steps: Any = {
        "triple": list[tuple[str, float, float]],
        "plain": list[str],
        "nested": list[list[str]],
    }[form]
    return msgspec.defstruct("Record", [(id_field, "str | int"), (key, steps)])


def fast_records(
    parts: list[Any],
    episodes: EpisodeTable,
    graphs: GraphStore,
    *,
    form: str,
    key: str,
    chunk: int = 8192,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Decodes ``parts`` (msgspec ``Raw`` records) into (episode index, lengths, nodes, unknown ids).

    Raises:
        FastPathDeclined: the file needs the validating path.
    """
    import msgspec

    record = _record_type(episodes.id_field, key, form)
    decoder = msgspec.json.Decoder(list[record])  # type: ignore[valid-type]
    codes, scan_pos = viewpoint_codes(episodes, graphs)
    ep_scan = np.fromiter((scan_pos[s] for s in episodes.scans), dtype=np.int64, count=len(episodes))
    index, idf = episodes.index, episodes.id_field
    seen = np.zeros(len(episodes), dtype=np.bool_)
    rec_ep, rec_len, flat = array("q"), array("q"), array("q")
    unknown: list[str] = []
    for start in range(0, len(parts), chunk):
        block = b"[" + b",".join(bytes(p) for p in parts[start : start + chunk]) + b"]"
        try:
            records = decoder.decode(block)
        except msgspec.MsgspecError as exc:
            raise FastPathDeclined(str(exc)) from exc
        trajs = []
        for r in records:
            i = index.get(str(getattr(r, idf)))
            if i is None:
                unknown.append(str(getattr(r, idf)))
                continue
            traj = getattr(r, key)
            if seen[i] or not traj:
                raise FastPathDeclined("duplicate or empty")
            seen[i] = True
            rec_ep.append(i)
            trajs.append(traj)
        if form == "triple":
            vps: Any = [s[0] for t in trajs for s in t]
        elif form == "nested":
            trajs = [list(chain.from_iterable(t)) for t in trajs]
            vps = chain.from_iterable(trajs)
        else:
            vps = chain.from_iterable(trajs)
        rec_len.extend(map(len, trajs))
        try:
            flat.extend(map(codes.__getitem__, vps))
        except KeyError as exc:
            raise FastPathDeclined("unknown viewpoint") from exc
    eps = np.frombuffer(rec_ep, dtype=np.int64) if rec_ep else np.zeros(0, np.int64)
    lens = np.frombuffer(rec_len, dtype=np.int64) if rec_len else np.zeros(0, np.int64)
    nodes = np.frombuffer(flat, dtype=np.int64) if flat else np.zeros(0, np.int64)
    if np.any(nodes // SCAN_STRIDE != np.repeat(ep_scan[eps], lens)):
        raise FastPathDeclined("viewpoint of another scan")
    if np.any(lens == 0):
        raise FastPathDeclined("empty trajectory")
    return eps, lens, (nodes % SCAN_STRIDE).astype(np.int32), unknown
