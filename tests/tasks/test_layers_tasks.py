"""Imports flow one way: tasks never import environments, agents or anything above them; the
layers below (metrics, graph, io, errors, registry) never import tasks; ``tasks/common`` imports
no task folder."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import vlneval

PACKAGE = Path(vlneval.__file__).parent
TASKS = PACKAGE / "tasks"
UPPER = (
    "envs", "agents", "evaluation", "cli", "reports", "server", "diagnostics", "stats",
    "distributed",
)  # fmt: skip
FOLDERS = sorted(
    p.name for p in TASKS.iterdir() if (p / "__init__.py").exists() and p.name != "common"
)


def _imports(paths: list[Path], pattern: re.Pattern[str]) -> list[str]:
    return [
        f"{p.relative_to(PACKAGE)}: {m.group(0).strip()}"
        for p in paths
        for m in pattern.finditer(p.read_text(encoding="utf-8"))
    ]


def test_no_tasks_module_imports_an_upper_layer() -> None:
    pattern = re.compile(rf"^\s*(from|import) vlneval\.({'|'.join(UPPER)})\b", re.M)
    assert _imports(sorted(TASKS.rglob("*.py")), pattern) == []


def test_no_lower_layer_imports_tasks() -> None:
    lower = [PACKAGE / n for n in ("errors.py", "registry.py")]
    for folder in ("io", "metrics", "graph"):
        lower += sorted((PACKAGE / folder).rglob("*.py"))
    pattern = re.compile(r"^\s*(from|import) vlneval\.tasks\b", re.M)
    assert _imports(lower, pattern) == []


def test_the_shared_modules_import_no_task_folder() -> None:
    shared = sorted((TASKS / "common").rglob("*.py")) + [TASKS / "base.py", TASKS / "profiles.py"]
    pattern = re.compile(rf"^\s*(from|import) vlneval\.tasks\.({'|'.join(FOLDERS)})\b", re.M)
    assert _imports(shared, pattern) == []


def test_importing_every_tasks_module_loads_no_upper_layer() -> None:
    code = (
        "import importlib, pkgutil, sys, vlneval.tasks as t\n"
        "for m in pkgutil.walk_packages(t.__path__, 'vlneval.tasks.'):\n"
        "    importlib.import_module(m.name)\n"
        f"print(sorted(k for k in sys.modules if k.split('.')[:2][-1] in {UPPER!r}"
        " and k.startswith('vlneval.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
