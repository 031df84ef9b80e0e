"""Our terminal table (render/terminal.py) and recover's use of it: ids are printed whole at any
width; the goal wraps, the result is cut, then the usage, the result and the time leave, in that order;
below that each task is a block with its ids on lines of their own (issue 26, item 1)."""

from __future__ import annotations

import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from hermes_task.core.documents import TaskEntry, TasksDoc, Usage
from hermes_task.core.ui_strings import TaskStatus
from hermes_task.core.verdict import summarize
from hermes_task.render.terminal import TASK_COLUMNS, Column, Row, Table, layout, lines, task_table, tasks
from hermes_task.render.terminal_rows import width_of

CHILD = "20261201_123426_976a18"
USAGE = Usage(
    input_tokens=12345, output_tokens=1500, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0,
    api_calls=9, cost_usd=0.0421, cost_kind="estimated", complete=True, segments=3,
)  # fmt: skip


def entry(
    n: int, *, goal: str | None = "Count TODO markers under src/ and list the files", **kw: object
) -> TaskEntry:
    fields: dict[str, object] = {
        "call_id": f"call_{n}",
        "goal": goal,
        "task_index": n,
        "delegation_id": "deleg_77b7099e",
        "subagent_id": f"sa-{n}-cc167c28",
        "child_session_id": f"20261201_12342{n}_976a1{n}",
        "status": TaskStatus.completed,
        "terminal": True,
        "unavailable_reason": None,
        "number": f"1.{n + 1}",
        "summary": "Found 3 TODO markers in 2 files, and one more in the docs folder.",
        "duration_seconds": 8.4,
    }
    fields.update(kw)
    return TaskEntry(**fields)  # type: ignore[arg-type]


def drawn(entries: list[TaskEntry], width: int) -> list[str]:
    """`recover`'s terminal output at `width`, as screen lines (no colour)."""
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False, highlight=False)
    tasks(console, TasksDoc(parent_id="p", tasks=entries, summary=summarize(entries)))
    return out.getvalue().split("\n")


def shown_columns(entries: list[TaskEntry], width: int) -> list[str] | None:
    widths = layout(TASK_COLUMNS, task_table(entries).rows, width)
    return (
        None
        if widths is None
        else [c.header for c, w in zip(TASK_COLUMNS, widths, strict=True) if w is not None]
    )


def test_the_documented_order_goal_wraps_result_cut_then_usage_result_and_time_leave_then_blocks() -> None:
    tasks_ = [entry(0, usage=USAGE), entry(1, goal="Check that the build passes", usage=USAGE)]
    table = task_table(tasks_)
    widths = {w: layout(TASK_COLUMNS, table.rows, w) for w in range(20, 240)}
    every = ["#", "status", "time", "goal", "result", "usage", "child session", "delegation", "subagent"]
    natural = widths[239]
    assert natural == [3, 11, 4, 48, 40, 18, 22, 14, 13]
    # 1. the goal wraps first, down to 24 cells; 2. then the result is cut, down to 16
    assert widths[188] == [3, 11, 4, 47, 40, 18, 22, 14, 13]
    assert widths[165] == [3, 11, 4, 24, 40, 18, 22, 14, 13]
    assert widths[150] == [3, 11, 4, 24, 25, 18, 22, 14, 13]
    assert widths[141] == [3, 11, 4, 24, 16, 18, 22, 14, 13]
    # 3. the usage leaves (the result gets its room back), 4. then the result, 5. then the time
    assert widths[140] == [3, 11, 4, 24, 35, None, 22, 14, 13]
    assert widths[121] == [3, 11, 4, 24, 16, None, 22, 14, 13]
    assert widths[120] == [3, 11, 4, 41, None, None, 22, 14, 13]
    assert widths[103] == [3, 11, 4, 24, None, None, 22, 14, 13]
    assert widths[102] == [3, 11, None, 29, None, None, 22, 14, 13]
    assert widths[97] == [3, 11, None, 24, None, None, 22, 14, 13]
    # 6. no table: blocks
    assert all(widths[w] is None for w in range(20, 97))
    assert shown_columns(tasks_, 239) == every
    # the ids never shrink while there is a table
    for w, got in widths.items():
        if got is not None:
            assert got[6:] == [22, 14, 13], w
            assert sum(x for x in got if x is not None) + 2 * (sum(x is not None for x in got) - 1) <= w


def test_a_table_line_is_never_wider_than_the_screen_and_ids_are_whole() -> None:
    entries = [entry(0), entry(1, status=TaskStatus.failed, error="boom " * 30), entry(2, goal="x" * 90)]
    for width in (97, 100, 115, 120, 160):
        screen = drawn(entries, width)
        assert max(width_of(line) for line in screen) <= width, width
        for e in entries:
            (line,) = [line for line in screen if line.startswith(e.number or "")]
            assert {e.child_session_id, e.delegation_id, e.subagent_id} <= set(line.split()), width


