"""Wire decoding, side by side: the hand-written module of main before issue 27, msgspec (the
package's `core/wire.py`) and pydantic (`bench/wire_pydantic.py`).

    bash tools/bootstrap.sh    # pydantic comes with the `bench` extra: measurement only, not a dependency
    .venv/bin/python -m bench.bench_wire [--runs N] [--before REV]

The hand-written `core/wire.py` is read from `--before` (default: the merge-base of this
branch and main before issue 27, `461e68f`) with its whole package (`git archive`), renamed
`hermes_task_old` so it imports beside the current package: its models are built by that
revision's `records` machinery, as they were. Measured, alternating between the candidates
(ABC CBA ..., medians with min-max): import time in a fresh interpreter (the wire module after
`import httpx, hermes_task.cli`, and every module of the `show --json` path: the client, the
reader, the wire models and the JSON writer); decode time of a 50-row and a 500-row
`/messages` page built from the captured fixtures (hand-written: `json.loads` then the
models, as its client did; msgspec and pydantic: one pass from bytes); lines of code; what
each accepts and rejects (the 30 cases of docs/decisions.md, entry 1); and that all three
decode every captured body to the same values. Nothing here asserts a time: the tables go to
docs/decisions.md.
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
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.support.wire_samples import BASES, DROP, spliced

REPO = Path(__file__).resolve().parent.parent
FIXTURES = [REPO / "fixtures" / backend / "delegated_task_dashboard.json" for backend in ("iot", "official")]
PYDANTIC = REPO / "bench" / "wire_pydantic.py"
NEW = REPO / "src" / "hermes_task" / "core" / "wire.py"
# main before issue 27 (the branch point of the msgspec work)
BEFORE = "461e68f"
NAMES = {"hand": "hand-written (before)", "msgspec": "msgspec (now)", "pydantic": "pydantic v2"}
ENDPOINTS = ("messages", "detail", "latest-descendant")


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


def stage_old(scratch: Path, before: str) -> Path:
    """The package at `before`, as `scratch/old/hermes_task_old` (every import renamed)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", before, "src/hermes_task"], capture_output=True, check=True
    ).stdout
    root = scratch / "old"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    package = root / "hermes_task_old"
    (root / "src" / "hermes_task").rename(package)
    for path in package.rglob("*.py"):
        path.write_text(path.read_text().replace("hermes_task", "hermes_task_old"))
    return root


def decoders(old: ModuleType, pyd: ModuleType) -> dict[str, dict[str, Callable[[bytes], Any]]]:
    """`{implementation: {endpoint: bytes -> model}}`, the way each client calls it."""
    from hermes_task.core import wire

    def hand(model: Any) -> Callable[[bytes], Any]:
        return lambda raw: model.from_json(json.loads(raw))

    def new(model: Any) -> Callable[[bytes], Any]:
        return lambda raw: wire.decode(raw, model)

    return {
        "hand": dict(
            zip(
                ENDPOINTS, map(hand, (old.MessagesPage, old.SessionDetail, old.LatestDescendant)), strict=True
            )
        ),
        "msgspec": dict(
            zip(
                ENDPOINTS,
                map(new, (wire.MessagesPage, wire.SessionDetail, wire.LatestDescendant)),
                strict=True,
            )
        ),
        "pydantic": {
            "messages": pyd.decode_page,
            "detail": pyd.decode_detail,
            "latest-descendant": pyd.decode_descendant,
        },
    }


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

# What each candidate imports, after `import httpx, json` and the CLI package.
WIRE_IMPORT = {
    "hand": ("hermes_task_old.cli", "import hermes_task_old.core.wire"),
    "msgspec": ("hermes_task.cli", "import hermes_task.core.wire"),
    "pydantic": ("hermes_task.cli", "import wire_pydantic"),
}
# The modules of the `show --json` path below typer (client, reader, models, JSON writer).
SHOW_PATH = {
    "hand": (
        "hermes_task_old.cli",
        "import hermes_task_old.cli.run_show, hermes_task_old.dashboard.client, "
        "hermes_task_old.reading.reader, hermes_task_old.render.jsonout",
    ),
    "msgspec": (
        "hermes_task.cli",
        "import hermes_task.cli.session, hermes_task.dashboard.client, "
        "hermes_task.reading.reader, hermes_task.render.jsontext",
    ),
}


