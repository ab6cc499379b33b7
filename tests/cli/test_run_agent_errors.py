"""``vlneval run`` when the user's agent raises: the agent's traceback, the episode and step,
exit 2, and what became of the episodes it finished (not a "bug in vlneval")."""

from __future__ import annotations

import re
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from vlneval.cli.main import main

AGENTS = """
class Crash:
    action_spaces = ("panoramic",)
    def reset(self, observation, *, rng):
        pass
    def act(self, observation):
        if observation["step"] == 2:
            raise RuntimeError("boom in my model")
        return 1 if len(observation["candidates"]) > 1 else 0

class Late(Crash):
    episodes = 0
    def reset(self, observation, *, rng):
        type(self).episodes += 1
    def act(self, observation):
        if type(self).episodes == 5:
            raise ValueError("bad tensor shape")
        return 0

class Second(Late):
    episodes = 0
    def act(self, observation):
        if type(self).episodes == 2:
            raise ValueError("bad tensor shape")
        return 0

class BadReset(Crash):
    def reset(self, observation, *, rng):
        raise KeyError("features")

class NoArgs(Crash):
    def __init__(self, must):
        pass

class Huge(Crash):
    action = 2**32 + 1
    def act(self, observation):
        return self.action if observation["step"] == 1 else 1

class Huger(Huge):
    action = 2**70

def failing_factory():
    raise RuntimeError("factory failed")

not_an_agent = 3.5
import textwrap  # a module is no agent either

class BadFinish(Crash):
    def act(self, observation):
        return 0
    def finish(self, observation):
        return {"blob": object()}
"""

KEPT_NOTHING = (
    "nothing was written to {out} (the episodes finished before the error are not kept; with "
    "--shard 0/1 each episode is written as it ends, and --resume continues after a fix)"
)


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "crash_agents.py").write_text(textwrap.dedent(AGENTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("crash_agents", None)
    return "crash_agents"


def _run(agent: str, out: Path, *extra: str) -> int:
    return main(["run", "--task", "demo", "--agent", agent, "--out", str(out), "--quiet", *extra])


def test_an_exception_of_act_names_the_episode_and_step_and_shows_the_agent_s_traceback(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.json"
    assert _run(f"{agents}:Crash", out) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert "crash_agents.py" in lines[1] and ", in act" in lines[1]
    assert "vlneval" not in "".join(lines[:-2])  # the agent's frames only
    assert lines[-3] == "RuntimeError: boom in my model"
    assert lines[-2] == (
        f"error: agent {agents}:Crash: act() raised RuntimeError at episode 100_0, step 2: "
        "boom in my model"
    )
    assert lines[-1] == KEPT_NOTHING.format(out=out)
    assert "internal error" not in err and not out.exists()


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("BadReset", "reset() raised KeyError at episode 100_0, step 0: 'features'"),
        (
            "NoArgs",
            "its constructor raised TypeError: NoArgs.__init__() missing 1 required positional "
            "argument: 'must'",
        ),
    ],
)
def test_reset_and_constructor_exceptions_blame_the_agent(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, message: str
) -> None:
    out = tmp_path / "p.json"
    assert _run(f"{agents}:{agent}", out) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-2] == f"error: agent {agents}:{agent}: {message}"
    assert lines[-1] == KEPT_NOTHING.format(out=out)


@pytest.mark.parametrize(("agent", "action"), [("Huge", 2**32 + 1), ("Huger", 2**70)])
@pytest.mark.parametrize("extra", [[], ["--batch-size", "3"], ["--shard", "0/1"]])
def test_an_action_outside_int32_is_the_agent_s_invalid_action(
    agents: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    agent: str,
    action: int,
    extra: list[str],
) -> None:
    assert _run(f"{agents}:{agent}", tmp_path / "p.json", *extra) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (
        f"error: episode 100_0: step 1: action {action} is not valid in the panoramic action "
        "space: expected 0 (STOP), 1..4 (a candidate)"
    )
    assert "internal error" not in "\n".join(lines)


