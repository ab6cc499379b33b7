"""Imports flow one way: environments never import agents, scorers, reports or the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import vlneval.envs

UPPER = ("agents", "evaluation", "cli", "reports", "server", "diagnostics", "distributed", "stats")
ENVS = Path(vlneval.envs.__file__).parent


def test_no_envs_module_names_an_upper_layer_in_an_import() -> None:
    pattern = re.compile(rf"^\s*(from|import) vlneval\.({'|'.join(UPPER)})\b", re.M)
    offenders = [
        f"{p.relative_to(ENVS)}: {m.group(0).strip()}"
        for p in sorted(ENVS.rglob("*.py"))
        for m in pattern.finditer(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_importing_every_envs_module_loads_no_upper_layer() -> None:
    code = (
        "import importlib, pkgutil, sys, vlneval.envs as e\n"
        "for m in pkgutil.walk_packages(e.__path__, 'vlneval.envs.'):\n"
        "    importlib.import_module(m.name)\n"
        f"print(sorted(k for k in sys.modules if k.split('.')[:2][-1] in {UPPER!r}"
        " and k.startswith('vlneval.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
