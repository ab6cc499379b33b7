"""The compiled fast path for predictions files: read first, matched to the episodes after.

:func:`prescan_predictions` reads a predictions file with the compiled field scanner
(:mod:`vlneval.data.scan`), block by block (:mod:`vlneval.data.stream`), without knowing the
episodes or the graphs: it keeps each record's id, its number of steps and the code of each
step's viewpoint text (:class:`~vlneval.data.intern.SpanInterner`). It can therefore run in a
thread while the episodes load. :func:`resolve` then maps ids to episodes and viewpoint texts to
graph nodes. Both return None whenever the file needs the validating parser
(:func:`vlneval.data.predictions.parse_predictions`), which reads it again and names every
problem.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "preds.json"
    >>> _ = p.write_text('[{"instr_id": "4_0", "trajectory": [["a", 0, 0], ["b", 0, 0]]}]')
    >>> pre = prescan_predictions(p, "instr_id")
    >>> pre.form, pre.ids, pre.counts.tolist(), pre.codes.tolist(), pre.vocab.texts()
    ('triple', ['4_0'], [2], [0, 1], ['a', 'b'])
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vlneval.data.episodes import EpisodeTable
from vlneval.data.intern import VIEWPOINT_CAPACITY, SpanInterner
from vlneval.graph.store import GraphStore

if TYPE_CHECKING:
    from vlneval.data.scan import ViewpointTable

__all__ = ["Prescan", "prescan_predictions", "resolve", "TRAJECTORY_KEYS"]

TRAJECTORY_KEYS = ("trajectory", "path", "pred_path")

# (form, episode of each kept record, its number of steps, flat nodes, ids not in the split)
Resolved = tuple[str, np.ndarray, np.ndarray, np.ndarray, list[str]]


@dataclass(eq=False)
class Prescan:
    """A predictions file as the scanner read it, before it is matched to episodes.

    Attributes:
        path, id_field, form_asked, key: what was read, and how.
        form: the trajectory form found (``triple``, ``plain`` or ``nested``).
        id_blob, id_starts, id_ends: each record's id as UTF-8 text,
            ``id_blob[id_starts[k]:id_ends[k]]``, in file order (see :attr:`ids`).
        counts: each record's number of steps.
        codes: each step's viewpoint, as a code into ``vocab``.
        vocab: the distinct viewpoint texts.
    """

    path: Path
    id_field: str
    form_asked: str
    key: str | None
    form: str
    id_blob: bytearray
    id_starts: np.ndarray
    id_ends: np.ndarray
    counts: np.ndarray
    codes: np.ndarray
    vocab: SpanInterner

    @property
    def ids(self) -> list[str]:
        """Each record's id as text, in file order."""
        from vlneval.data.scan import span_strings

        return span_strings(self.id_blob, self.id_starts, self.id_ends)

    def answers(self, path: Path, id_field: str, form: str, key: str | None) -> bool:
        """Whether this is the reading :func:`prescan_predictions` would give for these."""
        return (self.path, self.id_field, self.form_asked, self.key) == (
            path,
            id_field,
            form,
            key,
        )


def prescan_predictions(
    path: str | Path,
    id_field: str,
    *,
    form: str = "auto",
    trajectory_key: str | None = None,
    stop: threading.Event | None = None,
) -> Prescan | None:
    """Reads a JSON list of prediction records with the compiled scanner.

    ``stop``, when set (by the thread that asked for this reading), ends it at the next block.

    Returns:
        The reading, or None when the file needs the validating parser: it is not a list, not
        valid JSON, of an unexpected shape, or cannot be read at all (that parser says why).
    """
    from vlneval.data.scan import FORM_CODES

    if form not in FORM_CODES or trajectory_key == id_field:
        return None  # parse_predictions explains either mistake
    path = Path(path)
    try:
        return _prescan(path, id_field, form, trajectory_key, stop)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):
        return None