def test_a_failing_factory_is_the_agent_s_error_in_run_and_serve_agent(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.json"
    assert _run(f"{agents}:failing_factory", out) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-3] == "RuntimeError: factory failed"
    assert lines[-2] == (
        f"error: agent {agents}:failing_factory: its constructor raised RuntimeError: "
        "factory failed"
    )
    assert lines[-1] == KEPT_NOTHING.format(out=out)
    assert main(["serve-agent", "--agent", f"{agents}:failing_factory", "--port", "0"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == lines[-2]


@pytest.mark.parametrize(("target", "kind"), [("not_an_agent", "float"), ("textwrap", "module")])
def test_an_entry_point_that_is_not_callable_is_refused_in_one_line(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, kind: str
) -> None:
    spec = f"{agents}:{target}"
    message = f"error: agent {spec} is a {kind}, not a class or a function returning an agent\n"
    assert _run(spec, tmp_path / "p.json") == 2
    assert capsys.readouterr().err == message
    assert main(["serve-agent", "--agent", spec, "--port", "0"]) == 2
    assert capsys.readouterr().err == message


def test_a_finish_value_that_is_not_json_names_the_episode_and_field(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(f"{agents}:BadFinish", tmp_path / "p.json") == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: agent {agents}:BadFinish: finish() at episode 100_0 returned 'blob' = <object "
    )
    assert err.endswith(
        "which is not a JSON value (Encoding objects of type object is unsupported): return "
        "numbers, strings, lists and dicts\n"
    )
    assert "Traceback" not in err


def test_a_shard_keeps_the_finished_episodes_for_resume(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.json"
    records = tmp_path / "p.shard-0-of-2.jsonl"
    assert _run(f"{agents}:Late", out, "--shard", "0/2") == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-2] == (
        f"error: agent {agents}:Late: act() raised ValueError at episode 101_1, step 0: "
        "bad tensor shape"
    )
    assert lines[-1] == (
        f"the 4 episodes finished are kept in {records}: once the agent is fixed, the same "
        "command with --resume runs the rest (without --resume if the fix changes what the agent "
        "did in them)"
    )
    assert len(records.read_text().splitlines()) == 4
    # the class counter is past 5 now: the "fixed" agent resumes and runs the other 14
    assert _run(f"{agents}:Late", out, "--shard", "0/2", "--resume") == 0
    assert len(records.read_text().splitlines()) == 18


@pytest.mark.parametrize(("shard", "label"), [(["--shard", "0/2"], "shard 0/2"), ([], "episodes")])
def test_a_failed_run_s_last_progress_line_says_stopped_before_the_error(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], shard: list[str], label: str
) -> None:
    agent = f"{agents}:Late"
    out = tmp_path / "p.json"
    assert main(["run", "--task", "demo", "--agent", agent, "--out", str(out), *shard]) == 2
    lines = capsys.readouterr().err.splitlines()
    total = 18 if shard else 36
    assert lines[0] == f"{label}: 0/{total} episodes (0%), 0.0 episodes/s, 0:00 elapsed, ? left"
    assert re.fullmatch(
        rf"{label}: 4/{total} episodes \(\d+%\), \d+\.\d episodes/s, 0:\d\d elapsed, stopped",
        lines[1],
    )
    assert lines[-2] == (
        f"error: agent {agent}: act() raised ValueError at episode 101_1, step 0: bad tensor shape"
    )
    assert lines[-1].startswith("the 4 episodes finished are kept in" if shard else "nothing was")
    assert not any(" left" in line or "stopped" in line for line in lines[2:])


def test_a_shard_whose_agent_fails_at_once_says_no_episode_was_finished(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.json"
    assert _run(f"{agents}:Crash", out, "--shard", "0/2") == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-2].startswith(f"error: agent {agents}:Crash: act() raised RuntimeError at ")
    assert lines[-1] == (
        "no episode was finished: once the agent is fixed, run the same command again"
    )
    assert (tmp_path / "p.shard-0-of-2.jsonl").read_text() == ""


def test_a_shard_with_one_finished_episode_says_so_in_the_singular(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "p.json"
    records = tmp_path / "p.shard-0-of-2.jsonl"
    assert _run(f"{agents}:Second", out, "--shard", "0/2") == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"the 1 episode finished is kept in {records}: once the agent is fixed, the same "
        "command with --resume runs the rest (without --resume if the fix changes what the agent "
        "did in them)"
    )
    assert len(records.read_text().splitlines()) == 1


def test_a_remote_agent_s_error_gets_the_episode_and_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vlneval.agents.registry import get_agent
    from vlneval.agents.remote_server import AgentServer

    server = AgentServer(get_agent("tests.agents.remote_agents:Broken"), port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    out = tmp_path / "p.json"
    try:
        assert _run(server.url, out, "--agent-arg", "retries=0") == 2
    finally:
        server.shutdown()
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2  # no traceback: the server's answer says what the agent raised
    assert lines[0].startswith(f"error: agent {server.url}: act() at episode 100_0, step 0: ")
    assert lines[0].endswith(
        "HTTP 500: agent tests.agents.remote_agents:Broken: act() raised ValueError: boom at step 0"
    )
    assert lines[1] == KEPT_NOTHING.format(out=out)
