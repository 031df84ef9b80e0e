"""The options every reading command shares, declared once, and the `Common` object they fill
(`common.py`); also `--store`/`--no-store`, and the CHILD_ID and PARENT_ID arguments (their
completion from the local store: `idcompletion.py`).

typer has no option groups, so `with_common` appends the shared parameters to a command's
signature and hands the command one typed `Common` instead of eleven keyword arguments.
Invariant: every reading command accepts exactly the same connection and output options,
spelled and documented the same way, in the same order after its own options.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from hermes_task.cli.common import ColorMode, Common, OutputFormat, output_format
from hermes_task.cli.environment import current
from hermes_task.cli.idcompletion import complete_parent_id, complete_task_id


def command_app(**settings: Any) -> typer.Typer:
    """The typer app a command module declares its command (or group) in: help in click's
    plain formatter (no rich panels, as the root), no `--install-completion` of its own
    (`hermes-task completion` prints the script)."""
    return typer.Typer(
        rich_markup_mode=None, add_completion=False, pretty_exceptions_enable=False, **settings
    )


def complete_gateway(ctx: typer.Context, incomplete: str) -> list[str]:
    """Shell completion of --gateway: the gateway names of the config file."""
    from hermes_task.settings import gateway_names  # lazy: the config file, only when a shell completes

    return [name for name in gateway_names(dict(current(ctx).environ)) if name.startswith(incomplete)]


CONN = "Connection"
OUT = "Output"


StorePath = Annotated[
    str | None,
    typer.Option(
        "--store",
        metavar="PATH",
        help=(
            "The dashboard's local Hermes store (state.db), read-only, to find child and newer-segment "
            "ids (proven over HTTP) [env: HERMES_TASK_STORE; default: the profile's store, loopback only]."
        ),
        rich_help_panel=CONN,
        show_default=False,
    ),
]
NoStore = Annotated[
    bool, typer.Option("--no-store", help="Never read the local Hermes store.", rich_help_panel=CONN)
]


def _connection(flag: str, metavar: str, help: str, **extra: Any) -> Any:
    """An option of the Connection panel, listed without a default (its help names it)."""
    return typer.Option(flag, metavar=metavar, help=help, rich_help_panel=CONN, show_default=False, **extra)


Url = Annotated[
    str | None,
    _connection(
        "--url", "URL", "Dashboard base URL [env: HERMES_DASHBOARD_URL; default: http://127.0.0.1:9119]."
    ),
]


Gateway = Annotated[
    str | None,
    _connection(
        "--gateway",
        "NAME",
        "A named [gateways.NAME] entry of the config file [env: HERMES_TASK_GATEWAY].",
        autocompletion=complete_gateway,
    ),
]
Profile = Annotated[
    str | None,
    _connection(
        "--profile", "NAME", "Exact Hermes profile, checked on every response [env: HERMES_TASK_PROFILE]."
    ),
]
TokenFile = Annotated[
    str | None,
    _connection(
        "--token-file",
        "PATH",
        "File holding the session token [env: HERMES_DASHBOARD_TOKEN holds the token itself].",
    ),
]
Username = Annotated[
    str | None,
    _connection(
        "--username", "NAME", "Password-gated dashboards: the login name [env: HERMES_DASHBOARD_USERNAME]."
    ),
]
PasswordFile = Annotated[
    str | None,
    _connection(
        "--password-file",
        "PATH",
        "File holding the password [env: HERMES_DASHBOARD_PASSWORD holds it itself].",
    ),
]
RequestTimeout = Annotated[
    float | None,
    _connection("--request-timeout", "S", "Per-request timeout in seconds [default: 10].", min=0.001),
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
Quiet = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="No warnings that every command repeats (legacy_backend, store_unavailable); JSON keeps them.",
        rich_help_panel=OUT,
    ),
]
DebugFlag = Annotated[
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
Format = Annotated[
    OutputFormat | None,
    typer.Option(
        "--format",
        help="text (the default), json (the same as --json) or markdown (a report for GitHub and CI).",
        rich_help_panel=OUT,
        case_sensitive=False,
        show_default=False,
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

NoHint = Annotated[bool, typer.Option("--no-hint", help="Don't ask /latest-descendant for a newer segment.")]
ChildId = Annotated[
    str,
    typer.Argument(
        metavar="CHILD_ID",
        help="The task's root session id (its first durable reference; `recover PARENT` prints it).",
        show_default=False,
        autocompletion=complete_task_id,
    ),
]

ParentId = Annotated[
    str,
    typer.Argument(
        metavar="PARENT_ID",
        help="The parent chat's session id, exactly as shown (`hermes-task parents` lists the newest).",
        show_default=False,
        autocompletion=complete_parent_id,
    ),
]


def json_events(schema: str) -> Any:
    """--json worded as NDJSON events whose schema is `hermes-task schema SCHEMA`."""
    return Annotated[
        bool,
        typer.Option(
            "--json",
            help=f"NDJSON events on stdout, one per line (schema: hermes-task schema {schema}).",
            rich_help_panel=OUT,
        ),
    ]


# (name, annotation, default) in the order --help lists them, after the command's own options.
_OUTPUT: list[tuple[str, Any, Any]] = [("pager", Pager, None)]
_CONNECTION: list[tuple[str, Any, Any]] = [
    ("url", Url, None),
    ("gateway", Gateway, None),
    ("profile", Profile, None),
    ("token_file", TokenFile, None),
    ("username", Username, None),
    ("password_file", PasswordFile, None),
    ("request_timeout", RequestTimeout, None),
    ("store", StorePath, None),
    ("no_store", NoStore, False),
]
_TRAILING: list[tuple[str, Any, Any]] = [
    ("color", Color, ColorMode.auto),
    ("quiet", Quiet, False),
    ("debug", DebugFlag, False),
]

F = TypeVar("F", bound=Callable[..., Any])

# A command's parameter that fills a differently named `Common` field (`json` would shadow
# the module in a command's signature).
PARAMETER_OF = {"json": "json_out"}


def with_common(
    *, pager: bool = True, events: str | None = None, formats: bool = False, json: bool = True
) -> Callable[[F], F]:
    """Give the decorated command the shared options and call it with `common=Common(...)`.

    `pager` adds --pager/--no-pager; `events` words --json as NDJSON events whose schema it
    names (`events` for follow, `search`); `formats` adds `--format text|json|markdown`
    after --json (show, older, recover); `json` False: no --json at all (a command whose stdout
    is another format's document, `export`, or a screen, `tui`).
    `--timeout` is never shared: it bounds a whole run (`follow`); per request it is
    `--request-timeout`, everywhere."""

    def decorate(func: F) -> F:
        hints = typing.get_type_hints(func, include_extras=True)
        own = [
            p.replace(annotation=hints[p.name])
            for p in inspect.signature(func).parameters.values()
            if p.name != "common"
        ]
        json_option = Json if events is None else json_events(events)
        shared: list[tuple[str, Any, Any]] = [(PARAMETER_OF["json"], json_option, False)] if json else []
        shared += [("output_format", Format, None)] if formats else []
        shared += _OUTPUT if pager else []
        shared += _CONNECTION
        shared += _TRAILING
        names = [name for name, _a, _d in shared]
        params = [
            *own,
            *(
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
                )
                for name, annotation, default in shared
            ),
            inspect.Parameter("typer_context", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context),
        ]

        @functools.wraps(func)
        def command(**kwargs: Any) -> Any:
            picked = {name: kwargs.pop(name) for name in names}
            picked.update({field: picked.pop(name, False) for field, name in PARAMETER_OF.items()})
            chosen = output_format(picked["json"], picked.pop("output_format", None))
            picked.update(json=chosen is OutputFormat.json, output_format=chosen)
            env = current(kwargs.pop("typer_context"))
            return func(common=Common(env=env, **picked), **kwargs)

        del command.__wrapped__  # typer must see the new signature, not the wrapped one
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        return typing.cast(F, command)

    return decorate
