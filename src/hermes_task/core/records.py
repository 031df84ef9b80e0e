"""Dataclass equality, hash and repr without compiling them for every class (issue 18).

`dataclasses` builds each generated method from source text, one `compile` per method per
class; with `frozen=True` that is six per class (`__init__`, `__repr__`, `__eq__`,
`__hash__`, `__setattr__`, `__delattr__`), about a millisecond a class, and `show` defines
some forty dataclasses before its first request. A class declared
`@dataclass(..., eq=False, repr=False)` and then decorated `@values` gets one shared
`__eq__`, `__hash__` (frozen classes; others stay unhashable, as `eq=True` leaves them) and
`__repr__` that behave as the generated ones:

- `a == b` compares the fields with `compare=True`, as tuples, when both are the same class
  (anything else: `NotImplemented`);
- `hash(a)` hashes the tuple of the fields a frozen `eq=True` dataclass hashes;
- `repr(a)` is `QualName(field=value!r, ...)` over the fields with `repr=True`, `...` on
  recursion.

`__init__` and the frozen `__setattr__`/`__delattr__` stay generated: `__init__` runs once
per row and must stay fast, and mypy reads the class as the dataclass it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from threading import get_ident
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T", bound=type)
R = TypeVar("R")

_COMPARED: dict[type, tuple[str, ...]] = {}
_HASHED: dict[type, tuple[str, ...]] = {}
_SHOWN: dict[type, tuple[str, ...]] = {}
_IN_REPR: set[tuple[int, int]] = set()


def _names(cache: dict[type, tuple[str, ...]], cls: type) -> tuple[str, ...]:
    names = cache.get(cls)
    if names is None:
        every = fields(cls)
        _COMPARED[cls] = tuple(f.name for f in every if f.compare)
        _HASHED[cls] = tuple(f.name for f in every if (f.compare if f.hash is None else f.hash))
        _SHOWN[cls] = tuple(f.name for f in every if f.repr)
        names = cache[cls]
    return names


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        names = _names(_COMPARED, self.__class__)
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, n) for n in _names(_HASHED, self.__class__)))


def _repr(self: Any) -> str:
    key = (id(self), get_ident())
    if key in _IN_REPR:
        return "..."
    _IN_REPR.add(key)
    try:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in _names(_SHOWN, self.__class__))
    finally:
        _IN_REPR.discard(key)
    return f"{self.__class__.__qualname__}({shown})"


def values(cls: T) -> T:
    """`cls` (a dataclass declared with `eq=False, repr=False`) with the shared `__eq__`,
    `__hash__` and `__repr__` (see the module docstring)."""
    params: Any = getattr(cls, "__dataclass_params__")  # noqa: B009 (T is any class to mypy)
    if params.eq or params.repr:
        raise TypeError(f"{cls.__name__}: declare it with eq=False, repr=False to use @values")
    if {"__eq__", "__hash__", "__repr__"} & set(vars(cls)):
        raise TypeError(f"{cls.__name__} defines its own __eq__, __hash__ or __repr__")
    type.__setattr__(cls, "__eq__", _eq)
    type.__setattr__(cls, "__hash__", _hash if params.frozen else None)
    type.__setattr__(cls, "__repr__", _repr)
    return cls


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field,))
def record(cls: type[R]) -> type[R]:
    """`@dataclass(frozen=True, slots=True, kw_only=True)` with `@values`: the documents' and
    wire models' declaration in one line."""
    return values(dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)(cls))