def import_times(old_root: Path, runs: int) -> dict[str, dict[str, Stats]]:
    """Seconds to import each candidate's modules in a fresh interpreter that has loaded
    httpx and the CLI package (what a reading command has before its first response)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    paths = [str(old_root), str(REPO / "src"), str(REPO / "bench")]
    out: dict[str, dict[str, Stats]] = {}
    for context, table in (
        ("the wire module, after `import httpx, hermes_task.cli`", WIRE_IMPORT),
        ("the `show --json` path (client, reader, models, JSON writer), after the same", SHOW_PATH),
    ):

        def sample(key: str, table: dict[str, tuple[str, str]] = table) -> float:
            cli, work = table[key]
            code = (
                f"import sys; sys.path[:0] = {paths!r}; import httpx, json, {cli}; import time; "
                f"t = time.perf_counter(); {work}; print(time.perf_counter() - t)"
            )
            proc = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            )
            return float(proc.stdout)

        out[context] = alternating({key: functools.partial(sample, key) for key in table}, runs, warmup=2)
    return out


def decode_times(
    decode: dict[str, dict[str, Callable[[bytes], Any]]], raw: bytes, runs: int
) -> dict[str, Stats]:
    """Seconds per decode of the page `raw` by each candidate."""
    loops: int = max(1, 20_000 // json.loads(raw)["pagination"]["returned"])

    def timer(fn: Callable[[bytes], Any]) -> Callable[[], float]:
        def sample() -> float:
            gc.collect()
            started = time.perf_counter()
            for _ in range(loops):
                fn(raw)
            return (time.perf_counter() - started) / loops

        return sample

    return alternating({key: timer(decode[key]["messages"]) for key in NAMES}, runs)


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
    """The endpoint's sample body with `token` spliced in at `path`; the unknown-keys case puts
    unknown keys in the envelope and the pagination too, as its label says."""
    body = json.loads(json.dumps(BASES[endpoint]))
    if endpoint == "messages" and token is not DROP and path[-1] == "new_column":
        body["new_field"] = 1
        body["pagination"]["total"] = 1
    return spliced(body, path, token)


def outcome(decode: Callable[[bytes], Any], raw: bytes, path: tuple[Any, ...]) -> tuple[bool, str]:
    """(accepted, short note): the value the model holds, or the error it raised."""
    try:
        model = decode(raw)
    except Exception as exc:  # the table reports whatever each decoder raises
        text = str(exc).splitlines()[0].replace("`", "'").replace("|", "/")
        text = text if len(text) <= 48 else text[:45] + "..."
        return False, f"rejects: {type(exc).__name__}: {text}"
    value: Any = model
    for step in path:
        if step == "pagination":
            step = "pagination_sent" if hasattr(value, "pagination_sent") else step
        value = value[step] if isinstance(step, int) else getattr(value, step, "(not kept)")
    if path and path[-1] in ("order", "pagination"):
        value = f"ordered={model.ordered}"
    shown = repr(value)
    return True, "accepts" + ("" if not path else f": {shown if len(shown) <= 30 else shown[:27] + '...'}")


# -- the same values from every implementation -----------------------------------------------------

PRESENCE = ("display_content", "display_reasoning")


def normal(obj: Any) -> Any:
    """A model as plain values a caller reads: fields, the presence of the keys whose
    presence matters, and the properties the reading code asks."""
    import msgspec

    if isinstance(obj, list):
        return [normal(item) for item in obj]
    names: list[str] = []
    if dataclasses.is_dataclass(obj):
        names = [f.name for f in dataclasses.fields(obj)]
    elif isinstance(obj, msgspec.Struct):
        names = list(obj.__struct_fields__)
    elif hasattr(type(obj), "model_fields"):
        names = list(type(obj).model_fields)
    else:
        return obj
    out: dict[str, Any] = {}
    for name in names:
        if name in ("sent_keys", "is_default_profile", "model_config_sent", "pagination_sent"):
            continue
        value = getattr(obj, name)
        out[name] = None if value is msgspec.UNSET else normal(value)
    for presence in PRESENCE:
        if presence in out:
            value = getattr(obj, presence)
            if dataclasses.is_dataclass(obj):
                out[f"{presence} sent"] = presence in getattr(obj, "sent_keys")  # noqa: B009 (not typed)
            elif isinstance(obj, msgspec.Struct):
                out[f"{presence} sent"] = value is not msgspec.UNSET
            else:
                out[f"{presence} sent"] = presence in obj.model_fields_set
    for prop in ("paginated", "ordered", "has_model_config", "looks_current", "model_config_raw"):
        if hasattr(obj, prop):
            out[prop] = getattr(obj, prop)
    if hasattr(obj, "paginated"):
        out["pagination"] = normal(obj.pagination) if obj.paginated else None
    return out


def parity(decode: dict[str, dict[str, Callable[[bytes], Any]]]) -> list[str]:
    """Decode every captured body with all three; report any difference from the hand-written."""
    problems: dict[str, int] = {}
    count = 0
    for backend, endpoint, body in exchanges():
        raw = json.dumps(body).encode()
        values = {key: normal(decode[key][endpoint](raw)) for key in NAMES}
        count += 1
        for key in ("msgspec", "pydantic"):
            if values[key] != values["hand"]:
                problem = f"{backend} {endpoint}: {key} differs from the hand-written"
                problems[problem] = problems.get(problem, 0) + 1
    verdict = "the same values" if not problems else "DIFFERENT values"
    return [f"{count} captured bodies (details, pages, hints) decoded by all three: {verdict}."] + [
        f"- {p} ({n}x)" for p, n in problems.items()
    ]


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
    import pydantic

    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return (
        f"Python {platform.python_version()}, msgspec {msgspec.__version__}, pydantic {pydantic.VERSION}, {cpu}, {os.cpu_count()} cores; "
        f"commit {commit}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-minute load average "
        f"{load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (other work on the machine "
        "slows every candidate alike, sample by sample, but widens the ranges)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="samples per figure (default 21)")
    parser.add_argument(
        "--before", default=BEFORE, help=f"revision of the hand-written wire (default {BEFORE})"
    )
    args = parser.parse_args()
    try:
        import pydantic  # noqa: F401
    except ImportError:
        raise SystemExit("pydantic is not installed: .venv/bin/python -m pip install pydantic") from None

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-wire-") as folder:
        old_root = stage_old(Path(folder), args.before)
        sys.path[:0] = [str(old_root), str(REPO / "bench")]
        old = importlib.import_module("hermes_task_old.core.wire")
        pyd = importlib.import_module("wire_pydantic")
        decode = decoders(old, pyd)
        imports = import_times(old_root, args.runs)
        raw500, about500 = page(500)
        raw50, about50 = page(50)
        d500 = decode_times(decode, raw500, args.runs)
        d50 = decode_times(decode, raw50, args.runs)
        loc = {
            "hand": lines_of_code(old_root / "hermes_task_old" / "core" / "wire.py"),
            "msgspec": lines_of_code(NEW),
            "pydantic": lines_of_code(PYDANTIC),
        }
        results = {
            case: {key: outcome(decode[key][endpoint], mutated(endpoint, path, token), path) for key in NAMES}
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
            f"| import, fresh interpreter: {context} | "
            + " | ".join(stats[k].ms() if k in stats else "–" for k in keys)
            + " |"
        )
    for label, stats, about in (("500-row", d500, about500), ("50-row", d50, about50)):
        out.append(
            f"| decode a {label} page ({about}); hand-written: `json.loads` + models, the others one pass | "
            + " | ".join(stats[k].ms() for k in keys)
            + " |"
        )
    out.append(
        "| `older --all` of 20,000 rows: 40 such pages (computed) | "
        + " | ".join(f"{d500[k].median * 40e3:.0f}" for k in keys)
        + " |"
    )
    out.append("| lines (physical / code) | " + " | ".join(f"{loc[k][0]} / {loc[k][1]}" for k in keys) + " |")
    rejected = {k: sum(not results[c][k][0] for c in results) for k in keys}
    out.append(
        f"| of the {len(CASES)} cases below, rejected | " + " | ".join(str(rejected[k]) for k in keys) + " |"
    )
    out += ["", "| case | " + " | ".join(NAMES.values()) + " |", "|---|" + "---|" * len(keys)]
    for case, by_key in results.items():
        base = by_key["hand"][0]
        cells = [(f"**{note}**" if ok != base else note) for ok, note in (by_key[k] for k in keys)]
        out.append(f"| {case} | " + " | ".join(cells) + " |")
    out += ["", "Bold: accepts where the hand-written rejects, or the reverse.", "", *same]
    print("\n".join(out))


if __name__ == "__main__":
    main()
