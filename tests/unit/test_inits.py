"""`records.dataclass` and the generated `records/inits.py`: every dataclass of the package
is built without compiling a method, its `__init__` comes from `inits.py`, and each class
behaves as a real `dataclasses.dataclass` of the same declaration (signature, docstring,
defaults and fresh default factories, `__post_init__`, frozen assignment and deletion,
eq/hash/repr, `__match_args__`, `replace()`, pickling). A class edited without regenerating
gets a compiled `__init__` that behaves the same."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pickle
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import FrozenInstanceError, field, fields
from pathlib import Path
from typing import Any

import pytest

import hermes_task
from hermes_task import records
from hermes_task.records import dataclass, initcode, inits, values
from tests.support.regen import load_regen

regen = load_regen()

ROOT = Path(__file__).resolve().parents[2]
STDLIB_BUILT: set[str] = set()  # built by `dataclasses` itself: none


def package_dataclasses() -> dict[str, type]:
    found: dict[str, type] = {}
    for module in pkgutil.walk_packages(hermes_task.__path__, "hermes_task."):
        for value in vars(importlib.import_module(module.name)).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.name
            ):
                found[initcode.key(value)] = value
    return found


PACKAGE = package_dataclasses()
BUILT = sorted(name for name in PACKAGE if name not in STDLIB_BUILT)


def test_every_dataclass_of_the_package_is_built_from_inits_py() -> None:
    assert set(PACKAGE) - set(initcode.BUILT) == STDLIB_BUILT
    assert not [name for name in initcode.COMPILED if name.startswith("hermes_task.")]
    for name in BUILT:
        assert vars(PACKAGE[name])["__init__"].__code__ is inits.INITS[name][0].__code__, name


def test_inits_py_is_current() -> None:
    ((path, text),) = regen.inits_file().items()
    assert Path(path).read_text(encoding="utf-8") == text, "inits.py is stale: run tools/regen.py"


def test_the_show_path_compiles_no_dataclass_method() -> None:
    """An audit hook sees every `compile` of `dataclasses` while the modules load."""
    probe = (
        "import sys, dataclasses\n"
        "seen = []\n"
        "sys.addaudithook(lambda e, a: e == 'compile' and seen.append(sys._getframe(1).f_code.co_name))\n"
        "import hermes_task.cli.show, hermes_task.render.jsonout, hermes_task.core.events\n"
        "print(seen.count('_create_fn'))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def twin(cls: type) -> type:
    """A real dataclass of `cls`'s declaration: its fields (inherited ones included, in order),
    its frozen/slots flags, `__post_init__`, and eq/repr where `cls` has the shared ones."""
    own = vars(cls)
    clones = [
        (
            f.name,
            f.type,
            field(
                default=f.default,
                default_factory=f.default_factory,
                init=f.init,
                repr=f.repr,
                hash=f.hash,
                compare=f.compare,
                metadata=f.metadata,
                kw_only=f.kw_only,
            ),
        )
        for f in fields(cls)
    ]
    namespace = {"__post_init__": cls.__post_init__} if hasattr(cls, "__post_init__") else {}
    return dataclasses.make_dataclass(
        cls.__name__,
        clones,
        namespace=namespace,
        frozen=vars(cls)["__dataclass_params__"].frozen,
        slots="__slots__" in own,
        eq=own.get("__eq__") is getattr(records, "_eq"),  # noqa: B009 (the shared method)
        repr=own.get("__repr__") is getattr(records, "_repr"),  # noqa: B009
    )


def arguments(cls: type, *, every: bool) -> dict[str, Any]:
    """Keyword arguments for `cls`: None for each field without a default (a value every
    `__post_init__` here accepts); with `every`, a distinct string for each init field."""
    return {
        f.name: f"value of {f.name}" if every else None
        for f in fields(cls)
        if f.init
        and (every or (f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING))
    }


def outcome(call: Any) -> object:
    try:
        return ("returned", call())
    except Exception as exc:
        return (type(exc), str(exc))


def assert_behaves_as(cls: type, real: type) -> None:
    assert inspect.signature(vars(cls)["__init__"]) == inspect.signature(vars(real)["__init__"])
    assert inspect.signature(cls) == inspect.signature(real)
    assert getattr(cls, "__match_args__", None) == getattr(real, "__match_args__", None)
    if initcode.BUILT[initcode.key(cls)][2]:  # no docstring of its own
        assert cls.__doc__ == real.__doc__
    for every in (False, True):
        assert_instances_behave(cls, real, arguments(cls, every=every))


def assert_instances_behave(cls: type, real: type, kwargs: dict[str, Any]) -> None:
    ours, theirs, again = cls(**kwargs), real(**kwargs), cls(**kwargs)
    for f in fields(cls):
        if not hasattr(theirs, f.name):
            assert not hasattr(ours, f.name), f.name
            continue
        assert getattr(ours, f.name) == getattr(theirs, f.name), f.name
        if f.default_factory is not dataclasses.MISSING and f.name not in kwargs:
            assert getattr(ours, f.name) is not getattr(again, f.name), f"{f.name}: one shared default"
    assert repr(ours).replace(cls.__qualname__, real.__qualname__) == repr(theirs)
    assert (ours == again) == (theirs == real(**kwargs))
    assert outcome(lambda: hash(ours)) == outcome(lambda: hash(theirs))
    assert (cls.__hash__ is None) == (real.__hash__ is None)
    if all(f.init for f in fields(cls)):
        assert dataclasses.replace(ours) == ours
    importable = getattr(sys.modules[cls.__module__], cls.__qualname__, None) is cls
    if "__getstate__" in vars(real) and importable:
        assert pickle.loads(pickle.dumps(ours)) == ours  # noqa: S301 (our own bytes)
    name = fields(cls)[0].name if fields(cls) else "x"
    for attribute in (name, "not_a_field"):
        changes: list[Callable[[Any], None]] = [
            lambda o: setattr(o, attribute, 1),  # noqa: B023
            lambda o: delattr(o, attribute),  # noqa: B023
        ]
        for change in changes:
            mine, real_one = cls(**kwargs), real(**kwargs)
            assert outcome(lambda: change(mine)) == outcome(lambda: change(real_one))  # noqa: B023
    if vars(cls)["__dataclass_params__"].frozen:
        assert outcome(lambda: setattr(ours, name, 1))[0] is FrozenInstanceError  # type: ignore[index]


@pytest.mark.parametrize("name", BUILT)
def test_each_class_behaves_as_the_dataclass_it_declares(name: str) -> None:
    cls = PACKAGE[name]
    assert_behaves_as(cls, twin(cls))


# Declarations the package does not use (yet), and a class edited after regenerating.


@dataclass
class Plain:
    a: int
    b: list[int] = field(default_factory=list)
    c: str = "c"
    d: int = field(default=4, init=False)
    e: list[int] = field(default_factory=list, init=False)
    f: int = field(default=6, kw_only=True)
    g: int = field(kw_only=True)


@dataclass(frozen=True, slots=True)
class Slotted:
    self: int
    cls: str = "x"
    hidden: int = field(default=3, init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", self.hidden + 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Child(Slotted):
    extra: tuple[int, ...] = ()


@values
@dataclass(eq=False, repr=False)
class Valued:
    a: int = 0


@dataclass(frozen=True)
class Empty:
    pass


@pytest.mark.parametrize("cls", [Plain, Slotted, Child, Valued, Empty])
def test_other_declarations_behave_as_dataclasses_do(cls: type) -> None:
    assert initcode.key(cls) in initcode.COMPILED  # not in inits.py: compiled
    assert_behaves_as(cls, twin(cls))


def test_inheritance_checks_as_dataclasses_do() -> None:
    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        dataclass(frozen=True)(type("Sub", (Plain,), {}))
    with pytest.raises(TypeError, match="cannot inherit non-frozen dataclass from a frozen one"):
        dataclass(type("Sub", (Empty,), {}))
    assert vars(Empty)["__dataclass_params__"].frozen  # restored after the check
    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__ in class Own"):
        dataclass(frozen=True)(type("Own", (), {"__setattr__": object.__setattr__}))
    hashed: Any = dataclass(frozen=True)(type("Hashed", (), {"__hash__": lambda self: 7}))
    assert hash(hashed()) == 7  # a class's own __hash__ stays, as with `dataclasses`
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        dataclass(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))


def test_a_stale_entry_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry whose shape differs from the class (fields edited, inits.py not regenerated)
    is compiled afresh; a current entry is used as it is."""
    name = f"{__name__}.Edited"
    (old_init, old_shape, _) = inits.INITS["hermes_task.core.documents.WarningItem"]
    monkeypatch.setitem(inits.INITS, name, (old_init, old_shape, "Edited(stale doc)"))

    def declare() -> type:
        class Edited:
            code: str
            message: str
            added: int = 0

        Edited.__qualname__ = "Edited"
        return dataclass(frozen=True, slots=True, kw_only=True)(Edited)

    edited = declare()
    assert initcode.COMPILED[-1] == name
    assert vars(edited)["__init__"].__code__ is not old_init.__code__
    assert edited.__doc__ != "Edited(stale doc)"
    assert_behaves_as(edited, twin(edited))
    compiled, shape = vars(edited)["__init__"], initcode.BUILT[name][1]
    monkeypatch.setitem(inits.INITS, name, (compiled, shape, "Edited(current doc)"))
    current = declare()
    assert vars(current)["__init__"].__code__ is compiled.__code__
    assert current.__doc__ == "Edited(current doc)"
