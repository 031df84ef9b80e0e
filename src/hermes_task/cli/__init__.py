"""The typer application: shared options, wiring and the one mapping from failures to exit codes.

The `cli` package is the only importer of typer (a test checks it); each command lives in a
module of its own and registers itself on `app`. Heavy modules (httpx, pydantic, rich) are
imported inside commands so that `--help` and `--version` start fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from hermes_task import __version__

if TYPE_CHECKING:
    from rich.console import Console

    from hermes_task.core.documents import Row
    from hermes_task.dashboard.client import DashboardClient
    from hermes_task.failures import HermesError
    from hermes_task.settings import Settings


class ColorMode(StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


COMMAND_ORDER = ("show", "follow", "older", "recover", "completion", "schema", "config")


class _Group(typer.core.TyperGroup):
    """Commands listed in the order a user meets them, not the order modules load."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {name: i for i, name in enumerate(COMMAND_ORDER)}
        return sorted(names, key=lambda name: rank.get(name, len(rank)))


app = typer.Typer(
    name="hermes-task",
    cls=_Group,
    help=(
        "See what Hermes Agent delegated subagent tasks did and are doing, read-only, "
        "over the Hermes dashboard's HTTP API."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

CONN = "Connection"
OUT = "Output"

Url = Annotated[
    str | None,
    typer.Option(
        "--url",
        metavar="URL",
        help="Dashboard base URL [env: HERMES_DASHBOARD_URL; default: http://127.0.0.1:9119].",
        rich_help_panel=CONN,
        show_default=False,
    ),
]


def _complete_gateway(incomplete: str) -> list[str]:
    """Shell completion of --gateway: the gateway names of the config file."""
    from hermes_task.settings import gateway_names

    return [name for name in gateway_names(os.environ) if name.startswith(incomplete)]


Gateway = Annotated[
    str | None,
    typer.Option(
        "--gateway",
        metavar="NAME",
        help="A named [gateways.NAME] entry of the config file [env: HERMES_TASK_GATEWAY].",
        rich_help_panel=CONN,
        show_default=False,
        autocompletion=_complete_gateway,
    ),
]
Profile = Annotated[
    str | None,
    typer.Option(
        "--profile",
        metavar="NAME",
        help="Exact Hermes profile, checked on every response [env: HERMES_TASK_PROFILE].",
        rich_help_panel=CONN,
        show_default=False,
    ),
]
TokenFile = Annotated[
    str | None,
    typer.Option(
        "--token-file",
        metavar="PATH",
        help="File holding the session token [env: HERMES_DASHBOARD_TOKEN holds the token itself].",
        rich_help_panel=CONN,
        show_default=False,
    ),
]
Username = Annotated[
    str | None,
    typer.Option(
        "--username",
        metavar="NAME",
        help="Password-gated dashboards: the login name [env: HERMES_DASHBOARD_USERNAME].",
        rich_help_panel=CONN,
        show_default=False,
    ),
]
PasswordFile = Annotated[
    str | None,
    typer.Option(
        "--password-file",
        metavar="PATH",
        help="File holding the password [env: HERMES_DASHBOARD_PASSWORD holds it itself].",
        rich_help_panel=CONN,
        show_default=False,
    ),
]
RequestTimeout = Annotated[
    float | None,
    typer.Option(
        "--request-timeout",
        metavar="S",
        help="Per-request timeout in seconds [default: 10].",
        rich_help_panel=CONN,
        show_default=False,
        min=0.001,
    ),
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        metavar="S",
        help="Per-request timeout in seconds (same as --request-timeout).",
        rich_help_panel=CONN,
        show_default=False,
        min=0.001,
    ),
]
Color = Annotated[
    ColorMode,
    typer.Option(
        "--color",
        help="Colour on stdout and stderr [env: NO_COLOR, FORCE_COLOR].",
        rich_help_panel=OUT,
        case_sensitive=False,
    ),
]
Debug = Annotated[
    bool,
    typer.Option(
        "--debug",
        help="Request lines and tracebacks on stderr; never content or secrets [env: HERMES_TASK_DEBUG].",
        rich_help_panel=OUT,
    ),
]
Json = Annotated[
    bool,
    typer.Option(
        "--json", help="One JSON document on stdout (schema: hermes-task schema).", rich_help_panel=OUT
    ),
]
Pager = Annotated[
    bool | None,
    typer.Option(
        "--pager/--no-pager",
        help=(
            "Page the output on a terminal (default: only when taller than the screen; "
            "env: HERMES_TASK_PAGER, PAGER, else less -FRX)."
        ),
        rich_help_panel=OUT,
        show_default=False,
    ),
]
Tips = Annotated[
    list[str] | None,
    typer.Option(
        "--tip",
        metavar="ID",
        help="Untrusted candidate for a newer segment; used only once its lineage is proven (repeatable).",
        show_default=False,
    ),
]
NoHint = Annotated[bool, typer.Option("--no-hint", help="Don't ask /latest-descendant for a newer segment.")]
ChildId = Annotated[
    str,
    typer.Argument(
        metavar="CHILD_ID",
        help="The task's root session id (its first durable reference).",
        show_default=False,
    ),
]


@dataclass
class Options:
    """What every command shares: connection, output and environment."""

    url: str | None = None
    gateway: str | None = None
    profile: str | None = None
    token_file: str | None = None
    username: str | None = None
    password_file: str | None = None
    request_timeout: float | None = None
    color: ColorMode = ColorMode.auto
    debug: bool = False
    json: bool = False
    pager: bool | None = None


def _env() -> dict[str, str]:
    return dict(os.environ)


def _color(mode: ColorMode, stream: Any, env: dict[str, str]) -> bool:
    if mode is ColorMode.always:
        return True
    if mode is ColorMode.never:
        return False
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def console(opts: Options, *, stderr: bool = False) -> Console:
    from rich.console import Console

    class QuietConsole(Console):
        """rich's own broken-pipe handler exits 1; a closed pipe is a quiet exit 0 here."""

        def on_broken_pipe(self) -> None:
            _quiet_pipe()

    stream = sys.stderr if stderr else sys.stdout
    env = _env()
    color = _color(opts.color, stream, env)
    return QuietConsole(
        file=stream,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        markup=False,
        highlight=False,
        emoji=False,
        soft_wrap=not _isatty(stream),
        width=None if _isatty(stream) else int(env.get("COLUMNS", "100") or 100),
    )


def debug_enabled(opts: Options) -> bool:
    return opts.debug or _env().get("HERMES_TASK_DEBUG", "") not in ("", "0")


def _debug_writer(opts: Options) -> Callable[[str], None] | None:
    if not debug_enabled(opts):
        return None

    def write(line: str) -> None:
        sys.stderr.write(f"debug: {line}\n")
        sys.stderr.flush()

    return write


def resolve_settings(opts: Options, env: dict[str, str]) -> Settings:
    """The effective settings for these options (flag > env > config file > default)."""
    from hermes_task import settings

    return settings.resolve(
        env=env,
        url=opts.url,
        gateway=opts.gateway,
        profile=opts.profile,
        token_file=opts.token_file,
        username=opts.username,
        password_file=opts.password_file,
        request_timeout=opts.request_timeout,
    )


@contextmanager
def connect(opts: Options) -> Iterator[DashboardClient]:
    """A `DashboardClient` with settings and credentials resolved; closed on exit."""
    import httpx

    from hermes_task.dashboard.auth import apply_credentials
    from hermes_task.dashboard.client import DashboardClient

    env = _env()
    resolved = resolve_settings(opts, env)
    http = httpx.Client(
        base_url=resolved.url,
        timeout=resolved.request_timeout,
        follow_redirects=False,
        headers={"User-Agent": f"hermes-task/{__version__}", "Accept": "application/json"},
        trust_env=False,
        # Certificates are verified for https://; a plain-http URL needs no TLS context, and
        # building one loads the CA bundle (about 35 ms of every run).
        verify=resolved.url.startswith("https://"),
    )
    client = DashboardClient(http, profile=resolved.profile, debug=_debug_writer(opts))
    try:
        client.have_credentials = apply_credentials(http, resolved, env)
        yield client
    finally:
        client.close()


def fail(opts: Options, error: HermesError, rows: list[Row] | None = None) -> NoReturn:
    """Report `error` (JSON document on stdout with --json; one line on stderr always) and
    exit with its status. Rows already known are carried in the JSON document."""
    from hermes_task.core.documents import ErrorBody, ErrorDoc
    from hermes_task.core.messages import HINTS, error_message
    from hermes_task.render.jsonout import document

    message = error_message(error.code, error.detail)
    hint = HINTS.get(error.code)
    if opts.json:
        doc = ErrorDoc(
            error=ErrorBody(code=error.code.value, message=message, retryable=error.retryable, hint=hint),
            rows=rows or [],
        )
        _write_stdout(document(doc))
    err = console(opts, stderr=True)
    from rich.text import Text

    line = Text("error: ", style="bold red")
    line.append(message)
    err.print(line)
    if hint:
        err.print(Text(f"hint: {hint}", style="dim"))
    raise typer.Exit(int(error.exit_status))


def _write_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def run(opts: Options, body: Callable[[], None]) -> None:
    """Run a command body with the failure -> exit-code mapping applied."""
    from hermes_task.failures import Code, HermesError

    try:
        body()
    except HermesError as exc:
        fail(opts, exc)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except BrokenPipeError:
        _quiet_pipe()
    except (typer.Exit, typer.Abort, SystemExit):
        raise
    except Exception as exc:
        if debug_enabled(opts):
            raise
        fail(opts, HermesError(Code.INTERNAL, f"{type(exc).__name__} (rerun with --debug for the traceback)"))


def _quiet_pipe() -> NoReturn:
    """A closed stdout (`| head`) ends the program quietly (Python's SIGPIPE recipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    raise typer.Exit(0)


def _opts(**kwargs: Any) -> Options:
    timeout = kwargs.pop("timeout", None)
    if kwargs.get("request_timeout") is None and timeout is not None:
        kwargs["request_timeout"] = timeout
    return Options(**kwargs)


_SHARED = frozenset(Options.__dataclass_fields__) | {"timeout"}


def options_from(params: dict[str, Any], *, request_timeout_alias: bool = True) -> Options:
    """The shared options out of a command's own parameters (`options_from(locals())` as a
    command's first statement): typer has no option groups, so every command declares them.
    `json_out` is the `--json` flag; `timeout` is the per-request alias unless the command
    gives `--timeout` another meaning (`request_timeout_alias=False`, as `follow` does)."""
    picked = {k: v for k, v in params.items() if k in _SHARED}
    if "json_out" in params:
        picked["json"] = params["json_out"]
    if not request_timeout_alias:
        picked.pop("timeout", None)
    return _opts(**picked)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"hermes-task {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", help="Print the version and exit.", is_eager=True, callback=_version),
    ] = False,
) -> None:
    """hermes-task: read-only views of delegated Hermes Agent tasks."""


def _emit_warnings(opts: Options, warnings: list[Any]) -> None:
    if opts.json or not warnings:
        return
    from rich.text import Text

    err = console(opts, stderr=True)
    for warning in warnings:
        line = Text("warning: ", style="bold yellow")
        line.append(warning.message)
        err.print(line)


def guarded(opts: Options, reader: Any, step: Callable[[], Any]) -> Any:
    """Run one read step; a failure is reported with the rows verified so far."""
    from hermes_task.failures import HermesError

    try:
        return step()
    except HermesError as exc:
        fail(opts, exc, reader.window.rows())


def output_transcript(opts: Options, doc: Any, *, reasoning: bool) -> None:
    """A transcript document as JSON, or rendered rows plus warnings on stderr."""
    if opts.json:
        from hermes_task.render import jsonout

        _write_stdout(jsonout.document(doc))
        return
    from hermes_task.render import terminal

    out = console(opts)
    if opts.pager is False or not _isatty(sys.stdout):
        terminal.transcript(out, doc, markdown=_isatty(sys.stdout), reasoning=reasoning)
    else:
        from hermes_task.cli import pager as pager

        with out.capture() as captured:  # rich's rendering of sanitised text: all the pager sees
            terminal.transcript(out, doc, markdown=True, reasoning=reasoning)
        encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
        pager.show(
            captured.get(),
            requested=opts.pager,
            height=out.size.height,
            env=_env(),
            write=_write_stdout,
            encoding=encoding,
        )
    _emit_warnings(opts, doc.warnings)


from hermes_task.cli import follow as _follow  # noqa: E402, F401  (registers the command)
from hermes_task.cli import meta as _meta  # noqa: E402, F401  (completion, schema, config)
from hermes_task.cli import older as _older  # noqa: E402, F401  (registers the command)
from hermes_task.cli import recover as _recover  # noqa: E402, F401  (registers the command)
from hermes_task.cli import show as _show  # noqa: E402, F401  (registers the command)

__all__ = ["Options", "app", "connect", "console", "fail", "main", "run"]


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except BrokenPipeError:
        _quiet_pipe()
