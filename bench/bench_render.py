"""Terminal rendering throughput: 10,000 rows into a terminal-like sink.

`render.terminal.transcript` writes into a rich `Console` on a `StringIO` with
`force_terminal=True`, width 100 and the CLI's console settings (standard colours, no markup,
no highlighting, no emoji), with Markdown off (a pipe) and on (a TTY). The rows are a fixed
mix of what a delegated task shows: user prompts with light Markdown, tool calls with JSON
arguments, tool results, and assistant answers with reasoning (collapsed).
"""

from __future__ import annotations

import io
import time

from common import Stats

ROWS = 10_000


def _rows() -> list[object]:
    from hermes_task.core.documents import Row, ToolCall

    out: list[object] = []
    for i in range(ROWS):
        kind = i % 4
        when = 1796056440.0 + i
        if kind == 0:
            text = f"Please look at `src/module_{i}.py` and **count** the TODO markers.\n\n- skip tests/\n- list the files"
            out.append(Row(id=i, session_id="s", role="user", text=text, timestamp=when))
        elif kind == 1:
            call = ToolCall(
                id=f"call_{i}", name="terminal", arguments='{"command": "grep -rn TODO src/ | wc -l"}'
            )
            out.append(
                Row(id=i, session_id="s", role="assistant", text=None, tool_calls=[call], timestamp=when)
            )
        elif kind == 2:
            out.append(
                Row(
                    id=i,
                    session_id="s",
                    role="tool",
                    text="src/a.py:12: # TODO fix\nsrc/b.py:40: # TODO\n3",
                    tool_name="terminal",
                    tool_call_id=f"call_{i - 1}",
                    timestamp=when,
                )
            )
        else:
            text = "Found **3** TODO markers in 2 files:\n\n1. `src/a.py`\n2. `src/b.py`\n\nThe build passes."
            out.append(
                Row(
                    id=i,
                    session_id="s",
                    role="assistant",
                    text=text,
                    reasoning="Counted the lines.",
                    timestamp=when,
                )
            )
    return out


def measure(runs: int = 3) -> dict[str, Stats]:
    """Seconds per 10,000 rows, Markdown off and on alternating."""
    from rich.console import Console

    from hermes_task.core.documents import BackendInfo, Coverage, TaskInfo, TranscriptDoc
    from hermes_task.render import terminal

    doc = TranscriptDoc(
        task=TaskInfo(root_id="r", tip_id="r", lineage=["r"]),
        backend=BackendInfo(contract="current"),
        rows=_rows(),
        coverage=Coverage(unique_rows=ROWS, has_older=False, at_start=True),
    )
    times: dict[str, list[float]] = {"markdown off": [], "markdown on": []}
    for i in range(runs):
        for name in list(times) if i % 2 == 0 else list(times)[::-1]:
            sink = io.StringIO()
            console = Console(
                file=sink,
                force_terminal=True,
                color_system="standard",
                width=100,
                markup=False,
                highlight=False,
                emoji=False,
            )
            started = time.perf_counter()
            terminal.transcript(console, doc, markdown=name == "markdown on", reasoning=False)
            times[name].append(time.perf_counter() - started)
    return {name: Stats(tuple(v)) for name, v in times.items()}


def markdown(stats: dict[str, Stats]) -> list[str]:
    out = [
        "## Terminal rendering",
        "",
        f"{ROWS:,} rows through `render.terminal.transcript` into a rich `Console` on a `StringIO` "
        "(`force_terminal=True`, width 100, colour), median of "
        f"{len(next(iter(stats.values())).values)} runs (min–max of the rate in brackets).",
        "",
        "| mode | rows/s | seconds per 10,000 rows |",
        "|---|---|---|",
    ]
    for name, s in stats.items():
        out.append(
            f"| {name} | **{ROWS / s.median:,.0f}** ({ROWS / s.high:,.0f}–{ROWS / s.low:,.0f}) | "
            f"{s.median:.2f} ({s.low:.2f}–{s.high:.2f}) |"
        )
    return out
