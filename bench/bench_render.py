"""Rendering throughput: 10,000 rows through the plain painter (render/rows.py, what a
pipe gets) and the terminal painter (render/terminal_rows.py: colour, wrapping at 100
columns), with Markdown off and on (rich's Markdown for the prose that holds Markdown).

The rows are a fixed mix of what a delegated task shows: user prompts with light Markdown,
tool calls with JSON arguments, tool results, and assistant answers with reasoning
(collapsed); every row's text is its own (no two Markdown rows alike), so nothing is
rendered from a cache of an earlier row.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from bench.common import Stats

if TYPE_CHECKING:
    from hermes_task.core.documents import Row

ROWS = 10_000
TARGETS = {
    "floor: one f-string per row": 0,
    "piped (plain painter)": 100_000,
    "terminal, Markdown off": 10_000,
    "terminal, Markdown on": 2_000,
}


def _rows() -> list[Row]:
    from hermes_task.core.documents import Row, ToolCall

    out: list[Row] = []
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
            text = (
                f"Found **{i}** TODO markers in 2 files:\n\n1. `src/a.py`\n2. `src/b.py`\n\nThe build passes."
            )
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


def measure(runs: int = 3) -> dict[str, dict[str, Stats]]:
    """Seconds per 10,000 rows in every mode, the modes alternating: {"wall": ..., "cpu": ...}
    (CPU time of this process: what the formatting costs when it has a core to itself)."""
    from hermes_task.core.documents import BackendInfo, Coverage, TaskInfo, TranscriptDoc
    from hermes_task.render import Target, terminal_rows
    from hermes_task.render.rows import View, transcript_chunks

    doc = TranscriptDoc(
        task=TaskInfo(root_id="r", tip_id="r", lineage=["r"]),
        backend=BackendInfo(contract="current"),
        rows=_rows(),
        coverage=Coverage(unique_rows=ROWS, has_older=False, at_start=True),
    )

    def floor() -> None:
        "".join([f"{r.role} #{r.id} {r.timestamp}\n  {r.text}\n\n" for r in doc.rows])

    def piped() -> None:
        "".join(transcript_chunks(doc, View(), 100))

    def tty(markdown: bool) -> None:
        # A colour terminal 100 columns wide, written to a StringIO as show writes to stdout.
        sink = io.StringIO()
        target = Target(sink.write, tty=True, color=True, columns=100)
        painter = terminal_rows.Painter(color=True, width=100, markdown=markdown)
        terminal_rows.transcript(target, doc, View(), painter)

    runs_of: tuple[Callable[[], None], ...] = (floor, piped, lambda: tty(False), lambda: tty(True))
    modes = dict(zip(TARGETS, runs_of, strict=True))
    wall: dict[str, list[float]] = {name: [] for name in TARGETS}
    cpu: dict[str, list[float]] = {name: [] for name in TARGETS}
    for i in range(runs):
        for name in list(modes) if i % 2 == 0 else list(modes)[::-1]:
            started, used = time.perf_counter(), time.process_time()
            modes[name]()
            cpu[name].append(time.process_time() - used)
            wall[name].append(time.perf_counter() - started)
    return {
        "wall": {name: Stats(tuple(v)) for name, v in wall.items()},
        "cpu": {name: Stats(tuple(v)) for name, v in cpu.items()},
    }


def markdown(measured: dict[str, dict[str, Stats]]) -> list[str]:
    stats, cpu = measured["wall"], measured["cpu"]
    out = [
        "## Rendering",
        "",
        f"{ROWS:,} rows, median of {len(next(iter(stats.values())).values)} runs (min–max of the rate in "
        "brackets), the modes alternating. Piped: the plain painter (`render.rows.transcript_chunks`, "
        "what `show` and `older` print when stdout is not a terminal). Terminal: the terminal painter "
        "(`render.terminal_rows.transcript`, colour, lines wrapped at 100 columns) written to a `StringIO`, "
        "as `show` writes on a TTY, with Markdown off (every row painted by us) and on (the half of the "
        "rows whose prose holds Markdown rendered by rich's Markdown, each text its own). Wall time is what "
        "this run saw on the shared machine; CPU time is the process's own (`time.process_time`), the rate "
        "with a core to itself.",
        "",
        "| mode | rows/s (wall) | rows/s (CPU time) | seconds per 10,000 rows (wall) | target | verdict (wall / CPU) |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in stats.items():
        rate, cpu_rate, goal = ROWS / s.median, ROWS / cpu[name].median, TARGETS[name]
        target = f"≥ {goal:,} rows/s" if goal else "(the machine's pace)"

        def verdict(value: float, goal: int = goal) -> str:
            return "within target" if value >= goal else "**under target**"

        judged = f"{verdict(rate)} / {verdict(cpu_rate)}" if goal else "-"
        out.append(
            f"| {name} | **{rate:,.0f}** ({ROWS / s.high:,.0f}–{ROWS / s.low:,.0f}) | "
            f"{cpu_rate:,.0f} ({ROWS / cpu[name].high:,.0f}–{ROWS / cpu[name].low:,.0f}) | "
            f"{s.median:.2f} ({s.low:.2f}–{s.high:.2f}) | {target} | {judged} |"
        )
    return out
