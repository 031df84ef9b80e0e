"""Dataclasses without compiling their methods at start-up (issue 18).

`dataclasses` builds each generated method from source text, one `compile` per method per
class; with `frozen=True` that is six per class (`__init__`, `__repr__`, `__eq__`,
`__hash__`, `__setattr__`, `__delattr__`), about a millisecond a class, and `show` defines
some forty dataclasses before its first request. Here none is compiled:

- `dataclass` (a drop-in for the subset of `dataclasses.dataclass` this package uses:
  `frozen`, `eq`, `repr`, `slots`, `kw_only`) lets `dataclasses` collect the fields, slots
  and `__match_args__` with every method generation off, then adds the `__init__` that
  tools/regen.py wrote into `inits.py` (see `initcode.py`; a class edited without
  regenerating gets its `__init__` compiled, correct but slower), the frozen
  `__setattr__`/`__delattr__` (raising `FrozenInstanceError` as the generated ones do, and
  with `slots` the pickling support), the shared `__eq__`, `__hash__` and `__repr__`, the
  signature docstring stored in `inits.py`, and sets `__dataclass_params__` to what was
  declared. `fields()`, `replace()` and `is_dataclass()` work as on any dataclass, and mypy
  reads the decorator as `dataclasses.dataclass` (`dataclass_transform`).
- A class declared `@dataclass(..., eq=False, repr=False)` and then decorated `@values` gets
  the same shared `__eq__`, `__hash__` (frozen classes; others stay unhashable, as `eq=True`
  leaves them) and `__repr__`. They behave as the generated ones:
  - `a == b` compares the fields with `compare=True`, as tuples, when both are the same
    class (anything else: `NotImplemented`);
  - `hash(a)` hashes the tuple of the fields a frozen `eq=True` dataclass hashes;
  - `repr(a)` is `QualName(field=value!r, ...)` over the fields with `repr=True`, `...` on
    recursion.
- `@record` is `@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)`
  with `@values`: the documents' and wire models' declaration in one line.

tests/unit/test_inits.py checks every class against a real dataclass of the same declaration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import FrozenInstanceError, fields
from dataclasses import field as field  # re-exported with `dataclass`
from threading import get_ident
from typing import Any, TypeVar, cast, dataclass_transform, overload

from hermes_task.records.initcode import init_function, shape_of

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


def _frozen(owner: Any, names: tuple[str, ...]) -> tuple[Callable[..., None], Callable[..., None]]:
    """The `__setattr__` and `__delattr__` `dataclasses` generates for a frozen class (`owner`
    is the class as declared: with `slots`, the one `dataclasses` then replaces, as there)."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is owner or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(owner, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    __setattr__.__qualname__ = f"{owner.__qualname__}.__setattr__"
    __delattr__.__qualname__ = f"{owner.__qualname__}.__delattr__"
    return __setattr__, __delattr__


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)


def _build(cls: type[R], *, frozen: bool, eq: bool, repr: bool, slots: bool, kw_only: bool) -> type[R]:
    """`dataclasses.dataclass(cls, ...)` with the methods added here (see the module docstring)."""
    own = dict(vars(cls))
    needs_doc = not own.get("__doc__")
    if needs_doc:
        cls.__doc__ = "-"  # not empty: `dataclasses` would read the signature for it
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    bases: list[Any] = [
        vars(b)["__dataclass_params__"] for b in cls.__mro__[1:] if "__dataclass_params__" in vars(b)
    ]
    thawed = [p for p in bases if p.frozen] if frozen else []
    if bases and frozen and not thawed:
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    for p in thawed:  # for the check of `dataclasses`, which is told frozen=False
        p.frozen = False
    try:
        made = dataclasses.dataclass(
            cls, init=False, repr=False, eq=False, frozen=False, slots=slots, kw_only=kw_only
        )
    finally:
        for p in thawed:
            p.frozen = True
    params: Any = vars(made)["__dataclass_params__"]
    params.init, params.repr, params.eq, params.frozen = True, repr, eq, frozen
    init, doc = init_function(made, shape_of(made, frozen=frozen, slots=slots), needs_doc=needs_doc)
    added: dict[str, Any] = {"__init__": init}
    if frozen:
        for method in _frozen(cls, tuple(f.name for f in fields(cast(Any, made)))):
            if method.__name__ in own:
                raise TypeError(f"Cannot overwrite attribute {method.__name__} in class {cls.__name__}")
            added[method.__name__] = method
        if slots:
            added["__getstate__"], added["__setstate__"] = _getstate, _setstate
    if eq:
        added["__eq__"] = _eq
        if not explicit_hash:
            added["__hash__"] = _hash if frozen else None
    if repr:
        added["__repr__"] = _repr
    for name, value in added.items():
        if name == "__hash__" or name not in own:  # as `dataclasses`: the class's own stay
            type.__setattr__(made, name, value)
    if needs_doc:
        if doc is None:
            import inspect

            doc = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
        made.__doc__ = doc
    return made


@overload
def dataclass(cls: type[R], /) -> type[R]: ...


@overload
def dataclass(
    *, frozen: bool = False, eq: bool = True, repr: bool = True, slots: bool = False, kw_only: bool = False
) -> Callable[[type[R]], type[R]]: ...


@dataclass_transform(field_specifiers=(field,))
def dataclass(
    cls: type[R] | None = None,
    /,
    *,
    frozen: bool = False,
    eq: bool = True,
    repr: bool = True,
    slots: bool = False,
    kw_only: bool = False,
) -> type[R] | Callable[[type[R]], type[R]]:
    """`dataclasses.dataclass` with these options, its methods not compiled (module docstring)."""

    def wrap(cls: type[R]) -> type[R]:
        return _build(cls, frozen=frozen, eq=eq, repr=repr, slots=slots, kw_only=kw_only)

    return wrap if cls is None else wrap(cls)


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(field,))
def record(cls: type[R]) -> type[R]:
    """`@dataclass(frozen=True, slots=True, kw_only=True)` with `@values`: the documents' and
    wire models' declaration in one line."""
    return values(_build(cls, frozen=True, slots=True, kw_only=True, eq=False, repr=False))