def _prescan(
    path: Path, id_field: str, form: str, key: str | None, stop: threading.Event | None
) -> Prescan | None:
    from vlneval.data.scan import append_spans, scan_predictions
    from vlneval.data.stream import Incomplete, array_blocks

    blocks = array_blocks(path)
    if blocks is None:
        return None
    found, counts, codes, id_starts, id_ends = form, [], [], [], []
    id_blob, vocab = bytearray(), SpanInterner(VIEWPOINT_CAPACITY)
    try:
        for block in blocks:
            if stop is not None and stop.is_set():
                return None
            sp = scan_predictions(
                block, id_field=id_field, key=key or TRAJECTORY_KEYS, form=found, validated=True
            )
            if sp is None:
                return None
            if len(sp):
                found = sp.form  # the first block's form is required of the others
                starts, ends = append_spans(id_blob, sp.buffer, sp.id_starts, sp.id_ends, 10)
                id_starts.append(starts)
                id_ends.append(ends)
                counts.append(sp.counts)
                codes.append(vocab.add(sp.buffer, sp.vp_starts, sp.vp_ends))
    except Incomplete:
        return None
    if not counts:
        return None
    vocab.texts()  # raises UnicodeDecodeError (declines) now rather than later
    cat = np.concatenate
    return Prescan(
        path, id_field, form, key, found, id_blob, cat(id_starts), cat(id_ends), cat(counts),
        cat(codes), vocab,
    )  # fmt: skip


def resolve(pre: Prescan, episodes: EpisodeTable, graphs: GraphStore) -> Resolved | None:
    """Matches a reading to the split: ids to episodes, viewpoint texts to their scan's nodes.

    Returns None (the validating parser takes over) for an empty trajectory, an id given
    twice, or a viewpoint that is not a node of its episode's scan.
    """
    idx = episodes.rows_of(pre.id_blob, pre.id_starts, pre.id_ends)
    known = idx >= 0
    eps = idx[known]
    if np.any(pre.counts == 0) or np.any(np.bincount(eps, minlength=1) > 1):
        return None
    lens = pre.counts[known].astype(np.int64)
    codes = pre.codes if known.all() else pre.codes[np.repeat(known, pre.counts)]
    table, ep_scan = _table(episodes, graphs, eps)
    nodes = _nodes(table, pre.vocab, codes, lens, ep_scan)
    if nodes is None:
        return None
    unknown = _texts(pre, np.flatnonzero(~known))
    return pre.form, eps, lens, nodes, unknown


def _texts(pre: Prescan, which: np.ndarray) -> list[str]:
    from vlneval.data.scan import span_strings

    return span_strings(pre.id_blob, pre.id_starts[which], pre.id_ends[which])


def _table(
    episodes: EpisodeTable, graphs: GraphStore, eps: np.ndarray
) -> tuple[ViewpointTable, np.ndarray]:
    """The viewpoint table of the episodes' scans, and the position of each one's scan in it."""
    from vlneval.data.scan import ViewpointTable

    names, of_ep = episodes.scans_of(eps)
    return ViewpointTable.from_ids([graphs.graph(s).ids for s in names]), of_ep


def _nodes(
    table: ViewpointTable,
    vocab: SpanInterner,
    codes: np.ndarray,
    lens: np.ndarray,
    record_scan: np.ndarray,
) -> np.ndarray | None:
    """The node of each step's viewpoint in its record's scan; None if one is not a node there.

    Each distinct text is looked up once; only texts that several scans share, or that name a
    viewpoint of another scan, are looked up again per (text, scan) pair.
    """
    from vlneval.data._ragged_kernel import nodes_in_scans

    n = len(vocab)
    text_scan, text_node = table.lookup(vocab.blob, vocab.starts[:n], vocab.ends[:n])
    nodes, off = nodes_in_scans(codes, lens, record_scan, text_scan, text_node)
    if len(off):
        step_scan = np.repeat(record_scan, lens)[off]
        pairs, where = np.unique(
            codes[off].astype(np.int64) * table.n_scans + step_scan, return_inverse=True
        )
        text, scan = np.divmod(pairs, table.n_scans)
        found = table.lookup_in(vocab.blob, vocab.starts[text], vocab.ends[text], scan)
        if np.any(found < 0):
            return None
        nodes[off] = found[where]
    return nodes  # type: ignore[no-any-return]