def test_blocks_put_each_id_on_a_line_of_its_own() -> None:
    entries = [entry(0), entry(1, child_session_id=None, unavailable_reason="no_durable_child_reference")]
    assert drawn(entries, 80)[:13] == [
        "1.1  ✓ completed  8.4s",
        "  goal           Count TODO markers under src/ and list the files",
        "  result         Found 3 TODO markers in 2 files, and one more in the docs",
        "                 folder.",
        "  child session  20261201_123420_976a10",
        "  delegation     deleg_77b7099e",
        "  subagent       sa-0-cc167c28",
        "1.2  ✓ completed  8.4s",
        "  goal           Count TODO markers under src/ and list the files",
        "  result         Found 3 TODO markers in 2 files, and one more in the docs",
        "                 folder.",
        "  child session  -",
        "  delegation     deleg_77b7099e",
    ]
    narrow = drawn([entry(0)], 30)
    assert narrow[:13] == [
        "1.1  ✓ completed  8.4s",
        "  goal           Count TODO",
        "                 markers under",
        "                 src/ and list",
        "                 the files",
        "  result         Found 3 TODO",
        "                 markers in 2",
        "                 files, and",
        "                 one more in",
        "                 the docs",
        "                 folder.",
        "  child session",
        "  20261201_123420_976a10",
    ]
    assert drawn([entry(0)], 20)[:2] == ["1.1  ✓ completed", "8.4s"]


def test_a_gap_is_a_row_in_the_table_and_a_line_under_its_block() -> None:
    gapped = [entry(0, gap="not_found", goal="Lint")]
    wide = drawn(gapped, 160)
    assert wide[2].split() == ["gap", "↳", "child", "not", "read:", "session", "not"]
    narrow = drawn(gapped, 60)
    (gap,) = [n for n, line in enumerate(narrow) if "child not read" in line]
    assert narrow[gap] == "  ↳ child not read: session not found (it may not be flushed"
    assert narrow[gap + 1] == "  yet)"
    assert narrow[gap - 1] == "  subagent       sa-0-cc167c28"


def test_an_id_wider_than_the_screen_is_still_printed_whole() -> None:
    long_id = "20261201_123426_" + "a" * 40
    screen = drawn([entry(0, child_session_id=long_id)], 40)
    assert long_id in screen


def test_a_nested_task_keeps_its_indented_number() -> None:
    nested = [entry(0, goal="Lint", children=[entry(1, goal="Lint", children=[entry(2, goal="Lint")])])]
    wide = drawn(nested, 200)
    assert [line[:9].rstrip() for line in wide[1:4]] == ["1.1", "  ↳ 1.2", "    ↳ 1.3"]
    narrow = drawn(nested, 60)
    assert [line for line in narrow if "✓" in line] == [
        "1.1  ✓ completed  8.4s",
        "  ↳ 1.2  ✓ completed  8.4s",
        "    ↳ 1.3  ✓ completed  8.4s",
    ]


IDS = st.text(alphabet="abcdef0123456789_", min_size=8, max_size=40)


@settings(max_examples=200, deadline=None)
@given(
    width=st.integers(min_value=20, max_value=240),
    ids=st.lists(st.tuples(IDS, IDS, IDS), min_size=1, max_size=4),
    goal=st.text(alphabet="abc xyz/.", min_size=0, max_size=120),
)
def test_every_id_is_on_one_line_whole_at_any_width(
    width: int, ids: list[tuple[str, str, str]], goal: str
) -> None:
    entries = [
        entry(n, child_session_id=c, delegation_id=d, subagent_id=s, goal=goal or None)
        for n, (c, d, s) in enumerate(ids)
    ]
    screen = drawn(entries, width)
    words = {word for line in screen for word in re.split(r"\s+", line)}
    for c, d, s in ids:
        assert {c, d, s} <= words
    for line in screen:
        # only a line holding nothing but an id (indented or not) may be wider than the screen
        assert width_of(line) <= width or line.strip() in {x for trio in ids for x in trio}, line


def test_the_generic_table_drops_by_rank_and_keeps_lead_cells_first() -> None:
    columns = (
        Column("id", lead=True),
        Column("note", fit="cut", cap=30, least=5, drop=1),
        Column("extra", drop=2),
        Column("text", fit="wrap", cap=20, least=10),
    )
    rows = [Row([("abc123", ""), ("a note that is long", ""), ("x", ""), ("some words here", "")])]
    assert layout(columns, rows, 80) == [6, 19, 5, 15]
    assert layout(columns, rows, 46) == [6, 19, 5, 10]  # the wrap column gave way first
    assert layout(columns, rows, 32) == [6, 5, 5, 10]  # then the cut one
    assert layout(columns, rows, 31) == [6, None, 5, 15]  # then rank 1 left
    assert layout(columns, rows, 24) == [6, None, None, 15]  # then rank 2
    assert layout(columns, rows, 18) == [6, None, None, 10]
    assert layout(columns, rows, 17) is None
    block = [line.plain for line in lines(Table(columns, rows), 17)]
    # beside a label the room would be under 10 cells: the label on its own line, the text under it
    assert block == [
        "abc123",
        "  note",
        "  a note that is",
        "  long",
        "  extra  x",
        "  text",
        "  some words here",
    ]
