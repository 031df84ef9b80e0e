"""Wire decoding, side by side: hand-written `wire.py` (before and after its clean-up) and msgspec.

    .venv/bin/python -m pip install msgspec     # measurement only: not a dependency
    .venv/bin/python -m bench.bench_wire [--runs N] [--before REV]

Three implementations of the same wire models, measured in one run: `wire.py` as it was at
`--before` (read with `git show`), `wire.py` as it is in the working tree, and the msgspec
prototype `bench/wire_msgspec_prototype.py`. Each is copied into a scratch folder and imported
as a standalone module, so neither the package nor its dependencies are involved. Measured:
import time (a fresh interpreter per sample, bare and after httpx and the CLI are loaded);
decode time of a 50-row and a 500-row `/messages` page built from the captured fixtures
(hand-written: `json.loads` then the models, as `DashboardClient` does; msgspec: one pass
from bytes); lines of code; what each accepts and rejects; that all three decode every
captured body to the same values; and whether `msgspec.json.schema` could replace the
pydantic-generated JSON Schemas of `schemas.py`. Samples alternate between the candidates
(ABC CBA ...) and every figure is a median with its min-max. Nothing here asserts a time:
the tables go to docs/decisions.md.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import gc
import importlib
import io
import json
import os
import platform
import py_compile
import statistics
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURES = [REPO / "fixtures" / backend / "delegated_task_dashboard.json" for backend in ("iot", "official")]
PROTOTYPE = REPO / "bench" / "wire_msgspec_prototype.py"
# The last commit before the clean-up (the merge-base of `wiredecide` and main).
BEFORE = "dfb02ea"
BEFORE_PATH = "src/hermes_task/wire.py"
NAMES = {"before": "wire.py before", "after": "wire.py after", "msgspec": "msgspec prototype"}
# The three names the old SessionDetail added to the keys it recorded, whether sent or not.
SYNTHETIC = {"model_config_raw", "has_model_config", "looks_current"}


def working_tree_wire() -> Path:
    """`wire.py` wherever the restructure puts it under src/hermes_task."""
    found = sorted(REPO.glob("src/hermes_task/**/wire.py"))
    if len(found) != 1:
        raise SystemExit(f"expected one wire.py under src/hermes_task, found {found}")
    return found[0]


# -- statistics -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Stats:
    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def ms(self, digits: int = 2) -> str:
        lo, hi = min(self.values) * 1e3, max(self.values) * 1e3
        return f"{self.median * 1e3:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f})"


def alternating(candidates: dict[str, Callable[[], float]], runs: int, warmup: int = 1) -> dict[str, Stats]:
    """Each candidate returns one sample (seconds); they alternate ABC CBA ... after `warmup`
    untimed rounds, so drift and caches fall on all of them alike."""
    names = list(candidates)
    for _ in range(warmup):
        for name in names:
            candidates[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for i in range(runs):
        for name in names if i % 2 == 0 else names[::-1]:
            samples[name].append(candidates[name]())
    return {name: Stats(tuple(values)) for name, values in samples.items()}


# -- the three implementations ------------------------------------------------------------------


def stage(scratch: Path, before: str) -> dict[str, Path]:
    """Copy the three sources into `scratch` as standalone modules `wire_<key>.py`."""
    old = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{before}:{BEFORE_PATH}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sources = {"before": old, "after": working_tree_wire().read_text(), "msgspec": PROTOTYPE.read_text()}
    paths = {}
    for key, text in sources.items():
        paths[key] = scratch / f"wire_{key}.py"
        paths[key].write_text(text)
        # Imported from bytecode, as an installed package is (PYTHONDONTWRITEBYTECODE or
        # not): the import figures are then not the compiler's.
        py_compile.compile(str(paths[key]), doraise=True)
    return paths


def entry(cls: Any) -> Callable[[Any], Any]:
    """The hand-written models' entry point: `from_json` after the clean-up; before it,
    `model_validate` (and `parse` on SessionDetail)."""
    for name in ("from_json", "model_validate", "parse"):
        if hasattr(cls, name):
            return getattr(cls, name)  # type: ignore[no-any-return]
    raise AttributeError(cls)


def _from_json(model: Callable[[Any], Any]) -> Callable[[bytes], Any]:
    """`bytes -> model`: `json.loads` then the hand-written model, as `DashboardClient` does."""
    return lambda raw: model(json.loads(raw))


def decoders(modules: dict[str, ModuleType]) -> dict[str, dict[str, Callable[[bytes], Any]]]:
    """`{implementation: {endpoint: bytes -> model}}`, the way the client would call each."""
    out: dict[str, dict[str, Callable[[bytes], Any]]] = {}
    for key in ("before", "after"):
        mod = modules[key]
        page, detail, hint = entry(mod.MessagesPage), entry(mod.SessionDetail), entry(mod.LatestDescendant)
        out[key] = {
            "messages": _from_json(page),
            "detail": _from_json(detail),
            "latest-descendant": _from_json(hint),
        }
    proto = modules["msgspec"]
    out["msgspec"] = {
        "messages": proto.decode_page,
        "detail": proto.decode_detail,
        "latest-descendant": proto.decode_descendant,
    }
    return out


def sent(obj: Any) -> frozenset[str]:
    """The keys a hand-written model recorded as sent, under either attribute name."""
    for name in ("sent_keys", "model_fields_set"):
        if hasattr(obj, name):
            return frozenset(getattr(obj, name))
    raise AttributeError(obj)


# -- fixtures -----------------------------------------------------------------------------------


def exchanges() -> Iterator[tuple[str, str, Any]]:
    """`(backend, endpoint, body)` of every captured 200 answer the wire models decode."""
    for path in FIXTURES:
        data = json.loads(path.read_text())
        backend = data["backend"]["name"]
        for exchange in data["exchanges"]:
            kind = exchange["name"].split(":", 1)[0]
            if exchange["status"] != 200:
                continue
            if kind in ("messages", "messages-around"):
                yield backend, "messages", exchange["body"]
            elif kind in ("detail", "latest-descendant"):
                yield backend, kind, exchange["body"]


def page(rows: int) -> tuple[bytes, str]:
    """A current-contract `/messages` envelope of `rows` captured rows, taken in turn from the
    iot and the official fixtures (distinct rows, repeated only past the ~740 captured)."""
    per_backend: list[list[dict[str, Any]]] = []
    for path in FIXTURES:
        seen: dict[tuple[str, int], dict[str, Any]] = {}
        for exchange in json.loads(path.read_text())["exchanges"]:
            body = exchange["body"]
            if exchange["name"].startswith("messages:") and isinstance(body, dict):
                for row in body.get("messages", []):
                    seen.setdefault((row["session_id"], row["id"]), row)
        per_backend.append(list(seen.values()))
    mixed = [row for pair in zip(*per_backend, strict=False) for row in pair]
    chosen = [mixed[i % len(mixed)] for i in range(rows)]
    body = {
        "session_id": chosen[0]["session_id"],
        "messages": chosen,
        "pagination": {"limit": 500, "offset": 0, "order": "latest", "returned": rows},
        "profile": "default",
    }
    raw = json.dumps(body, ensure_ascii=False).encode()
    return raw, f"{rows} rows, {len(raw) / 1024:.0f} KiB, from {len(mixed)} distinct captured rows"


# -- measurements ---------------------------------------------------------------------------------


def import_times(paths: dict[str, Path], runs: int) -> dict[str, dict[str, Stats]]:
    """Seconds to `import wire_<key>` in a fresh interpreter: bare, and after httpx and the
    CLI's app module (what a reading command has loaded before its first response: the
    figure is what the implementation adds to every run, its own dependencies included)."""
    scratch = str(next(iter(paths.values())).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    out: dict[str, dict[str, Stats]] = {}
    for context, preload in (
        ("bare", ""),
        ("after `import httpx, hermes_task.cli`", "import httpx, json, hermes_task.cli; "),
    ):

        def sample(key: str, preload: str = preload) -> float:
            code = (
                f"import sys, time; sys.path.insert(0, {scratch!r}); {preload}"
                f"t = time.perf_counter(); import wire_{key}; print(time.perf_counter() - t)"
            )
            proc = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            )
            return float(proc.stdout)

        out[context] = alternating({key: functools.partial(sample, key) for key in paths}, runs, warmup=2)
    return out


def decode_times(
    modules: dict[str, ModuleType],
    decode: dict[str, dict[str, Callable[[bytes], Any]]],
    raw: bytes,
    runs: int,
) -> dict[str, Stats]:
    """Seconds per decode of `raw`; the hand-written ones also without `json.loads`, and
    msgspec also as `msgspec.convert` of that dict (what it would cost behind httpx's
    `response.json()`)."""
    import msgspec

    body = json.loads(raw)
    loops: int = max(1, 20_000 // json.loads(raw)["pagination"]["returned"])
    proto = modules["msgspec"]
    work: dict[str, Callable[[], Any]] = {
        "before": lambda: decode["before"]["messages"](raw),
        "after": lambda: decode["after"]["messages"](raw),
        "msgspec": lambda: decode["msgspec"]["messages"](raw),
        "before: models only": lambda: entry(modules["before"].MessagesPage)(body),
        "after: models only": lambda: entry(modules["after"].MessagesPage)(body),
        "msgspec: convert from the dict": lambda: msgspec.convert(body, proto.MessagesPage),
        "json.loads alone": lambda: json.loads(raw),
    }

    def timer(fn: Callable[[], Any]) -> Callable[[], float]:
        def sample() -> float:
            gc.collect()
            started = time.perf_counter()
            for _ in range(loops):
                fn()
            return (time.perf_counter() - started) / loops

        return sample

    return alternating({name: timer(fn) for name, fn in work.items()}, runs)


def lines_of_code(path: Path) -> tuple[int, int]:
    """(physical lines, code lines): code lines leave out blank lines, comments and docstrings."""
    text = path.read_text()
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno is not None
            ):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    code: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in skip and token.type != tokenize.ENDMARKER:
            code.update(line for line in range(token.start[0], token.end[0] + 1) if line not in docstrings)
    return len(text.splitlines()), len(code)


# -- what each accepts and rejects --------------------------------------------------------------

HOLE = "\x00hole\x00"
ROW = {
    "id": 268,
    "session_id": "20261130_170941_b9b20e",
    "role": "assistant",
    "content": "",
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}],
    "timestamp": 1796058581.14,
    "active": 1,
    "compacted": 0,
    "display_kind": None,
}
PAGE = {
    "session_id": ROW["session_id"],
    "messages": [ROW],
    "pagination": {"limit": 50, "offset": 0, "order": "latest", "returned": 1},
    "profile": "default",
}
DETAIL = {
    "id": ROW["session_id"],
    "source": "subagent",
    "parent_session_id": "20261130_170935_0a1434",
    "model_config": '{"_delegate_from": "20261130_170935_0a1434"}',
    "started_at": 1796058580.5,
    "ended_at": None,
    "end_reason": None,
    "is_default_profile": True,
}
HINT = {"requested_session_id": DETAIL["parent_session_id"], "session_id": ROW["session_id"], "changed": True}
BASES = {"messages": PAGE, "detail": DETAIL, "latest-descendant": HINT}
DROP = object()

# (case, endpoint, path to the value, raw JSON text put there, or DROP to delete the key)
CASES: list[tuple[str, str, tuple[Any, ...], Any]] = [
    ("`NaN` as a row timestamp", "messages", ("messages", 0, "timestamp"), "NaN"),
    ("`NaN` as a row id (int required)", "messages", ("messages", 0, "id"), "NaN"),
    ("`NaN` in `content` (kept as sent)", "messages", ("messages", 0, "content"), "NaN"),
    ("`NaN` in an unknown column", "messages", ("messages", 0, "token_count"), "NaN"),
    ("`1e400` as a row timestamp", "messages", ("messages", 0, "timestamp"), "1e400"),
    ("`1e400` as a row id", "messages", ("messages", 0, "id"), "1e400"),
    ("`1e400` in an unknown column", "messages", ("messages", 0, "token_count"), "1e400"),
    ("`10**400` as an int timestamp", "detail", ("started_at",), str(10**400)),
    ("`10**400` as a row id", "messages", ("messages", 0, "id"), str(10**400)),
    ('`"12"` as a row id', "messages", ("messages", 0, "id"), '"12"'),
    ('`"12"` as `pagination.returned`', "messages", ("pagination", "returned"), '"12"'),
    ("`true` as a row id", "messages", ("messages", 0, "id"), "true"),
    ("`12.0` as a row id", "messages", ("messages", 0, "id"), "12.0"),
    ("`true` as the `active` flag (0/1 or bool)", "messages", ("messages", 0, "active"), "true"),
    ('`"1"` as the `active` flag', "messages", ("messages", 0, "active"), '"1"'),
    ("missing `role` in a row", "messages", ("messages", 0, "role"), DROP),
    ("missing `pagination`", "messages", ("pagination",), DROP),
    ("missing `pagination.returned`", "messages", ("pagination", "returned"), DROP),
    ("missing `pagination.order` (legacy backend)", "messages", ("pagination", "order"), DROP),
    ("missing `parent_session_id` (required, nullable)", "detail", ("parent_session_id",), DROP),
    ("`null` as a row `session_id`", "messages", ("messages", 0, "session_id"), "null"),
    ("unknown keys in envelope, pagination, row", "messages", ("messages", 0, "new_column"), '{"x": [1]}'),
    ("`pagination` is a list", "messages", ("pagination",), "[]"),
    ("`messages` is an object", "messages", ("messages",), "{}"),
    ("a row is a string", "messages", ("messages", 0), '"row"'),
    ("a row `role` is a number", "messages", ("messages", 0, "role"), "5"),
    ("`tool_calls` is a number (kept as sent)", "messages", ("messages", 0, "tool_calls"), "5"),
    ("`path` holds a number", "latest-descendant", ("path",), "[1]"),
    ('`changed` is `"yes"`', "latest-descendant", ("changed",), '"yes"'),
    ("the body is a list", "detail", (), "[]"),
]


def mutated(endpoint: str, path: tuple[Any, ...], token: Any) -> bytes:
    body = json.loads(json.dumps(BASES[endpoint]))
    if endpoint == "messages" and token != DROP and path[-1] == "new_column":
        body["new_field"] = 1
        body["pagination"]["total"] = 1
    if not path:
        return str(token).encode()
    parent = body
    for step in path[:-1]:
        parent = parent[step]
    if token is DROP:
        del parent[path[-1]]
    else:
        parent[path[-1]] = HOLE
    return json.dumps(body).replace(json.dumps(HOLE), str(token)).encode()


def outcome(decode: Callable[[bytes], Any], raw: bytes, path: tuple[Any, ...]) -> tuple[bool, str]:
    """(accepted, short note): the value the model holds, or the error it raised."""
    try:
        model = decode(raw)
    except Exception as exc:  # the table reports whatever each decoder raises
        text = str(exc).replace("`", "'").replace("|", "/")
        text = text if len(text) <= 48 else text[:45] + "..."
        return False, f"rejects: {type(exc).__name__}: {text}"
    value: Any = model
    for step in path:
        value = value[step] if isinstance(step, int) else getattr(value, step, "(not kept)")
    if path and path[-1] == "order":
        value = f"legacy={model.legacy}"
    shown = repr(value)
    return True, "accepts" + ("" if not path else f": {shown if len(shown) <= 30 else shown[:27] + '...'}")


# -- the same values from every implementation -----------------------------------------------------


def normal(obj: Any) -> Any:
    """A model as plain values a caller reads: fields and properties, absent-vs-null for the
    keys whose presence matters, never the bookkeeping sets."""
    import msgspec

    if isinstance(obj, list):
        return [normal(item) for item in obj]
    if dataclasses.is_dataclass(obj) or isinstance(obj, msgspec.Struct):
        names = (
            [f.name for f in dataclasses.fields(obj)]
            if dataclasses.is_dataclass(obj)
            else list(obj.__struct_fields__)
        )
        out: dict[str, Any] = {}
        for name in names:
            if name in ("model_fields_set", "sent_keys", "is_default_profile"):
                continue
            value = getattr(obj, name)
            out[name] = None if value is msgspec.UNSET else normal(value)
        for presence in ("display_content", "display_reasoning"):
            if presence in out:
                out[f"{presence} sent"] = (
                    presence in sent(obj)
                    if dataclasses.is_dataclass(obj)
                    else getattr(obj, presence) is not msgspec.UNSET
                )
        for prop in ("legacy", "has_model_config", "looks_current"):
            if hasattr(obj, prop):
                out[prop] = getattr(obj, prop)
        return out
    return obj


def parity(decode: dict[str, dict[str, Callable[[bytes], Any]]]) -> list[str]:
    """Decode every captured body with all three; report any difference."""
    problems: dict[str, int] = {}
    count = 0
    for backend, endpoint, body in exchanges():
        raw = json.dumps(body).encode()
        models = {key: decode[key][endpoint](raw) for key in decode}
        count += 1
        values = {key: normal(model) for key, model in models.items()}
        found = []
        if values["before"] != values["after"]:
            found.append(f"{backend} {endpoint}: after differs from before")
        if values["msgspec"] != values["after"]:
            found.append(f"{backend} {endpoint}: msgspec differs from after")
        old, new = sent(models["before"]), sent(models["after"])
        if endpoint == "detail":  # before: three synthetic names; after: the wire key `model_config`
            old, new = old - SYNTHETIC, new - {"model_config"}
        if old != new:
            found.append(f"{backend} {endpoint}: recorded keys differ: {sorted(old ^ new)}")
        for problem in found:
            problems[problem] = problems.get(problem, 0) + 1
    verdict = "the same values" if not problems else "DIFFERENT values"
    return [f"{count} captured bodies (details, pages, hints) decoded by all three: {verdict}."] + [
        f"- {p} ({n}x)" for p, n in problems.items()
    ]


# -- JSON Schema: msgspec.json.schema against schemas.py (pydantic) --------------------------------


def schema_comparison() -> list[str]:
    import jsonschema
    import msgspec

    from hermes_task.core import documents as model
    from hermes_task.core.documents import TranscriptDoc
    from hermes_task.render import schemas

    ours = schemas.schema("transcript")
    theirs = msgspec.json.schema(TranscriptDoc)
    ours_defs = dict(ours.get("$defs", {}))
    ours_defs["TranscriptDoc"] = {k: v for k, v in ours.items() if k not in ("$defs", "$schema", "$id")}
    theirs_defs = theirs["$defs"]
    optional_there = []
    reordered = []
    closed_here = closed_there = described_here = described_there = 0
    enums_sorted = 0
    for name, here in ours_defs.items():
        there = theirs_defs.get(name, {})
        gap = sorted(set(here.get("required", [])) - set(there.get("required", [])))
        optional_there += [f"{name}.{field}" for field in gap]
        if list(here.get("properties", {})) != list(there.get("properties", {})):
            reordered.append(name)
        closed_here += here.get("additionalProperties") is False
        closed_there += there.get("additionalProperties") is False
        for prop, spec in here.get("properties", {}).items():
            described_here += "description" in spec
            other = there.get("properties", {}).get(prop, {})
            described_there += "description" in other
            if "enum" in spec and spec["enum"] != other.get("enum"):
                enums_sorted += 1
    events = "generated"
    try:
        msgspec.json.schema(schemas._TARGETS["events"][0])
    except TypeError as exc:
        events = f"fails: `TypeError: {str(exc).split(' - ')[0]}`"

    doc = model.to_json_dict(
        model.TranscriptDoc(
            task=model.TaskInfo(root_id="a", tip_id="a", lineage=["a"]),
            backend=model.BackendInfo(contract="current"),
            rows=[model.Row(id=1, session_id="a", role="user", text="hi")],
            coverage=model.Coverage(unique_rows=1, has_older=False, at_start=True),
        )
    )
    probes = {
        "a real document": doc,
        "`warnings` left out": {k: v for k, v in doc.items() if k != "warnings"},
        "an unknown top-level key": {**doc, "extra": 1},
        "a row without `timestamp`": {
            **doc,
            "rows": [{k: v for k, v in doc["rows"][0].items() if k != "timestamp"}],
        },
    }
    check_ours = jsonschema.Draft202012Validator(ours)
    check_theirs = jsonschema.Draft202012Validator(theirs)
    lines = [
        "| `transcript` schema | schemas.py (pydantic) | `msgspec.json.schema(TranscriptDoc)` |",
        "|---|---|---|",
        f"| objects (`$defs` + root) | {len(ours_defs)} | {len(theirs_defs)} |",
        f"| fields with a default marked `required` (every key is always printed) | all | none: {len(optional_there)} fields optional ({', '.join(optional_there[:4])}, ...) |",
        f"| objects closed with `additionalProperties: false` | {closed_here} | {closed_there} |",
        f"| property descriptions (from `field(metadata=...)`) | {described_here} | {described_there} (msgspec reads `Annotated[..., Meta(description=...)]`, not dataclass metadata) |",
        f"| property order as declared | yes | no in {len(reordered)} objects (required fields first) |",
        f"| `Literal` enums in declared order | yes | no in {enums_sorted} properties (sorted) |",
        "| per-property `title` | yes | no |",
        "| root | inline object | `$ref` into `$defs` |",
        f"| `events` (a union of five dataclasses, `type` discriminator) | generated (`oneOf` + `discriminator`) | {events} |",
    ]
    for label, probe in probes.items():
        lines.append(f"| validates {label} | {check_ours.is_valid(probe)} | {check_theirs.is_valid(probe)} |")
    return lines


# -- report ------------------------------------------------------------------------------------------


def machine(load_before: float) -> str:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import msgspec

    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return (
        f"Python {platform.python_version()}, msgspec {msgspec.__version__}, {cpu}, {os.cpu_count()} cores; "
        f"commit {commit}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-minute load average "
        f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (other work on the machine "
        "slows every candidate alike, sample by sample, but widens the ranges)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="samples per figure (default 21)")
    parser.add_argument("--before", default=BEFORE, help=f"revision of the old wire.py (default {BEFORE})")
    args = parser.parse_args()
    try:
        import msgspec  # noqa: F401
    except ImportError:
        raise SystemExit("msgspec is not installed: .venv/bin/python -m pip install msgspec") from None

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-wire-") as folder:
        scratch = Path(folder)
        paths = stage(scratch, args.before)
        sys.path.insert(0, folder)
        modules = {key: importlib.import_module(f"wire_{key}") for key in paths}
        decode = decoders(modules)
        imports = import_times(paths, args.runs)
        raw500, about500 = page(500)
        raw50, about50 = page(50)
        d500 = decode_times(modules, decode, raw500, args.runs)
        d50 = decode_times(modules, decode, raw50, args.runs)
        loc = {key: lines_of_code(path) for key, path in paths.items()}
        results = {
            case: {
                key: outcome(decode[key][endpoint], mutated(endpoint, path, token), path) for key in decode
            }
            for case, endpoint, path, token in CASES
        }
        same = parity(decode)

    keys = list(NAMES)
    out = [
        f"Measured by `bench/bench_wire.py --runs {args.runs}` (before = `{args.before}`): {machine(load_before)}.",
        "Times are medians in ms (min–max) of samples alternating between the candidates.",
        "",
        "| | " + " | ".join(NAMES.values()) + " |",
        "|---|" + "---|" * len(keys),
    ]
    for context, stats in imports.items():
        out.append(
            f"| import, fresh interpreter, {context} | " + " | ".join(stats[k].ms() for k in keys) + " |"
        )
    for label, stats, about in (("500-row", d500, about500), ("50-row", d50, about50)):
        out.append(
            f"| decode a {label} page ({about}); hand-written: `json.loads` + models, msgspec: one pass | "
            + " | ".join(stats[k].ms() for k in keys)
            + " |"
        )
        out.append(
            f"| {label}: models only, from the decoded dict (`json.loads` alone: {stats['json.loads alone'].ms()}) | "
            f"{stats['before: models only'].ms()} | {stats['after: models only'].ms()} | "
            f"`msgspec.convert`: {stats['msgspec: convert from the dict'].ms()} |"
        )
    older = {k: d500[k].median * 40 * 1e3 for k in keys}
    out.append(
        "| `older --all` of 20,000 rows: 40 such pages (computed) | "
        + " | ".join(f"{older[k]:.0f}" for k in keys)
        + " |"
    )
    out.append("| lines (physical / code) | " + " | ".join(f"{loc[k][0]} / {loc[k][1]}" for k in keys) + " |")
    out.append("| new dependency | none | none | msgspec (compiled C extension, wheels per platform) |")
    rejected = {k: sum(not results[c][k][0] for c in results) for k in keys}
    out.append(
        f"| of the {len(CASES)} cases below, rejected | " + " | ".join(str(rejected[k]) for k in keys) + " |"
    )
    out += ["", "| case | " + " | ".join(NAMES.values()) + " |", "|---|" + "---|" * len(keys)]
    for case, by_key in results.items():
        cells = []
        for key in keys:
            accepted, note = by_key[key]
            differs = key != "before" and accepted != by_key["before"][0]
            cells.append(f"**{note}**" if differs else note)
        out.append(f"| {case} | " + " | ".join(cells) + " |")
    out += ["", "Bold: accepts where `wire.py before` rejects, or the reverse.", "", *same, ""]
    out += schema_comparison()
    print("\n".join(out))


if __name__ == "__main__":
    main()
