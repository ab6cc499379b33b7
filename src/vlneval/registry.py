"""The one registry: named, optionally versioned entries, loaded on first use.

Tasks, profiles, metrics, environments and agents are each a :class:`Registry`. An entry is
registered once under a name (``r2r``) or a versioned id (``graph-panoramic-v1``) and points at
an object or at an entry-point string ``package.module:NAME`` that is imported the first time
the entry is used, so registering costs nothing and modules import in one direction. Lookups
ignore case; a bare name gives its latest version; an unknown name suggests the closest one.

This module sits at the bottom of the package: it imports only :mod:`vlneval.errors`.

Example:
    >>> TASKS: Registry[object] = Registry("task")
    >>> _ = TASKS.register("r2r", "vlneval.errors:VLNEvalError", description="R2R")
    >>> TASKS.get("R2R").__name__, TASKS.names()
    ('VLNEvalError', ['r2r'])
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, NoReturn, TypeVar, cast

from vlneval.errors import UnknownNameError, VLNEvalError

__all__ = ["Registry", "Spec", "parse_id", "load_entry_point"]

T = TypeVar("T")

_ID = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_.\-]*?)(?:-v(?P<version>\d+))?$")


def parse_id(entry_id: str) -> tuple[str, int | None]:
    """``(name, version)`` of ``name-vN`` (version None when not given).

    Example:
        >>> parse_id("random-walk-v1"), parse_id("random-walk")
        (('random-walk', 1), ('random-walk', None))
    """
    m = _ID.match(entry_id) if isinstance(entry_id, str) else None
    if m is None:
        raise VLNEvalError(f"malformed id {entry_id!r}: expected name or name-vN (e.g. random-v1)")
    version = m.group("version")
    return m.group("name"), int(version) if version is not None else None


def load_entry_point(target: str) -> Any:
    """The object ``package.module:attribute`` names (a clear error when it cannot be imported).

    Example:
        >>> load_entry_point("vlneval.errors:did_you_mean").__name__
        'did_you_mean'
    """
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise VLNEvalError(f"expected package.module:Name, got {target!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise VLNEvalError(
            f"cannot import module {module_name!r} (from {target!r}): {exc}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise VLNEvalError(
                f"module {module_name!r} has no attribute {attr!r} (from {target!r})"
            )
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Spec(Generic[T]):
    """One registered entry.

    Attributes:
        id: as registered: ``name`` or ``name-vN``.
        name, version: its parts (version None for an unversioned entry).
        entry_point: the object, or ``package.module:NAME`` imported on first :meth:`load`.
        description: one line for listings.
        kwargs: the arguments :meth:`make` calls the entry point with (overridable).
    """

    id: str
    name: str
    version: int | None
    entry_point: T | str
    description: str = ""
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    _loaded: list[Any] = field(default_factory=list, repr=False, compare=False)

    def load(self) -> T:
        """The entry's object; an entry-point string is imported once, then kept."""
        if not isinstance(self.entry_point, str):
            return self.entry_point
        if not self._loaded:
            self._loaded.append(load_entry_point(self.entry_point))
        return cast(T, self._loaded[0])

    def make(self, **kwargs: Any) -> Any:
        """Calls the entry's object with :attr:`kwargs` updated by ``kwargs``."""
        factory = cast(Callable[..., Any], self.load())
        return factory(**{**self.kwargs, **kwargs})


def _rank(spec: Spec[Any]) -> int:
    """Orders an entry's versions: an unversioned entry first, then by version."""
    return -1 if spec.version is None else spec.version


