"""`hermes-task export`: a parent chat's proven tasks as one OpenTelemetry trace (OTLP/JSON), read
by `reading/tasktree.py`, mapped by `render/otlp.trace`, sent where `--output`, `--endpoint` or the
OpenTelemetry SDK's variables say. Headers are never printed: they may carry a receiver's API key."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import unquote, urlsplit

import typer

from hermes_task.cli.options import Common, ParentId, command_app, with_common
from hermes_task.failures import Code, HermesError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from hermes_task.cli.session import Session

TRACES_PATH = "/v1/traces"
DEFAULT_TIMEOUT = 10.0


ExportFormat = StrEnum("ExportFormat", [("otlp_json", "otlp-json")])


app = command_app()


@app.command()
@with_common(pager=False, json=False)
def export(
    parent_id: ParentId,
    format_: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            help="What to write: otlp-json, an OTLP ExportTraceServiceRequest in OTLP/JSON (required).",
            show_default=False,
        ),
    ],
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the request to FILE (atomically; '-' is stdout) instead of stdout or an endpoint.",
            show_default=False,
        ),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            metavar="URL",
            help="POST the request to an OTLP/HTTP receiver: URL/v1/traces (URL as is when it ends in "
            "/v1/traces). Without --endpoint or --output: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (as is) or "
            "OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces) when set, else stdout. Headers: "
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS or OTEL_EXPORTER_OTLP_HEADERS.",
            show_default=False,
        ),
    ] = None,
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive", help="Nest the tasks each task delegated in turn (depth <= 8), as recover does."
        ),
    ] = False,
    content: Annotated[
        bool,
        typer.Option(
            "--content",
            help="Also export message text (sanitised): rows as span events, tool arguments and results, "
            "task summaries and errors. Without it only the goals are text.",
        ),
    ] = False,
    **shared: Any,
) -> None:
    """Export a parent chat's proven tasks as one OpenTelemetry trace (OTLP/JSON, GenAI conventions).

    Reads PARENT_ID's tasks as recover does, then each task's child whole as search does (every proven segment). Writes one trace: an invoke_agent span for the parent, an execute_tool span per tool call (delegate_task ones hold their tasks), an invoke_agent span per task with its status, error.type, usage and cost (recover --json's usage), its tool calls as spans and its compressions as events. Ids are derived from session, row and call ids: the same history exports the same ids. Times are the rows' own; a running task's span ends at its last row and says hermes_task.unfinished. Mapping: docs/json.md "OTLP/JSON export".
    """
    common = Common.of(shared)
    if output is not None and endpoint is not None:
        raise typer.BadParameter("choose one destination: --output FILE or --endpoint URL")
    from hermes_task import __version__  # lazy: the version, only when a trace is written
    from hermes_task.cli.session import Session, check_target, shell, write_atomic  # lazy: the command's work
    from hermes_task.core.sanitize import check_id  # lazy: as the reports
    from hermes_task.reading.tasktree import read_trace  # lazy: as the reports
    from hermes_task.render.jsontext import document, event  # lazy: as the reports
    from hermes_task.render.otlp import trace  # lazy: as the reports

    environ = common.env.environ
    with shell(Session(common)) as session:
        parent = check_id(parent_id, what="PARENT_ID")
        url = None if output is not None else traces_url(endpoint, environ)
        headers = otlp_headers(environ) if url is not None else {}
        if output not in (None, "-"):
            check_target(output, "--output")
        with session.reading() as (client, hints):
            source = read_trace(client, hints, parent, recursive=recursive, debug=session.debug)
        request = trace(source, version=__version__, content=content)
        if url is not None:
            post(session, url, headers, event(request).encode("ascii"))
        elif output not in (None, "-"):
            write_atomic(output, document(request), "--output")
        else:
            common.env.write_stdout(document(request))


def traces_url(endpoint: str | None, environ: Mapping[str, str]) -> str | None:
    """Where to POST: `--endpoint` (plus /v1/traces), else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
    (as is), else `OTEL_EXPORTER_OTLP_ENDPOINT` plus /v1/traces; None: stdout."""
    if endpoint is not None:
        url = endpoint if endpoint.rstrip("/").endswith(TRACES_PATH) else endpoint.rstrip("/") + TRACES_PATH
    elif environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        url = environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    elif environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        url = environ["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + TRACES_PATH
    else:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HermesError(Code.USAGE, f"the OTLP endpoint is not an http(s) URL: {shown(url)}", hint="")
    return url


def otlp_headers(environ: Mapping[str, str]) -> dict[str, str]:
    """The receiver's headers, as the OpenTelemetry SDK reads them; a bad pair names its place only."""
    raw = environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or environ.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
    headers: dict[str, str] = {}
    for place, pair in enumerate(raw.split(","), start=1):
        if not pair.strip():
            continue
        key, sep, val = pair.partition("=")
        key = unquote(key.strip())
        if not sep or not key or not key.isascii() or any(c in key for c in " \t:\r\n"):
            raise HermesError(
                Code.USAGE, f"OTEL_EXPORTER_OTLP_HEADERS: pair {place} is not key=value", hint=""
            )
        headers[key] = unquote(val.strip())
    return headers


def shown(url: str) -> str:
    """`url` as a message may print it: no user, password, query or fragment (they may hold a key)."""
    from hermes_task.core.sanitize import clean_line  # lazy: only when a message names a URL

    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return clean_line(f"{parts.scheme}://{host}{port}{parts.path}")


def post(session: Session, url: str, headers: dict[str, str], body: bytes) -> None:
    """`POST url` with the request; a failure is one line (exit 7; 6 for a 4xx)."""
    import httpx  # lazy: only when a trace is sent

    common = session.common
    timeout = common.request_timeout or DEFAULT_TIMEOUT
    where = shown(url)
    try:
        with httpx.Client(transport=common.env.transport, timeout=timeout) as http:
            response = http.post(url, content=body, headers={**headers, "Content-Type": "application/json"})
    except httpx.TimeoutException:
        raise HermesError(Code.TIMEOUT, where, summary="the OTLP endpoint timed out", hint="") from None
    except httpx.HTTPError as exc:
        why = f"{where} ({type(exc).__name__})"
        raise HermesError(Code.NETWORK, why, summary="could not reach the OTLP endpoint", hint="") from None
    if session.debug is not None:
        session.debug(f"export POST {where}: HTTP {response.status_code}, {len(body)} bytes")
    if response.is_success:
        return
    status = response.status_code
    code = Code.BAD_REQUEST if 400 <= status < 500 and status != 429 else Code.SERVER_ERROR
    raise HermesError(code, where, summary=f"the OTLP endpoint answered HTTP {status}", hint="")
