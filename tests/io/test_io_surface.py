"""What the package docstring of vlneval.io promises about its names."""

from __future__ import annotations

import ast
import importlib
import inspect

import vlneval.io as io

SUBMODULES = ("explaining", "keys", "limits", "outputs", "reader", "records", "temps", "text", "writer")  # fmt: skip


def _defined(module: str) -> set[str]:
    """The public names a module defines at its top level (classes, functions, constants)."""
    tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def test_every_submodule_name_but_the_internal_ones_is_in_the_package() -> None:
    not_in_package = {
        f"{short}.{name}"
        for short in SUBMODULES
        for name in _defined(f"vlneval.io.{short}")
        if not hasattr(io, name)
    }
    internal = {"limits.MIB", "reader.READ_STEP", "reader.GUNZIP_STEP", "records.CHUNK", "records.jsonl"}  # fmt: skip
    assert not_in_package == internal
    assert all(hasattr(io, name) for name in (*io.__all__, "BOM", "GZIP_MAGIC", "TEMP_MARK"))
    assert all(f"``{name}``" in (io.__doc__ or "") for name in internal)
