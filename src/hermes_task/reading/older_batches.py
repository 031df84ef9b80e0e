"""Load-older batches over `TaskReader.read_older` (pure of typer and rich).

A *batch* is what one "Load older" does: one raw page; or, with a text target, raw pages
until that many text rows arrived (`project.counts_as_text`: user and assistant prose;
tool, reasoning-only and status rows are kept and shown but do not count), at most
`MIN_TEXT_PAGES` pages. `--all` is one batch that reads to the start. Every batch also
stops at the visible start (the canonical segment's first row: a delegated child stores
nothing before its goal), raw exhaustion, or a page that brought no new row.

Restarts (the canonical segment changed, or a page missed its anchor twice) re-read the
newest page; they are not pages and are bounded by `MAX_RESTARTS`. A refresh that found a
gap, or a restart, is reported as a `gap` warning only if the paging ended before the
block reached the rows known before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from msgspec import Struct, field

from hermes_task.core.documents import WarningItem, warning
from hermes_task.core.projection import counts_as_text, project
from hermes_task.core.ui_strings import WarningCode
from hermes_task.core.window import MergeResult, RowKey, Window

if TYPE_CHECKING:
    from hermes_task.reading.reader import TaskReader

MIN_TEXT_PAGES = 10
ALL_PAGES = 10_000
MAX_RESTARTS = 3
FINAL_STOPS = frozenset({"start", "no_progress", "restart_bound"})


class Plan(Struct, frozen=True):
    """`batches` None reads to the start (`--all`); `min_text` makes batches text-aware;
    `limit` is the number of older rows asked for per page."""

    batches: int | None = 1
    min_text: int | None = None
    limit: int = 50


class Progress(Struct, frozen=True):
    """After each older page: pages read so far, unique rows known, rows the page added."""

    page: int
    rows: int
    new: int


class PagingOutcome(Struct):
    """What the batches did (`text_rows` is counted only for a text target). `stop` is why the last batch ended: `start` (the visible
    start), `no_progress` (a page added no row), `restart_bound`, `page_bound` (the
    per-batch page bound), `target` (the text target) or `page` (one raw page)."""

    pages: int = 0
    new_rows: int = 0
    text_rows: int = 0
    restarts: int = 0
    batches: int = 0
    stop: str = "page"
    warnings: list[WarningItem] = field(default_factory=list)


def _text_rows(window: Window, keys: Iterable[RowKey]) -> int:
    count = 0
    for key in keys:
        row = project(window.messages[key])
        if row is not None and counts_as_text(row):
            count += 1
    return count


class _Run:
    def __init__(self, reader: TaskReader, plan: Plan, on_page: Callable[[Progress], None] | None) -> None:
        self.reader = reader
        self.plan = plan
        self.on_page = on_page
        self.out = PagingOutcome()
        self.pending: tuple[RowKey, ...] | None = None  # the block before a gap or restart

    def _note_reset(self, before: Window, result: MergeResult) -> None:
        if self.pending is None and before.canonical == result.window.canonical and before.coverage:
            self.pending = before.keys[before.block_start :]

    def batch(self) -> str:
        """One batch; returns why it ended (`FINAL_STOPS` reasons end all paging)."""
        plan, reader = self.plan, self.reader
        bound = ALL_PAGES if plan.batches is None else MIN_TEXT_PAGES if plan.min_text else 1
        pages = text = 0
        while True:
            if reader.reached_start:
                return "start"
            if pages >= bound:
                return "page_bound" if plan.batches is None or plan.min_text else "page"
            before = reader.window
            result = reader.read_older(plan.limit)
            if result is None:
                return "start"
            if self._absorb(before, result):
                return "restart_bound"
            if result.stale or not result.returned:
                continue
            pages += 1
            text += self._count_page(result)
            stop = self._page_stop(result, text)
            if stop is not None:
                return stop

    def _absorb(self, before: Window, result: MergeResult) -> bool:
        """Take a read's new rows, warnings, resets and restarts into the outcome; True when
        the restarts passed `MAX_RESTARTS`."""
        out = self.out
        out.new_rows += len(result.new_keys)
        out.warnings += [w for w in result.warnings if w.code != "gap"]
        if result.gap or result.restarted:
            self._note_reset(before, result)
        if result.restarted or result.stale:
            out.restarts += 1
            return out.restarts > MAX_RESTARTS
        return False

    def _count_page(self, result: MergeResult) -> int:
        """Count a page that returned rows (and its text rows, for a text target), report it
        to `on_page`; returns its text rows."""
        out = self.out
        out.pages += 1
        found = _text_rows(result.window, result.new_keys) if self.plan.min_text is not None else 0
        out.text_rows += found
        if self.on_page is not None:
            self.on_page(Progress(page=out.pages, rows=len(result.window.keys), new=len(result.new_keys)))
        return found

    def _page_stop(self, result: MergeResult, text: int) -> str | None:
        """Why the batch ends after a counted page (`text` text rows in it so far), or None."""
        plan = self.plan
        if self.reader.reached_start:
            return "start"
        if not result.new_keys and not result.window.at_start:
            # A page of its anchor alone that reached its segment's start is progress: the
            # next read goes on to the segment before it.
            return "no_progress"
        if plan.min_text is not None and plan.batches is not None and text >= plan.min_text:
            return "target"
        return None

    def run(self) -> PagingOutcome:
        out, plan = self.out, self.plan
        while plan.batches is None or out.batches < plan.batches:
            out.batches += 1
            out.stop = self.batch()
            if out.stop in FINAL_STOPS or plan.batches is None:
                break
        window = self.reader.window
        if self.pending is not None and not set(self.pending) & set(window.keys[window.block_start :]):
            out.warnings.append(warning(WarningCode.gap))
        if out.stop == "page_bound":
            detail = (
                f"{out.pages} older pages read"
                if plan.batches is None
                else f"{MIN_TEXT_PAGES} pages without {plan.min_text} text rows"
            )
        elif out.stop == "restart_bound":
            detail = f"the transcript changed {out.restarts} times while paging"
        elif out.stop == "no_progress":
            detail = "an older page brought no new row"
        else:
            return out
        out.warnings.append(warning(WarningCode.bound_reached, detail))
        return out


def read_batches(
    reader: TaskReader, plan: Plan, *, on_page: Callable[[Progress], None] | None = None
) -> PagingOutcome:
    """Read `plan` older batches into `reader.window` (after its first refresh).

    Invariants: rows are only ever added to the window (unique by identity, server order);
    every stop before the start leaves `window.has_older` true; a text target counts only
    rows that older pages added.
    """
    return _Run(reader, plan, on_page).run()


def combine_warnings(*groups: Iterable[WarningItem]) -> list[WarningItem]:
    """Warnings in order of first appearance, one per code."""
    out: dict[str, WarningItem] = {}
    for group in groups:
        for item in group:
            out.setdefault(item.code, item)
    return list(out.values())
