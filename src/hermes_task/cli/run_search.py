"""`search`'s work: what `hermes-task search` runs once typer has parsed its arguments
(`cli/search.py` declares the command): the reading is `reading/task_search.py`, the output
`render/searchout.py` (NDJSON events, tab-separated lines, or readable groups on a terminal);
the exit status grep's in this tool's numbers (`core/row_search.search_status`).
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_task.cli.common import Common
from hermes_task.cli.endings import report_failure, stderr_line
from hermes_task.cli.quiet import dropped
from hermes_task.cli.session import Session
from hermes_task.cli.shell import run
from hermes_task.core.projection import PatternError, compile_pattern, search_status
from hermes_task.core.sanitize import check_id, clean_line
from hermes_task.core.ui_strings import RECOVER
from hermes_task.failures import Code, HermesError
from hermes_task.reading.task_search import Query, Tally, search_parent
from hermes_task.render.searchout import JsonSearch, LinesSearch, TerminalSearch


def run_search(
    common: Common,
    pattern: str,
    parent_id: str,
    *,
    regex: bool = False,
    ignore_case: bool = False,
    context: int = 0,
    reasoning: bool = False,
    utc: bool = False,
) -> None:
    """Find `pattern` in every task of `parent_id` (`hermes-task search --help`)."""
    session = Session(common)
    reporter = _reporter(session, utc=utc)
    tally = Tally()

    def report(error: HermesError, status: int) -> None:
        """A failure of the whole search: its lines on stderr; with --json an `error` event
        (not when interrupted) and the `result` with what was found so far."""
        interrupted = error.code is Code.INTERRUPTED
        if not isinstance(reporter, JsonSearch):
            if not interrupted:
                report_failure(common, error)
            return
        if not interrupted:
            reporter.error(error)
            note = _note(common)
            note(f"error: {error.message}", "bold red")
            if error.hint:
                note(f"hint: {error.hint}", "dim")
        reporter.result(tally, status)

    def body(session: Session) -> None:
        try:
            compiled = compile_pattern(pattern, regex=regex, ignore_case=ignore_case)
        except PatternError as exc:
            raise HermesError(Code.USAGE, f"PATTERN {exc}") from None
        parent = check_id(parent_id, what="PARENT_ID")
        query = Query(pattern=compiled, context=context, reasoning=reasoning)
        with session.reading() as (client, hints):
            search_parent(client, parent, hints, query, reporter, tally)
        status = int(search_status(tally.matches, complete=tally.complete))
        if tally.tasks == 0 and not common.json:
            _note(common)(RECOVER["no_tasks"].format(sid=clean_line(parent)), "dim")
        reporter.result(tally, status)
        if status:
            raise SystemExit(status)

    run(session, body, report=report)


def _note(common: Common) -> Callable[[str, str], None]:
    return lambda line, style: stderr_line(common, line, style)


def _reporter(session: Session, *, utc: bool) -> JsonSearch | LinesSearch | TerminalSearch:
    """NDJSON with --json; else tab-separated lines off a terminal, readable groups on one."""
    common = session.common
    if common.json:
        return JsonSearch(common.env.write_stdout)
    out = session.target

    def shown(code: str) -> bool:
        return not dropped(common.quiet, code)

    if out.tty:
        return TerminalSearch(out, _note(common), shown, utc=utc)
    return LinesSearch(out, _note(common), shown, utc=utc)
