"""The one Registry (vlneval.registry): hand cases for ids, versions, entry points, names."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from vlneval.errors import UnknownNameError, VLNEvalError
from vlneval.registry import Registry, Spec, load_entry_point, parse_id


def test_versioned_ids_and_latest_version() -> None:
    reg: Registry[type] = Registry("environment", versioned=True)
    reg.register("grid-v1", dict, kwargs={"size": 1})
    reg.register("grid-v3", dict, kwargs={"size": 3})
    reg.register("grid-v2", dict, kwargs={"size": 2})
    assert reg.ids() == ["grid-v1", "grid-v2", "grid-v3"]
    assert reg.spec("grid").id == "grid-v3"
    assert reg.spec("grid-v2").version == 2 and reg.spec("grid-v2").name == "grid"
    assert reg.make("grid") == {"size": 3}
    assert reg.make("grid-v1", size=9) == {"size": 9}
    assert [s.id for s in reg.latest()] == ["grid-v3"] and len(reg) == 1
    with pytest.raises(
        VLNEvalError, match="grid has no version v4; known: grid-v1, grid-v2, grid-v3"
    ):
        reg.spec("grid-v4")
    with pytest.raises(VLNEvalError, match="versioned id"):
        reg.register("plain", dict)


def test_unversioned_names_as_tasks_use_them() -> None:
    tasks: Registry[object] = Registry("task")
    tasks.register("r2r", "vlneval.errors:VLNEvalError")
    tasks.register("r2r-envdrop-v1", dict)
    assert tasks.get("r2r") is VLNEvalError
    assert tasks.spec("r2r").version is None
    assert tasks.names() == ["r2r", "r2r-envdrop"]
    with pytest.raises(VLNEvalError, match="r2r has no version v1; known: r2r"):
        tasks.spec("r2r-v1")
    with pytest.raises(VLNEvalError, match="register all its ids the same way"):
        tasks.register("r2r-v2", dict)


def test_entry_point_string_is_loaded_once_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("vlneval_registry_probe")
    calls: list[int] = []

    def factory(**kwargs: object) -> dict[str, object]:
        calls.append(1)
        return dict(kwargs)

    module.FACTORY = factory  # type: ignore[attr-defined]
    reg: Registry[object] = Registry("agent", versioned=True)
    spec = reg.register("probe-v1", "vlneval_registry_probe:FACTORY", kwargs={"a": 1})
    monkeypatch.setitem(sys.modules, "vlneval_registry_probe", module)
    assert spec.load() is factory
    module.FACTORY = None  # type: ignore[attr-defined]  # a second import would see this
    assert reg.get("probe") is factory and reg.make("probe", b=2) == {"a": 1, "b": 2}
    assert calls == [1]


def test_entry_point_string_is_not_imported_at_registration() -> None:
    reg: Registry[object] = Registry("agent")
    reg.register("ghost", "no_such_pkg.anywhere:Thing")  # nothing imported yet
    with pytest.raises(VLNEvalError, match="cannot import module 'no_such_pkg.anywhere'"):
        reg.get("ghost")
    with pytest.raises(VLNEvalError, match="has no attribute 'Nope'"):
        load_entry_point("vlneval.errors:Nope")
    with pytest.raises(VLNEvalError, match="expected package.module:Name"):
        load_entry_point("vlneval.errors")


def test_unknown_name_suggests_the_closest() -> None:
    reg: Registry[type] = Registry("agent", versioned=True)
    for i in ("stop-v1", "shortest-v1", "random-v1", "random-walk-v1"):
        reg.register(i, dict)
    with pytest.raises(UnknownNameError, match="unknown agent 'shortes'; did you mean 'shortest'"):
        reg.spec("shortes")
    with pytest.raises(UnknownNameError) as err:
        reg.spec("nothing-alike-v1")
    assert "did you mean" not in str(err.value)
    assert "(known: random-v1, random-walk-v1, shortest-v1, stop-v1)" in str(err.value)
    assert isinstance(err.value, KeyError)


def test_lookup_ignores_case_and_listing_keeps_spelling() -> None:
    reg: Registry[type] = Registry("profile")
    reg.register("R2R-EnvDrop", dict)
    assert reg.spec("r2r-envdrop").id == "R2R-EnvDrop"
    assert "R2R-ENVDROP" in reg and "r2r-envdrop-v1" not in reg and 3 not in reg
    assert reg.ids() == ["R2R-EnvDrop"]


def test_duplicate_registration_is_refused() -> None:
    reg: Registry[type] = Registry("metric")
    reg.register("spl", dict)
    with pytest.raises(VLNEvalError, match="metric 'SPL' is already registered"):
        reg.register("SPL", dict)
    assert reg.ids() == ["spl"]


def test_parse_id() -> None:
    assert parse_id("x-y-v12") == ("x-y", 12)
    assert parse_id("graph-panoramic") == ("graph-panoramic", None)
    with pytest.raises(VLNEvalError, match="malformed id"):
        parse_id("-bad")


def test_a_spec_with_an_object_needs_no_import() -> None:
    spec: Spec[type] = Spec("box-v1", "box", 1, dict, kwargs={"n": 1})
    assert spec.load() is dict and spec.make(n=2) == {"n": 2}


def test_import_vlneval_is_light() -> None:
    """``import vlneval`` loads only its lazy-attribute helper and version (not the registry,
    the errors or what they import); the names it offers are imported on first use."""
    code = (
        "import sys, vlneval\n"
        "print(sorted(m for m in sys.modules if m.startswith('vlneval')))\n"
        "print([m for m in ('dataclasses', 'inspect', 'difflib') if m in sys.modules])\n"
        "print(vlneval.get_task('R2R').name, 'vlneval.tasks' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "['vlneval', 'vlneval._lazy', 'vlneval._version']",
        "[]",
        "r2r True",
    ]
