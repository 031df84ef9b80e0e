"""Dataclasses built by `records/__init__.py` (no method compiled, `__init__` from `records/inits.py`)
next to `dataclasses.dataclass` building the same declarations, in one process.

    .venv/bin/python -m bench.bench_records [--runs N]

Measured for every class of `core/documents.py` and `core/wire.py` without a dataclass base:
the time to build the class from its declaration (what an import pays), and the time to
construct an instance (what `older --all` pays per row: `Row` with every field given, and with
the defaults). The two builders alternate (AB BA ...); each figure is a median of `--runs`
samples with its min-max, and the ratio is records / dataclasses. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Callable
from typing import Any

from hermes_task.core import documents, wire
from hermes_task.records import dataclass as records_dataclass
from hermes_task.records import initcode


def declarations() -> list[type]:
    classes = [v for m in (documents, wire) for v in vars(m).values() if dataclasses.is_dataclass(v)]
    return [c for c in dict.fromkeys(classes) if isinstance(c, type) and len(c.__mro__) == 2]


def body(cls: type) -> dict[str, Any]:
    """A fresh, unprocessed class body with `cls`'s annotations and fields."""
    namespace: dict[str, Any] = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": None if initcode.BUILT[initcode.key(cls)][2] else cls.__doc__,
        "__annotations__": dict(cls.__annotations__),
    }
    for f in dataclasses.fields(cls):
        namespace[f.name] = dataclasses.field(
            default=f.default,
            default_factory=f.default_factory,
            repr=f.repr,
            compare=f.compare,
            metadata=f.metadata,
            kw_only=f.kw_only,
        )
    if "__post_init__" in vars(cls):
        namespace["__post_init__"] = vars(cls)["__post_init__"]
    return namespace


def build_all(builder: Callable[..., Any], classes: list[type]) -> float:
    started = time.perf_counter()
    for cls in classes:
        params = vars(cls)["__dataclass_params__"]
        options = {"frozen": params.frozen, "slots": "__slots__" in vars(cls), "eq": False, "repr": False}
        builder(**options)(type(cls.__name__, (), body(cls)))
    return time.perf_counter() - started


def construct(cls: Any, kwargs: dict[str, Any], number: int) -> float:
    started = time.perf_counter()
    for _ in range(number):
        cls(**kwargs)
    return (time.perf_counter() - started) / number


def stdlib(**options: Any) -> Any:
    return dataclasses.dataclass(kw_only=True, **options)


def ours(**options: Any) -> Any:
    return records_dataclass(kw_only=True, **options)


def line(name: str, pair: dict[str, list[float]], unit: float, label: str) -> str:
    a, b = pair["records"], pair["dataclasses"]

    def fmt(values: list[float]) -> str:
        return f"{statistics.median(values) * unit:.1f} ({min(values) * unit:.1f}-{max(values) * unit:.1f})"

    ratio = statistics.median(a) / statistics.median(b)
    return f"| {name} | {fmt(a)} {label} | {fmt(b)} {label} | {ratio:.2f}x |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args(argv).runs
    classes = declarations()
    twin = {
        "records": documents.Row,
        "dataclasses": stdlib(frozen=True, slots=True, eq=False, repr=False)(
            type("Row", (), body(documents.Row))
        ),
    }
    every = {f.name: None for f in dataclasses.fields(documents.Row)} | {
        "id": 1,
        "session_id": "s",
        "role": "user",
    }
    few = {"id": 1, "session_id": "s", "role": "user", "text": "t"}
    samples: dict[str, dict[str, list[float]]] = {
        key: {"records": [], "dataclasses": []} for key in ("build", "every", "few")
    }
    for i in range(runs):
        for who in ("records", "dataclasses") if i % 2 == 0 else ("dataclasses", "records"):
            samples["build"][who].append(build_all(ours if who == "records" else stdlib, classes))
            samples["every"][who].append(construct(twin[who], every, 20_000))
            samples["few"][who].append(construct(twin[who], few, 20_000))
    print(f"{len(classes)} classes of core/documents.py and core/wire.py; median (min-max) of {runs} runs\n")
    print("| measure | records | dataclasses | ratio |\n|---|---|---|---|")
    print(line("build every class", samples["build"], 1e3, "ms"))
    print(line("`Row(...)`, every field", samples["every"], 1e9, "ns"))
    print(line("`Row(...)`, defaults", samples["few"], 1e9, "ns"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
