"""The worker hands the bytes it read and checked to every task's scorer: a task with its own
reader (HANNA here) is checked by its public scorer and scored from those bytes, never by
reading the stored upload again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tasks.hanna.fixture import make_root, predictions
from vlneval.evaluation import Scorer
from vlneval.server.models import FAILED, FINISHED
from vlneval.server.services.scoring import PhaseSpec, load_phase_data, score_file


def _phase(root: Path) -> PhaseSpec:
    episodes = root / "hanna" / "hanna_val_unseen.json"
    graphs = root / "matterport3d" / "connectivity"
    return PhaseSpec("hanna", "val_unseen", "hanna", str(episodes), str(graphs), None, "SR")


def test_an_own_reader_task_is_scored_from_the_bytes_read(tmp_path: Path) -> None:
    spec = _phase(make_root(tmp_path / "root"))
    data = load_phase_data(spec)
    try:
        assert data.checker is not None  # HANNA has a public copy: its own scorer checks uploads
        path = predictions(tmp_path)
        raw = path.read_bytes()
        path.unlink()  # the stored upload is gone: only the bytes can be scored
        out = score_file(path, raw, "mine.json", spec, data)
        assert out.status == FINISHED, out.messages
        expected = Scorer("hanna", "val_unseen", root=tmp_path / "root").score(raw).to_dict()
        assert out.metrics == json.loads(json.dumps(expected["metrics"]))
        assert out.summary is not None and out.summary["predictions"] == "mine.json"
        assert "<bytes>" not in json.dumps(out.summary)
    finally:
        data.close()


def test_a_bad_upload_is_told_by_its_name(tmp_path: Path) -> None:
    spec = _phase(make_root(tmp_path / "root"))
    data = load_phase_data(spec)
    try:
        body = json.loads(predictions(tmp_path).read_text())
        body[0]["agent_ask"] = [0, 2, 0, 0]
        out = score_file(tmp_path / "gone.json", json.dumps(body).encode(), "mine.json", spec, data)
        assert out.status == FAILED and out.error_kind == "invalid"
        assert out.messages == [
            'mine.json: instr_id "10_0": agent_ask: agent_ask must be a list of ask actions, '
            "0 (do_nothing) or 1 (request_help)"
        ]
    finally:
        data.close()


def test_a_phase_with_no_episodes_gets_the_refusal_not_an_internal_failure() -> None:
    """The id field comes from the public view even when that view has no episodes (a table of
    length 0 is falsy, and the R2R family has no own-reader checker to fall back on)."""
    from vlneval.server.services.redact import Redactor
    from vlneval.server.services.scoring import PhaseData, _public_messages
    from vlneval.server.services.validation import public_view
    from vlneval.tasks import get_task
    from vlneval.tasks.common.scoring import load_split
    from vlneval.tasks.profiles import get_profile

    profile = get_profile("demo")
    episodes, store = load_split(get_task("demo"), "val", profile)
    data = PhaseData(public_view(episodes.subset([])), store, profile, Redactor(()))
    upload = b'[{"instr_id": "x_0", "trajectory": [["a", 0, 0]]}]'
    messages, _ = _public_messages(upload, Path("/x/u.json"), "u.json", data)
    assert messages == ["u.json: no prediction matches an episode of demo val"]


def test_the_organisers_episodes_file_is_named_on_no_submitters_card(tmp_path: Path) -> None:
    """A phase scores its hidden file given explicitly: the name and digest a card would
    carry stay on the server."""
    from vlneval.tasks.common.root import demo_root

    hidden = tmp_path / "DEMO_val_with_goals.json"
    hidden.write_bytes((demo_root() / "demo" / "DEMO_val.json").read_bytes())
    spec = PhaseSpec("demo", "val", "demo", str(hidden), None, None, "SR")
    raw = (demo_root() / "demo" / "predictions_val.json").read_bytes()
    upload = tmp_path / "u.json"
    upload.write_bytes(raw)
    outcome = score_file(upload, raw, "u.json", spec, load_phase_data(spec))
    assert outcome.status == "finished" and outcome.summary is not None
    assert "episodes_file" not in outcome.summary["protocol"]
    assert "DEMO_val_with_goals" not in json.dumps(outcome.summary)


def test_a_scorer_that_does_not_name_its_episodes_file_gives_no_split_warning(
    tmp_path: Path,
) -> None:
    """The server's scorers (``name_episodes=False``): no card entry and no warning, even for
    a file whose name names another split of the task."""
    from tests.fixtures import square_root

    root = square_root(tmp_path / "root")
    named = tmp_path / "R2R_val_seen.json"
    named.write_bytes((root / "r2r" / "R2R_val.json").read_bytes())
    preds = json.loads(named.read_text())
    records = [{"instr_id": f"{e['path_id']}_{k}", "trajectory": [[v, 0, 0] for v in e["path"]]}
               for e in preds for k in range(len(e["instructions"]))]  # fmt: skip
    shown = Scorer("r2r", "val", root=root, episodes=named).score(records)
    assert any("looks like split val_seen" in w for w in shown.warnings)
    hidden = Scorer("r2r", "val", root=root, episodes=named, name_episodes=False).score(records)
    assert "episodes_file" not in hidden.protocol
    assert not any("episodes file" in w for w in hidden.warnings)


def test_a_phase_stored_without_a_file_checks_its_data_versions_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A REVERIE v1 phase with no file recorded checks and redacts the v1 file, as its scorer
    and ``vlneval admin create-phase`` find it, not the default (v2) release's."""
    from tests.tasks.reverie.reverie_fixtures import reverie_root

    root = reverie_root(tmp_path / "root")
    monkeypatch.setenv("VLNEVAL_DATA", str(root))
    options = json.dumps({"data_version": "v1"})
    spec = PhaseSpec("reverie", "val", "reverie", None, None, None, "RGS", options=options)
    data = load_phase_data(spec)
    try:
        assert data.checker is not None
        assert list(data.checker.originals) == [str(root / "reverie" / "REVERIE_val.json")]
    finally:
        data.close()


def test_the_hidden_file_is_hashed_once_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checksum check hashes the hidden file once per size and modification time; a
    change of the same size (a new time) is hashed again and still refused."""
    import os

    from vlneval.server.services import admin, scoring
    from vlneval.server.services.scoring import DataChangedError, check_unchanged
    from vlneval.tasks.common.root import demo_root

    hidden = tmp_path / "DEMO_hidden.json"
    hidden.write_bytes((demo_root() / "demo" / "DEMO_val.json").read_bytes())
    digest = admin.episodes_sha256(hidden.read_bytes())
    spec = PhaseSpec("demo", "val", "demo", str(hidden), None, digest, "SR", challenge="demo",
                     phase="h")  # fmt: skip
    hashed: list[bytes] = []
    real = admin.episodes_sha256

    def counted(raw: bytes) -> str:
        hashed.append(raw)
        return real(raw)

    monkeypatch.setattr(scoring, "episodes_sha256", counted)  # the name check_unchanged calls
    for _ in range(3):
        check_unchanged(spec)
    assert len(hashed) == 1
    stamp = hidden.stat().st_mtime_ns
    hidden.write_text(hidden.read_text().replace('"distance": 4.29', '"distance": 4.28'))
    os.utime(hidden, ns=(stamp + 10**9, stamp + 10**9))  # the same size: only the time tells
    assert len(hashed[0]) == hidden.stat().st_size
    with pytest.raises(DataChangedError, match="--challenge demo --phase h --rehash"):
        check_unchanged(spec)
    assert len(hashed) == 2
