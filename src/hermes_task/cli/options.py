"""What a command is given: the `Environment` it runs in (a test passes its own as typer's
context object), the options every reading command shares, declared once (`with_common`), the
`Common` they fill, and the options and arguments several commands take. Invariant: importing
this module imports typer and msgspec only (root `--help` imports it).
"""

from __future__ import annotations

import inspect
import os
import sys
import time
import typing
from collections.abc import Callable, Mapping
from contextlib import closing
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, TextIO, TypeVar

import msgspec
import typer
from msgspec import Struct

if TYPE_CHECKING:
    import httpx


def stream_isatty(stream: Any) -> bool:
    """Whether `stream` is a terminal; a closed or fake stream is not."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Environment(Struct):
    """What a command may touch of the outside world; None: the real one as it is when used
    (CliRunner swaps `sys.stdout` per invocation; `sleep`: the idle sleep that watches stdout)."""

    variables: Mapping[str, str] | None = None
    stdout_stream: TextIO | None = None
    stderr_stream: TextIO | None = None
    isatty: Callable[[Any], bool] = stream_isatty
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] | None = None
    transport: httpx.BaseTransport | None = None

    @property
    def environ(self) -> Mapping[str, str]:
        return self.variables if self.variables is not None else dict(os.environ)

    @property
    def stdout(self) -> TextIO:
        return self.stdout_stream if self.stdout_stream is not None else sys.stdout

    @property
    def stderr(self) -> TextIO:
        return self.stderr_stream if self.stderr_stream is not None else sys.stderr

    def write_stdout(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def write_stderr(self, text: str) -> None:  # flushed: an NDJSON consumer reads line by line
        self.stderr.write(text)
        self.stderr.flush()


def current(ctx: Any) -> Environment:
    """The Environment of the running command: typer's context object, else the real one."""
    obj = ctx.find_root().obj if ctx is not None else None
    return obj if isinstance(obj, Environment) else Environment()


# The options that name the dashboard and the credentials (`settings.resolve` takes them all).
CONNECTION = ("url", "gateway", "profile", "token_file", "username", "password_file", "request_timeout")
ColorMode = StrEnum("ColorMode", "auto always never")
OutputFormat = StrEnum("OutputFormat", "text json markdown")
# The roles `--role` names (a test keeps them `core.rowfilter.ROLES`).
RoleName = StrEnum("RoleName", "user assistant tool system")


class Common(Struct, frozen=True):
    """What every reading command shares: connection, output, and the environment it runs in."""

    env: Environment
    url: str | None = None
    gateway: str | None = None
    profile: str | None = None
    token_file: str | None = None
    username: str | None = None
    password_file: str | None = None
    request_timeout: float | None = None
    color: ColorMode = ColorMode.auto
    quiet: bool = False
    debug: bool = False
    json: bool = False
    output_format: OutputFormat = OutputFormat.text  # `json` is `output_format is json`
    pager: bool | None = None
    store: str | None = None
    no_store: bool = False

    @classmethod
    def of(cls, shared: dict[str, Any]) -> Common:
        """The `Common` of a command's `**shared` options; `--json` is `--format json`."""
        picked = dict(shared)
        env = current(picked.pop("typer_context"))
        json_out, chosen = picked.pop("json_out", False), picked.pop("output_format", None)
        if chosen is None:
            chosen = OutputFormat.json if json_out else OutputFormat.text
        elif json_out and chosen is not OutputFormat.json:
            why = f"{chosen.value} disagrees with --json (--json is --format json)"
            raise typer.BadParameter(why, param_hint="'--format'")
        return cls(env=env, json=chosen is OutputFormat.json, output_format=chosen, **picked)


def command_app(**settings: Any) -> typer.Typer:
    """A command's typer app: click's plain help (no rich panels), no `--install-completion`."""
    return typer.Typer(
        rich_markup_mode=None, add_completion=False, pretty_exceptions_enable=False, **settings
    )