class Registry(Generic[T]):
    """Entries of one kind (``task``, ``environment``, ``agent``...), looked up by name.

    Args:
        kind: what an entry is, for messages (``unknown agent 'x'``).
        versioned: every id must carry a version (``name-vN``), as environments and agents do.

    Example:
        >>> reg: Registry[type] = Registry("thing", versioned=True)
        >>> _ = reg.register("box-v1", dict, kwargs={"size": 1})
        >>> _ = reg.register("box-v2", dict, kwargs={"size": 2})
        >>> reg.spec("Box").id, reg.make("box-v1")
        ('box-v2', {'size': 1})
        >>> try:
        ...     reg.spec("boxes")
        ... except UnknownNameError as e:
        ...     print(e)
        unknown thing 'boxes'; did you mean 'box'? (known: box-v1, box-v2)
    """

    def __init__(self, kind: str, *, versioned: bool = False) -> None:
        self.kind = kind
        self.versioned = versioned
        self._specs: dict[str, Spec[T]] = {}  # casefolded id -> spec
        self._aliases: dict[str, str] = {}  # casefolded alias -> the name it stands for

    def register(
        self,
        entry_id: str,
        entry_point: T | str,
        *,
        description: str = "",
        kwargs: Mapping[str, Any] | None = None,
    ) -> Spec[T]:
        """Adds ``entry_id``; an id (in any case) is registered once.

        Raises:
            VLNEvalError: a malformed or already registered id, an unversioned id in a
                versioned registry, or a name registered both with and without versions.
        """
        name, version = parse_id(entry_id)
        if version is None and self.versioned:
            raise VLNEvalError(f"register a versioned id (name-vN), got {entry_id!r}")
        key = entry_id.casefold()
        if key in self._specs or name.casefold() in self._aliases:  # an alias would hide it
            raise VLNEvalError(f"{self.kind} {entry_id!r} is already registered")
        if any((s.version is None) != (version is None) for s in self._versions(name)):
            raise VLNEvalError(
                f"{self.kind} {name!r} is registered with{'out' if version else ''} "
                "versions; register all its ids the same way"
            )
        spec = Spec(entry_id, name, version, entry_point, description, dict(kwargs or {}))
        self._specs[key] = spec
        return spec

    def alias(self, alias: str, name: str) -> None:
        """Makes ``alias`` (any case) another name of the registered ``name``; listings keep
        one entry per name (:meth:`aliases` gives a name's others).

        Example:
            >>> reg: Registry[type] = Registry("task")
            >>> _ = reg.register("ndh", dict)
            >>> reg.alias("cvdn", "ndh")
            >>> reg.spec("CVDN").id, reg.names(), reg.aliases("ndh")
            ('ndh', ['ndh'], ['cvdn'])
        """
        if self._versions(alias) or alias.casefold() in self._aliases:
            raise VLNEvalError(f"{self.kind} {alias!r} is already registered")
        self._aliases[alias.casefold()] = self.spec(name).name

    def aliases(self, name: str) -> list[str]:
        """The other names of ``name`` (:meth:`alias`), sorted."""
        return sorted(a for a, n in self._aliases.items() if n.casefold() == name.casefold())

    def spec(self, entry_id: str) -> Spec[T]:
        """The entry ``entry_id`` names; a bare ``name`` means its latest version.

        Raises:
            UnknownNameError: no such name (with the closest one, when there is one).
            VLNEvalError: the name exists but not the version asked for.
        """
        name, version = parse_id(entry_id)
        versions = self._versions(self._aliases.get(name.casefold(), name))
        if not versions:
            self._unknown(name)
        if version is None:
            return versions[-1]
        for s in versions:
            if s.version == version:
                return s
        known = ", ".join(s.id for s in versions)
        raise VLNEvalError(f"{self.kind} {name} has no version v{version}; known: {known}")

    def get(self, entry_id: str) -> T:
        """The object of ``entry_id`` (imported on first use)."""
        return self.spec(entry_id).load()

    def make(self, entry_id: str, **kwargs: Any) -> Any:
        """Calls the object of ``entry_id`` with its registered arguments updated by ``kwargs``."""
        return self.spec(entry_id).make(**kwargs)

    def ids(self) -> list[str]:
        """Every registered id, sorted."""
        return sorted(s.id for s in self._specs.values())

    def names(self) -> list[str]:
        """Every registered name (without versions), sorted."""
        return sorted({s.name for s in self._specs.values()})

    def latest(self) -> list[Spec[T]]:
        """The latest version of every name, sorted by name (one pass over the entries)."""
        newest: dict[str, Spec[T]] = {}
        for s in self._specs.values():
            key = s.name.casefold()
            held = newest.get(key)
            if held is None or _rank(s) > _rank(held):
                newest[key] = s
        return [newest[n.casefold()] for n in self.names()]

    def __contains__(self, entry_id: object) -> bool:
        if not isinstance(entry_id, str):
            return False
        try:
            self.spec(entry_id)
        except VLNEvalError:
            return False
        return True

    def values(self) -> list[T]:
        """The object of the latest version of every name, sorted by name (each imported)."""
        return [s.load() for s in self.latest()]

    def unregister(self, entry_id: str) -> None:
        """Removes ``entry_id`` (exactly as registered, any case); for tests and plugins.

        Raises:
            UnknownNameError: no entry has that id.
        """
        if self._specs.pop(entry_id.casefold(), None) is None:
            self._unknown(entry_id)

    def __iter__(self) -> Iterator[str]:
        """Every registered name, sorted (as a mapping iterates its keys)."""
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._specs)} entries)"

    def _versions(self, name: str) -> list[Spec[T]]:
        folded = name.casefold()
        found = [s for s in self._specs.values() if s.name.casefold() == folded]
        return sorted(found, key=_rank)

    def _unknown(self, name: str) -> NoReturn:
        raise UnknownNameError(self.kind, name, [*self.names(), *self._aliases], listed=self.ids())
