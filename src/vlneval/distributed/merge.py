"""Merging shards into one predictions file, refusing anything but an exact cover.

:func:`merge` reads the manifests and records of every shard given and refuses (one
:class:`~vlneval.errors.InvalidInputError` listing every problem, each naming its file) unless

- every manifest describes the same run (task, split, dataset version, vlneval version, the
  hash of the split's episode ids, number of shards, seed, agent and its arguments, settings,
  checkpoint hash, and protocol card): shards of two seeds or two checkpoints never mix;
- every shard ``0 .. n-1`` is there once and complete;
- every episode of the split is there exactly once (missing and duplicate ids are named).

``allow_partial=True`` merges what is there despite missing shards or episodes (never despite
a duplicate or a disagreement); the card then says ``partial`` (``episodes`` K of
``n_expected`` M). The output is the
task's prediction format with the bytes a single-process ``vlneval run`` writes, records in
the split's order, with its protocol card beside it (``NAME.protocol.json``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlneval.distributed.plan import ShardSpec, ids_digest
from vlneval.distributed.shardfile import AGREED, FORMAT, ShardLine, read_lines, shard_paths
from vlneval.envs.graph.submission import task_records
from vlneval.envs.recording import measured_block, predictions_bytes
from vlneval.errors import InvalidInputError, Problem, VLNEvalError
from vlneval.io import load_json, to_json_bytes, write_outputs
from vlneval.tasks.common.protocol import EPISODE_COUNTS, episodes_card

__all__ = [
    "Merged",
    "merge",
    "merge_paths",
    "card_path",
    "is_card",
    "calls_in",
    "with_calls",
    "without_calls",
    "sum_calls",
]

#: Card fields that legitimately differ between shards (recomputed for the merged card).
VOLATILE = (*EPISODE_COUNTS, "measured", "software", "prediction_format")
_CALLS = re.compile(r"\((\d+) calls\)")
_CALLS_TAIL = re.compile(r" \(\d+ calls\)$")  # the count the environment appends


@dataclass
class Merged:
    """A verified merge.

    Attributes:
        predictions: in the task's format (a list of records, or ``{id: steps}`` for VLN-CE).
        card: the merged protocol card.
        n_episodes, n_expected: episodes merged, and in the split.
        problems: what ``allow_partial`` let through (missing shards and episodes).
        data_root: the ``--data-root`` the first shard ran with (None: none given).
    """

    task: str
    split: str
    kind: str
    predictions: Any
    card: dict[str, Any]
    n_episodes: int
    n_expected: int
    problems: list[Problem] = field(default_factory=list)
    data_root: str | None = None

    @property
    def partial(self) -> bool:
        """Whether episodes are missing."""
        return self.n_episodes < self.n_expected


def card_path(out: str | Path) -> Path:
    """Where the protocol card of predictions file ``out`` goes: ``NAME.protocol.json`` beside
    ``NAME.json`` (or ``NAME.json.gz``).

    Example:
        >>> card_path("runs/preds.json").as_posix(), card_path("preds.json.gz").as_posix()
        ('runs/preds.protocol.json', 'preds.protocol.json')
    """
    p = Path(out)
    name = p.name
    for suffix in (".json.gz", ".json", ".gz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return p.with_name(f"{name}.protocol.json")


def is_card(path: str | Path) -> bool:
    """Whether ``path`` is a protocol card vlneval wrote (see :func:`card_path`): named
    ``NAME.protocol.json`` and holding a JSON object with ``vlneval_version``. A ``*.json``
    pattern over a run folder matches the cards too; their readers leave them out by this.

    Example:
        >>> is_card("runs/preds.json"), is_card("runs/missing.protocol.json")
        (False, False)
    """
    p = Path(path)
    if not p.name.endswith(".protocol.json") or not p.is_file():
        return False
    try:
        value = load_json(p)
    except VLNEvalError:  # not JSON: not a card; the caller's reader says what it is
        return False
    return isinstance(value, dict) and "vlneval_version" in value


def with_calls(text: str, n: int | str) -> str:
    """``text`` (a card's ``privileged`` entry) with its ``(N calls)`` count set to ``n``.

    Example:
        >>> with_calls("goals through env.privileged() (3 calls)", 5)
        'goals through env.privileged() (5 calls)'
    """
    return _CALLS.sub(f"({n} calls)", text)


def without_calls(text: str) -> str:
    """``text`` (a card's ``privileged`` entry) without its `` (N calls)`` count.

    Example:
        >>> without_calls("goals through env.privileged() (3 calls)")
        'goals through env.privileged()'
    """
    return _CALLS_TAIL.sub("", text)


def calls_in(protocol: Mapping[str, Any]) -> int | None:
    """The privileged calls a protocol counts (``"... (N calls)"``), if any."""
    m = _CALLS.search(str(protocol.get("privileged") or ""))
    return None if m is None else int(m.group(1))


def sum_calls(protocols: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The protocol of a run made of parts: the first part's, with the privileged calls of
    every part added up.

    Example:
        >>> p = {"privileged": "goals through env.privileged(), requested at construction (3 calls)"}
        >>> sum_calls([p, p])["privileged"][-9:]
        '(6 calls)'
    """
    if not protocols:
        raise VLNEvalError("no chunk ran")
    out = dict(protocols[0])
    counts = [calls_in(p) for p in protocols]
    if all(c is not None for c in counts):
        out["privileged"] = with_calls(out["privileged"], sum(c or 0 for c in counts))
    return out


@dataclass
class _Shard:
    manifest_path: Path
    records_path: Path
    manifest: dict[str, Any]
    lines: list[ShardLine] = field(default_factory=list)

    @property
    def index(self) -> int:
        return int(self.manifest["shard_index"])


def merge_paths(paths: Iterable[str | Path]) -> list[tuple[Path, Path]]:
    """(manifest, records) pairs of the files or folders given (either file of a pair names it;
    a folder gives every manifest in it)."""
    pairs: dict[Path, Path] = {}
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.glob("*.manifest.json"))
            if not found:
                raise VLNEvalError(f"{p}: no shard manifests (*.manifest.json) in this folder")
            for m in found:
                pairs[m] = m.with_name(m.name[: -len(".manifest.json")] + ".jsonl")
            continue
        name = p.name
        if name.endswith(".manifest.json"):
            pairs[p] = p.with_name(name[: -len(".manifest.json")] + ".jsonl")
        elif name.endswith(".jsonl"):
            pairs[p.with_name(name[: -len(".jsonl")] + ".manifest.json")] = p
        else:
            raise VLNEvalError(f"{p}: not a shard file (NAME.shard-i-of-n.jsonl or .manifest.json)")
    return list(pairs.items())


def _load(pairs: Sequence[tuple[Path, Path]]) -> list[_Shard]:
    problems, shards = [], []
    for mpath, rpath in pairs:
        try:
            manifest = load_json(mpath)
        except VLNEvalError as exc:
            problems.append(Problem(str(mpath), f"cannot read the shard manifest ({exc})"))
            continue
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            problems.append(Problem(str(mpath), f"not a vlneval shard manifest ({FORMAT})"))
            continue
        shards.append(_Shard(mpath, rpath, manifest))
    if problems:
        raise InvalidInputError(problems)
    if not shards:
        raise VLNEvalError("merge: no shards given")
    return sorted(shards, key=lambda s: (s.index, str(s.manifest_path)))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _card_core(card: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if card is None:
        return None
    core = {k: v for k, v in card.items() if k not in VOLATILE}
    if isinstance(core.get("privileged"), str):
        core["privileged"] = with_calls(core["privileged"], "N")
    return core


def _disagreements(shards: Sequence[_Shard]) -> list[Problem]:
    ref = shards[0]
    problems = []
    ref_card = next((s for s in shards if s.manifest.get("card")), ref)
    for s in shards[1:]:
        for key in AGREED:
            a, b = s.manifest.get(key), ref.manifest.get(key)
            if a != b:
                problems.append(Problem(
                    str(s.manifest_path),
                    f"{key} is {_short(a)} but {_short(b)} in {ref.manifest_path.name}: shards "
                    "of different runs cannot be merged",
                ))  # fmt: skip
    core = _card_core(ref_card.manifest.get("card"))
    for s in shards:
        other = _card_core(s.manifest.get("card"))
        if core is not None and other is not None and other != core:
            keys = sorted(k for k in set(core) | set(other) if core.get(k) != other.get(k))
            problems.append(Problem(
                str(s.manifest_path),
                f"protocol card differs from {ref_card.manifest_path.name} in {', '.join(keys)}",
            ))  # fmt: skip
    return problems


def _coverage(shards: Sequence[_Shard], count: int) -> tuple[list[Problem], list[Problem]]:
    """(fatal, partial) problems of the shard set itself."""
    fatal, partial = [], []
    by_index: dict[int, list[_Shard]] = {}
    for s in shards:
        by_index.setdefault(s.index, []).append(s)
    for k in range(count):
        given = by_index.get(k, [])
        if len(given) > 1:
            names = ", ".join(str(s.manifest_path) for s in given)
            fatal.append(
                Problem("merge", f"shard {k}/{count} is given {len(given)} times: {names}")
            )
        elif not given:
            partial.append(_missing_shard(shards[0], k, count))
        elif given[0].manifest.get("status") != "complete":
            s = given[0]
            partial.append(Problem(
                str(s.manifest_path),
                f"shard {k}/{count} is incomplete (status {s.manifest.get('status')!r}, "
                f"{len(s.lines)} of {len(s.manifest['assigned'])} episodes written): finish it "
                "with the same command and --resume",
            ))  # fmt: skip
    for k in sorted(set(by_index) - set(range(count))):
        fatal.append(
            Problem(str(by_index[k][0].manifest_path), f"shard {k} is not one of 0..{count - 1}")
        )
    return fatal, partial


def _missing_shard(known: _Shard, k: int, count: int) -> Problem:
    """Shard ``k`` not given; when its records file lies beside a given shard's, its manifest is
    what is missing (a shard killed before writing it, or the manifest deleted)."""
    stem = known.records_path.name.split(".shard-")[0]
    records, manifest = shard_paths(
        known.records_path.with_name(f"{stem}.json"), ShardSpec(k, count)
    )
    if records.exists() and not manifest.exists():
        return Problem(
            str(records),
            f"has no manifest ({manifest}): run that shard again (without it, --resume starts over)",
        )
    return Problem(
        "merge", f"shard {k}/{count} is missing: none of the files given is shard {k} of {count}"
    )


def _index(shards: Sequence[_Shard], ids: Sequence[str], id_field: str) -> tuple[dict[int, tuple[_Shard, ShardLine]], list[Problem]]:  # fmt: skip
    seen: dict[int, tuple[_Shard, ShardLine]] = {}
    problems = []
    for s in shards:
        assigned = set(s.manifest["assigned"])
        for line in s.lines:
            where = f"{s.records_path}"
            if not 0 <= line.i < len(ids) or ids[line.i] != line.id:
                problems.append(Problem(where, f'line {line.lineno}: episode "{line.id}" is not '
                                        f"episode {line.i} of the split"))  # fmt: skip
                continue
            if line.i not in assigned:
                problems.append(Problem(where, f'line {line.lineno}: {id_field} "{line.id}" is '
                                        f"not in the plan of shard {s.index}"))  # fmt: skip
            if line.i in seen:
                first, fl = seen[line.i]
                problems.append(Problem(
                    where, f'duplicate {id_field} "{line.id}": line {line.lineno}, and '

                    f"{first.records_path.name} line {fl.lineno}",
                ))  # fmt: skip
                continue
            seen[line.i] = (s, line)
    return seen, problems


def _read_records(shards: Sequence[_Shard]) -> list[Problem]:
    problems = []
    for s in shards:
        if not s.records_path.exists():
            problems.append(Problem(str(s.records_path), "the shard's records file is missing"))
            continue
        s.lines, bad, _, digest = read_lines(s.records_path)  # one read: parsed and hashed
        problems.extend(Problem(str(s.records_path), b) for b in bad)
        done = s.manifest.get("n_done")
        if s.manifest.get("status") == "complete" and done is not None and done != len(s.lines):
            problems.append(Problem(
                str(s.records_path),
                f"{len(s.lines)} records but the manifest says the shard wrote {done}",
            ))  # fmt: skip
        elif s.manifest.get("status") == "complete":
            problems.extend(_edited(s, digest))
    return problems


def _edited(s: _Shard, now: str) -> list[Problem]:
    """A complete shard whose records (sha256 ``now``) are not the bytes it wrote (its
    manifest's sha256)."""
    wrote = s.manifest.get("records_sha256")
    if wrote is None or wrote == now:  # None: a shard written before the digest was kept
        return []
    return [Problem(
        str(s.records_path),
        f"the records were changed after the shard ran (sha256 {now[:12]}, the manifest says "
        f"{str(wrote)[:12]}): run the shard again without --resume",
    )]  # fmt: skip


def merge(
    shards: Iterable[str | Path],
    *,
    out: str | Path | None = None,
    allow_partial: bool = False,
) -> Merged:
    """Verifies and merges shard files (see the module docstring); writes ``out`` and its card
    when given.

    Raises:
        InvalidInputError: every problem found, each naming its file.
    """
    loaded = _load(merge_paths(shards))
    ref = loaded[0].manifest
    problems = _disagreements(loaded)
    if problems:
        raise InvalidInputError(problems)
    problems = _read_records(loaded)
    fatal, partial = _coverage(loaded, int(ref["shard_count"]))
    ids, id_field = ref["episode_ids"], ref["id_field"]
    if ids_digest(ids) != ref["episodes_sha256"]:
        fatal.append(Problem(str(loaded[0].manifest_path), "episode ids do not match their hash"))
    seen, line_problems = _index(loaded, ids, id_field)
    fatal += problems + line_problems
    missing = [i for i in range(len(ids)) if i not in seen]
    owner = _owners(loaded, int(ref["shard_count"]))
    # An id in no shard given is one of a missing shard's, which its own problem names.
    partial += [Problem(owner[i], f'missing {id_field} "{ids[i]}"') for i in missing if i in owner]
    if fatal or (partial and not allow_partial):
        raise InvalidInputError(fatal + partial)
    if not seen:
        raise VLNEvalError("merge: the shards hold no episodes")
    merged = _assemble(loaded, seen, ids)
    merged.problems = partial
    if out is not None:
        write_merged(merged, out)
    return merged


def _owners(shards: Sequence[_Shard], count: int) -> dict[int, str]:
    out: dict[int, str] = {}
    for s in shards:
        for i in s.manifest["assigned"]:
            out[int(i)] = f"{s.records_path} (shard {s.index}/{count})"
    return out


def _assemble(shards: Sequence[_Shard], seen: Mapping[int, tuple[_Shard, ShardLine]], ids: Sequence[str]) -> Merged:  # fmt: skip
    ref = shards[0].manifest
    order = sorted(seen)
    lines = [seen[i][1] for i in order]
    note = None
    if ref["kind"] == "continuous":
        predictions: Any = {}
        for line in lines:
            predictions.update(line.record)
    else:
        view = _EpisodeView(
            ref["id_field"], {e: k for k, e in enumerate(ids)}, ref.get("instr_ids")
        )
        predictions, note = task_records(ref["task"], view, [ln.record for ln in lines])  # type: ignore[arg-type]
    card = _merged_card(shards, lines, note, len(ids))
    return Merged(ref["task"], ref["split"], ref["kind"], predictions, card, len(lines), len(ids),
                  data_root=ref.get("data_root"))  # fmt: skip


@dataclass(frozen=True)
class _EpisodeView:
    """What the task format conversions read of an episode table."""

    id_field: str
    index: dict[str, int]
    instr_ids: list[str] | None


def _merged_card(shards: Sequence[_Shard], lines: Sequence[ShardLine], note: str | None, n_expected: int) -> dict[str, Any]:  # fmt: skip
    card = sum_calls([s.manifest["card"] for s in shards if s.manifest.get("card")])
    card.update(episodes_card(len(lines), n_expected))
    if note is not None:
        card["prediction_format"] = note
    if "measured" in card:
        card["measured"] = measured_block([ln.extra or {} for ln in lines])
    ref = shards[0].manifest
    ms = [s.manifest for s in shards]
    if ref.get("checkpoint"):
        card["checkpoint"] = ref["checkpoint"]
    card["shards"] = {
        "count": ref["shard_count"],
        "merged": len(shards),
        "balance_scans": ref["balance_scans"],
        "episodes_sha256": ref["episodes_sha256"],
        "launchers": sorted({m.get("shard_source", "") for m in ms}),
        "hosts": sorted({m.get("host", "") for m in ms}),
        "started_at": min(m.get("started_at", "") for m in ms),
        "finished_at": max(m.get("finished_at") or "" for m in ms),
    }
    return card


def write_merged(merged: Merged, out: str | Path) -> tuple[Path, Path]:
    """Writes the predictions (the bytes ``vlneval run`` writes) and the card beside them."""
    out, card = Path(out), card_path(out)
    write_outputs([(out, predictions_bytes(out, merged.predictions)),
                   (card, to_json_bytes(merged.card))])  # fmt: skip
    return out, card