def _store_completer(propose: str) -> Callable[[typer.Context, str], list[str]]:
    """A shell completion from the local store the command line names: `core.lineage.<propose>`
    over its newest rows with a parent; `[]` whenever that is not possible. No request."""

    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        from hermes_task import settings  # lazy: completion only (the config file, the store)
        from hermes_task.core import lineage  # lazy: completion only
        from hermes_task.store.sqlite_reader import Store  # lazy: completion only (SQLite)

        try:
            keys = ("url", "gateway", "profile", "store", "no_store")
            given = {k: v for k, v in ctx.params.items() if k in keys}
            resolved = settings.resolve(env=dict(current(ctx).environ), **given)
            if resolved.store is None:
                return []
            with closing(Store(resolved.store)) as store:
                found: list[str] = getattr(lineage, propose)(store.recent_with_parent(), resolved.profile, 50)
            return [sid for sid in found if sid.startswith(incomplete)]
        except Exception:  # StoreUnavailable too: a completion never prints a traceback into the shell
            return []

    return complete


# CHILD_ID: the 50 newest delegated task roots in the store. PARENT_ID: the sessions `parents`
# would propose from it (the parents of its newest delegated children, newest delegation first).
complete_task_id = _store_completer("recent_task_roots")
complete_parent_id = _store_completer("propose_parents")


def complete_gateway(ctx: typer.Context, incomplete: str) -> list[str]:
    from hermes_task.settings import gateway_names  # lazy: the config file, only when a shell completes

    return [name for name in gateway_names(dict(current(ctx).environ)) if name.startswith(incomplete)]


def argument(metavar: str, help: str, complete: Callable[..., list[str]] | None = None) -> Any:
    return typer.Argument(metavar=metavar, help=help, show_default=False, autocompletion=complete)


def seconds(flag: str, **option: Any) -> Any:
    return typer.Option(flag, metavar="S", min=0.0, **option)


def _not_negative(value: int | None) -> int | None:
    if value is not None and value < 0:
        raise typer.BadParameter(f"{value} is below 0 (0 prints no row)")
    return value


ChildId = Annotated[
    str,
    argument(
        "CHILD_ID",
        "The task's root session id (its first durable reference; `recover PARENT` prints it).",
        complete_task_id,
    ),
]
ParentId = Annotated[
    str,
    argument(
        "PARENT_ID",
        "The parent chat's session id, exactly as shown (`hermes-task parents` lists the newest).",
        complete_parent_id,
    ),
]
Tail = Annotated[
    int | None,
    typer.Option(
        "--tail",
        metavar="N",
        callback=_not_negative,
        help="Print only the last N rows (follow: of those already there, per task with --parent; 0: only new ones).",
    ),
]
Roles = Annotated[
    list[RoleName] | None,
    typer.Option(
        "--role",
        metavar="ROLE",
        help="Print only rows of ROLE: user, assistant, tool or system (repeatable).",
        case_sensitive=False,
    ),
]
Tips = Annotated[
    list[str] | None,
    typer.Option(
        "--tip",
        metavar="ID",
        help="Untrusted candidate for a newer segment; used only once its lineage is proven (repeatable).",
    ),
]
Reasoning = Annotated[
    bool, typer.Option("--reasoning", help="Show reasoning expanded (JSON always carries it).")
]
Full = Annotated[
    bool,
    typer.Option(
        "--full", help="Show rows in full: compaction summaries and status rows, uncut tool output."
    ),
]
Utc = Annotated[bool, typer.Option("--utc", help="Times in UTC (default: local time with its offset).")]
Interval = Annotated[
    float, typer.Option("--interval", metavar="S", min=0.5, help="Seconds between reads (at least 0.5).")
]
NoHint = Annotated[bool, typer.Option("--no-hint", help="Don't ask /latest-descendant for a newer segment.")]
Header = Annotated[bool, typer.Option("--header", help="Piped output: print the column names first.")]
Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="No warnings that every command repeats (legacy_backend, store_unavailable); JSON keeps them.",
    ),
]


_FIELDS = {field.name: field for field in msgspec.structs.fields(Common)}


def _option(
    name: str, *flags: str, kind: Any = None, default: Any = None, **option: Any
) -> tuple[str, Any, Any]:
    """A shared option as (parameter name, `Annotated` type, default), by default the type and
    default of its `Common` field; its flag `--NAME` by default."""
    if kind is None:
        kind, default = _FIELDS[name].type, _FIELDS[name].default
    return name, Annotated[kind, typer.Option(*flags or ("--" + name.replace("_", "-"),), **option)], default


