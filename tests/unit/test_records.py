"""`records/__init__.py`: the shared `__eq__`, `__hash__` and `__repr__` behave as the ones
`dataclasses` generates, for frozen and mutable classes, fields excluded from comparison or
repr, nesting and recursion."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from hermes_task.records import record, values


@dataclass(frozen=True, slots=True, kw_only=True)
class GenFrozen:
    a: int
    b: list[int] = field(default_factory=list)
    c: str = field(default="x", compare=False, repr=False)


@record
class OurFrozen:
    a: int
    b: list[int] = field(default_factory=list)
    c: str = field(default="x", compare=False, repr=False)


@dataclass(frozen=True)
class GenHashable:
    a: int
    b: str = field(default="", compare=False)
    c: tuple[int, ...] = ()


@values
@dataclass(frozen=True, eq=False, repr=False)
class OurHashable:
    a: int
    b: str = field(default="", compare=False)
    c: tuple[int, ...] = ()


@dataclass
class GenMutable:
    items: list[object] = field(default_factory=list)


@values
@dataclass(eq=False, repr=False)
class OurMutable:
    items: list[object] = field(default_factory=list)


def _same_name(text: str, ours: type, generated: type) -> str:
    return text.replace(ours.__qualname__, generated.__qualname__)


@pytest.mark.parametrize(
    ("ours", "generated", "kwargs"),
    [
        (OurFrozen, GenFrozen, {"a": 1, "b": [1, 2], "c": "y"}),
        (OurFrozen, GenFrozen, {"a": 1}),
        (OurHashable, GenHashable, {"a": 3, "b": "z", "c": (1,)}),
        (OurMutable, GenMutable, {"items": [1, "two", None]}),
    ],
)
def test_behaves_as_the_generated_methods(ours: type, generated: type, kwargs: dict[str, object]) -> None:
    o, g = ours(**kwargs), generated(**kwargs)
    assert _same_name(repr(o), ours, generated) == repr(g)
    assert o == ours(**kwargs)
    assert (o == g) is False  # another class: NotImplemented both ways, then identity
    assert o != g
    assert o.__eq__(g) is NotImplemented
    assert g.__eq__(o) is NotImplemented
    if "c" in kwargs or "b" in kwargs:
        changed = {**kwargs, "c": "other"} if "c" in kwargs else {**kwargs, "b": "other"}
        assert (ours(**changed) == o) == (generated(**changed) == g)
    if generated.__hash__ is None:
        assert ours.__hash__ is None
        with pytest.raises(TypeError):
            hash(o)
    else:
        try:
            expected: object = hash(g)
        except TypeError as exc:
            expected = type(exc)
        try:
            got: object = hash(o)
        except TypeError as exc:
            got = type(exc)
        assert got == expected


def test_replace_nesting_and_recursion() -> None:
    inner = OurFrozen(a=2, b=[3])
    outer = OurMutable(items=[inner])
    assert repr(outer) == "OurMutable(items=[OurFrozen(a=2, b=[3])])"
    assert replace(inner, a=5) == OurFrozen(a=5, b=[3])
    outer.items.append(outer)
    assert repr(outer) == "OurMutable(items=[OurFrozen(a=2, b=[3]), ...])"
    assert repr(outer) == repr(outer)  # the guard is cleared
    generated = GenMutable()
    generated.items.append(generated)
    assert repr(generated) == "GenMutable(items=[...])"


def test_refuses_a_class_that_would_be_generated_anyway() -> None:
    with pytest.raises(TypeError, match="eq=False, repr=False"):
        values(dataclass(frozen=True)(type("C", (), {"__annotations__": {"a": "int"}})))
