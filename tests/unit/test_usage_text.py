"""Usage as people and pipes read it (render/rows.py) and in recover's table: the cell
(`≥` not complete, `~` estimated, `$?` no cost), the figures the result told the parent drawn
under the proven sum when they differ, and the column's place in the table's drop order."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from hermes_task.core.documents import TaskTokens
from hermes_task.render.rows import (
    cost_text,
    count_text,
    usage_cell,
    usage_fields,
    usage_line,
    usage_told,
)
from tests.unit.test_table import USAGE, drawn, entry, shown_columns

PARTIAL = replace(USAGE, complete=False, missing=["later_segments", "cost"], cost_usd=None, cost_kind=None)


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "?"), (0, "0"), (999, "999"), (1000, "1k"), (12345, "12.3k"), (999_949, "999.9k"),
     (999_950, "1M"), (4_560_000, "4.6M")],
)  # fmt: skip
def test_counts_are_compact(value: int | None, text: str) -> None:
    assert count_text(value) == text


@pytest.mark.parametrize(
    ("cost", "kind", "text"),
    [(0.0421, "estimated", "~$0.042"), (0.0421, "actual", "$0.042"), (12.5, "actual", "$12.50"),
     (0.00421, "actual", "$0.0042"), (0.00001, "actual", "<$0.0001"), (0.0, "estimated", "~$0"),
     (1234.5, "actual", "$1,234.50"), (None, None, "$?")],
)  # fmt: skip
def test_costs_say_their_kind(cost: float | None, kind: str | None, text: str) -> None:
    usage = replace(USAGE, cost_usd=cost, cost_kind=kind)
    assert cost_text(usage) == text


def test_the_cell_marks_a_sum_that_is_not_complete() -> None:
    assert usage_cell(USAGE) == "12.3k/1.5k ~$0.042"
    assert usage_cell(PARTIAL) == "≥12.3k/1.5k $?"
    assert usage_cell(None) == "-"


def test_told_figures_are_shown_only_where_they_differ() -> None:
    same = entry(0, usage=USAGE, tokens=TaskTokens(input=12345, output=1500))
    assert usage_told(same) is None
    assert usage_told(replace(same, tokens=TaskTokens(input=12345, output=None))) is None
    assert usage_told(replace(same, tokens=TaskTokens(input=20000, output=1500))) == "told 20k/1.5k"
    assert usage_told(replace(same, usage=None, tokens=TaskTokens(input=1, output=1))) is None


def test_the_show_header_line_names_what_the_sum_lacks() -> None:
    assert usage_line(USAGE) == "usage: 12,345 in · 1,500 out · 9 API calls · ~$0.0421 estimated · 3 segments"
    assert usage_line(replace(PARTIAL, cache_read_tokens=7, api_calls=1, segments=1)) == (
        "usage: 12,345 in · 1,500 out · 7 cache read · 1 API call · cost unknown · 1 segment · not complete: "
        "later segments are not proven; a segment has no known cost"
    )
    assert usage_line(None) is None


def test_piped_fields_are_numbers_or_empty() -> None:
    assert usage_fields(USAGE) == ("12345", "1500", "0.0421", "estimated", "true")
    assert usage_fields(replace(PARTIAL, output_tokens=None)) == ("12345", "", "", "", "false")
    assert usage_fields(replace(USAGE, cost_usd=0.000000123)) == (
        "12345",
        "1500",
        "0.000000123",
        "estimated",
        "true",
    )
    assert usage_fields(None) == ("", "", "", "", "")


def test_the_told_row_sits_under_the_usage_and_leaves_with_it() -> None:
    told = [entry(0, usage=USAGE, tokens=TaskTokens(input=20000, output=1500))]
    wide = drawn(told, 200)
    at = wide[0].index("usage")
    assert wide[1][at:].startswith("12.3k/1.5k ~$0.042  ")
    assert wide[2].strip() == "told 20k/1.5k"
    assert wide[2].index("told") == at
    assert wide[3].startswith("1 task · 1 terminal · finished (1 completed) · usage 12.3k/1.5k ~$0.042")
    # without the usage column, no line is left for the told figures
    assert shown_columns(told, 130) == [
        "#",
        "status",
        "time",
        "goal",
        "result",
        "child session",
        "delegation",
        "subagent",
    ]
    narrow = drawn(told, 130)
    assert not any("told" in line for line in narrow)
    assert "" not in narrow[: narrow.index(next(line for line in narrow if line.startswith("1 task")))]
    # in blocks, the usage has its line and the told figures a note under the block
    blocks = drawn(told, 80)
    assert "  usage          12.3k/1.5k ~$0.042" in blocks
    assert blocks[8:10] == [
        "  told 20k/1.5k: the tokens the task's result told the parent (the usage above",
        "  is the proven sum)",
    ]


def test_a_tree_of_tasks_without_usage_shows_dashes_and_no_total() -> None:
    screen = drawn([entry(0), entry(1)], 200)
    at = screen[0].index("usage")
    assert [line[at : at + 5].strip() for line in screen[1:3]] == ["-", "-"]
    assert "· usage" not in screen[3]