def _connection(name: str, metavar: str, help: str, **extra: Any) -> tuple[str, Any, Any]:
    return _option(name, metavar=metavar, help=help, **extra)


# In the order --help lists them, after --json, --format and --pager.
_SHARED = [
    _connection(
        "url", "URL", "Dashboard base URL [env: HERMES_DASHBOARD_URL; default: http://127.0.0.1:9119]."
    ),
    _connection(
        "gateway",
        "NAME",
        "A named [gateways.NAME] entry of the config file [env: HERMES_TASK_GATEWAY].",
        autocompletion=complete_gateway,
    ),
    _connection(
        "profile", "NAME", "Exact Hermes profile, checked on every response [env: HERMES_TASK_PROFILE]."
    ),
    _connection(
        "token_file",
        "PATH",
        "File holding the session token [env: HERMES_DASHBOARD_TOKEN holds the token itself].",
    ),
    _connection(
        "username", "NAME", "Password-gated dashboards: the login name [env: HERMES_DASHBOARD_USERNAME]."
    ),
    _connection(
        "password_file", "PATH", "File holding the password [env: HERMES_DASHBOARD_PASSWORD holds it itself]."
    ),
    _connection("request_timeout", "S", "Per-request timeout in seconds [default: 10].", min=0.001),
    _connection(
        "store",
        "PATH",
        "The dashboard's local Hermes store (state.db), read-only, to find child and newer-segment "
        "ids (proven over HTTP) [env: HERMES_TASK_STORE; default: the profile's store, loopback only].",
    ),
    _option("no_store", help="Never read the local Hermes store."),
    _option("color", help="Colour on stdout and stderr [env: NO_COLOR, FORCE_COLOR].", case_sensitive=False),
    ("quiet", Quiet, False),
    _option(
        "debug",
        help="Request lines and tracebacks on stderr; never content or secrets [env: HERMES_TASK_DEBUG].",
    ),
]
_FORMAT = _option(
    "output_format",
    "--format",
    kind=OutputFormat | None,
    help="text (the default), json (the same as --json) or markdown (a report for GitHub and CI).",
    case_sensitive=False,
)
_PAGER = _option(
    "pager",
    "--pager/--no-pager",
    help="Page the output on a terminal (default: only when taller than the screen; "
    "env: HERMES_TASK_PAGER, PAGER, else less -FRX).",
)

F = TypeVar("F", bound=Callable[..., Any])


def with_common(
    *, pager: bool = True, events: str | None = None, formats: bool = False, json: bool = True
) -> Callable[[F], F]:
    """Append the shared options to the command's signature (it takes them as `**shared`):
    --json (worded as NDJSON `events` of that schema) unless not `json`, `--format` with
    `formats`, --pager/--no-pager with `pager`. `--timeout` is never shared: it bounds a run."""

    def decorate(func: F) -> F:
        hints = typing.get_type_hints(func, include_extras=True)
        own = [
            p.replace(annotation=hints[p.name])
            for p in inspect.signature(func).parameters.values()
            if p.kind is not p.VAR_KEYWORD
        ]
        json_help = "One JSON document on stdout (schema: hermes-task schema)."
        if events is not None:
            json_help = f"NDJSON events on stdout, one per line (schema: hermes-task schema {events})."
        shared = [_option("json_out", "--json", kind=bool, default=False, help=json_help)] if json else []
        shared += [_FORMAT] if formats else []
        shared += [_PAGER] if pager else []
        keyword = inspect.Parameter.KEYWORD_ONLY
        params = [
            *own,
            *(inspect.Parameter(n, keyword, default=d, annotation=a) for n, a, d in shared + _SHARED),
            inspect.Parameter("typer_context", keyword, annotation=typer.Context),
        ]
        # typer reads a command's parameters from `inspect.signature`, which honours
        # `__signature__` (PEP 362): typer calls the command itself, no wrapper frame between.
        func.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        return func

    return decorate
