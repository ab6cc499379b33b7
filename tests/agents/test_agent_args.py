"""``--agent-arg`` values reach an agent factory when vlneval describes it (its action spaces
and card fields are read from an agent made with them), not only when the run makes one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vlneval.agents.baselines import RandomAgent
from vlneval.agents.registry import get_agent
from vlneval.cli.main import main
from vlneval.errors import VLNEvalError

SPEC = "tests.agents.test_agent_args:levelled"


def levelled(level: int) -> Any:
    """A factory whose argument has no default and shows on the card."""
    agent = RandomAgent()
    agent.protocol = {"level": level}  # type: ignore[attr-defined]
    return agent


def test_a_factory_is_described_with_its_arguments() -> None:
    info = get_agent(SPEC, {"level": 3})
    assert info.protocol == {"level": 3} and info.make().protocol == {"level": 3}


def test_the_run_card_holds_what_the_factory_made_of_the_arguments(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    args = ["run", "--task", "demo", "--agent", SPEC, "--agent-arg", "level=3", "--limit", "2"]
    assert main([*args, "--out", str(out), "--quiet"]) == 0
    assert json.loads(out.with_name("p.protocol.json").read_text())["level"] == 3


def test_an_argument_the_factory_does_not_take_is_one_error_naming_those_it_takes() -> None:
    with pytest.raises(VLNEvalError) as exc:
        get_agent(SPEC, {"levle": 3})
    assert str(exc.value) == (
        f"agent {SPEC} takes no levle= argument (its constructor takes: level); see "
        "vlneval.distributed.checkpoint"
    )
