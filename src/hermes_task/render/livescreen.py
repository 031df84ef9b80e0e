"""`hermes-task tui`'s screen (docs/commands.md "tui"): one more reporter of the watch loop, fed
from its thread by `EventFeed` with the events `follow --parent --json` writes. Every string
shown is a `Text` of sanitised text, never markup.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Vertical
from textual.events import MouseScrollUp, Resize
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, RichLog, Static

from hermes_task.core.delegations import number_order
from hermes_task.core.documents import ParentEntry, Row, TaskEntry, TasksDoc, WarningItem
from hermes_task.core.events import ErrorEvent, FollowEvent, ResultEvent, RowEvent, TaskEvent, WarningEvent
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, UNAVAILABLE, TaskStatus
from hermes_task.core.verdict import FAILED, exit_status, summarize, verdict
from hermes_task.failures import ExitStatus, HermesError
from hermes_task.render.rows import View, duration_text, gap_text, result_line, row_view, summary_line, when
from hermes_task.render.terminal_rows import Painter
from hermes_task.render.watchout import JsonEvents

STACK_BELOW = 120  # narrower than this, the transcript goes under the table
CHILD_WIDTH = 22  # a child id as the backends write it (YYYYMMDD_HHMMSS_xxxxxx)
MIN_GOAL = 8
SIDE_GOAL = 20  # the goal's least room beside the transcript
MAX_GOAL = 40
MIN_PANE = 40  # the transcript's least width beside the table
GOAL_SHOWN = 300  # the selected task's goal, above its pane
# the table's columns but the goal, each cell padded by one on both sides, and the scroll bar
WIDTHS = {"#": 5, "status": 14, "time": 6, "child session": CHILD_WIDTH}
FIXED = sum(WIDTHS.values()) + 2 * 5 + 2

# the table's labels that would not fit its status column (the pane says them in full)
SHORT_LABELS = {
    TaskStatus.ended_unreported.label: "◌ unreported",
    TaskStatus.completed.label + " (store)": "✓ completed*",
}

SIGNALS = {signal.SIGTERM: int(ExitStatus.TERMINATED), signal.SIGHUP: int(ExitStatus.HANGUP)}

Emit = Callable[[FollowEvent, str | None], None]


class EventFeed(JsonEvents):
    """Each report as its event, handed to `emit` with the task it concerns (None: the parent's)."""

    def __init__(self, emit: Emit) -> None:
        # Writes no text: every event goes through `_event`, and a failure's stderr line is the screen's.
        super().__init__(lambda _text: None, lambda _text: None)
        self.emit = emit
        self.task_of: str | None = None

    def _event(self, payload: FollowEvent) -> None:
        self.emit(payload, self.task_of)

    def child_warning(self, entry: TaskEntry, item: WarningItem) -> None:
        self.task_of = key_of(entry)  # `emit` only posts: nothing raises in between
        super().child_warning(entry, item)
        self.task_of = None

    def child_error(self, entry: TaskEntry, error: HermesError, *, retrying: bool) -> None:
        self.task_of = key_of(entry)
        super().child_error(entry, error, retrying=retrying)
        self.task_of = None


class Fed(Message):
    def __init__(self, event: FollowEvent, task: str | None) -> None:
        super().__init__()
        self.event = event
        self.task = task


@dataclass
class Loop:
    """A started watch loop: `stop()` ends it at its next wait (the cli's `sleep` raises)."""

    stop_event: threading.Event
    thread: threading.Thread | None = None  # None: no thread of its own (tools/regen.py)

    def stop(self, wait: float = 5.0) -> None:
        self.stop_event.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join(wait)


# What the command gives the app: start the loop on a parent; list the parents; read a child's older rows.
StartLoop = Callable[[str, Emit], Loop]
ListParents = Callable[[], tuple[list[ParentEntry], list[WarningItem]]]
ReadOlder = Callable[[str], tuple[list[Row], list[WarningItem], bool]]


def key_of(entry: TaskEntry) -> str:
    return entry.number or "?"


def number_text(key: str) -> str:
    """A task's `#`; a nested one's (`1.2/1.1`) indented under its task (`  ↳ 1.1`)."""
    depth = key.count("/")
    return "  " * depth + "↳ " + key.rpartition("/")[2] if depth else key


def quit_status(entries: Sequence[TaskEntry], result: ResultEvent | None, wanted: bool) -> int:
    if not wanted:
        return 0
    return result.exit_code if result is not None else int(exit_status(list(entries)))


def cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def task_cells(entry: TaskEntry, goal_room: int) -> list[Text]:
    label = entry.status.label
    if entry.result_source == "store":
        label += " (store)"
    label = cut(SHORT_LABELS.get(label, label), WIDTHS["status"])
    goal = clean_line(entry.goal or "(no goal recorded)")
    child = clean_line(entry.child_session_id) if entry.child_session_id else "-"
    return [
        Text(clean_line(number_text(key_of(entry))), no_wrap=True),
        Text(label, style=entry.status.style),
        Text(duration_text(entry.duration_seconds) or "-"),
        Text(cut(goal, goal_room)),
        Text(child, no_wrap=True),
    ]


class Transcript(RichLog):
    """The selected task's rows; scrolling up turns follow off."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move('up')", "up", show=False),
        Binding("down,j", "move('down')", "down", show=False),
        Binding("pageup", "move('page_up')", "page up", show=False),
        Binding("home,g", "move('home')", "top", show=False),
        Binding("end,G", "move('end')", "bottom", show=False),
    ]

    class ScrolledUp(Message):
        pass

    def action_move(self, where: str) -> None:
        if where in ("up", "page_up", "home"):
            self.post_message(self.ScrolledUp())
        getattr(self, f"scroll_{where}")(animate=False)

    def _on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        self.post_message(self.ScrolledUp())


class TextScreen(ModalScreen[None]):
    """A modal of lines (help: filtered by what is typed; the CLI command): Esc closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss", "close")]
    DEFAULT_CSS = """
    TextScreen { align: center middle; }
    TextScreen > Vertical { width: 90%; height: auto; max-height: 90%; border: round $accent;
                            background: $surface; padding: 0 1; }
    TextScreen #lines { height: auto; }
    """

    def __init__(self, title: str, lines: Sequence[str], *, searchable: bool = False) -> None:
        super().__init__()
        self.title_text = title
        self.lines = list(lines)
        self.searchable = searchable

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text, style="bold"))
            if self.searchable:
                yield Input(placeholder="type to filter", id="filter")
            yield Static(self._text(""), id="lines")

    def _text(self, query: str) -> Text:
        wanted = [line for line in self.lines if query.casefold() in line.casefold()]
        return Text("\n".join(wanted) if wanted else "(nothing matches)")

    @on(Input.Changed, "#filter")
    def _filter(self, event: Input.Changed) -> None:
        self.query_one("#lines", Static).update(self._text(event.value))


class ParentsScreen(Screen[str]):
    """`hermes-task parents` as a list: Enter opens the chosen parent."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "app.quit_screen", "quit"),
        Binding("j", "focused.cursor_down", "down", show=False),
        Binding("k", "focused.cursor_up", "up", show=False),
    ]

    def __init__(self, parents: ListParents) -> None:
        super().__init__()
        self.list_parents = parents
        self.entries: list[ParentEntry] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("reading the parents (the chats that called delegate_task)…"), id="parents-state")
        yield DataTable(id="parents", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#parents", DataTable)
        for name in ("parent", "state", "started", "children", "title"):
            table.add_column(name, key=name)
        self._load()

    @work(thread=True, exit_on_error=False)
    def _load(self) -> None:
        try:
            found = self.list_parents()
        except HermesError as err:
            failed = Text(f"error: {clean_line(err.message)}", style="bold red")
            self.app.call_from_thread(lambda: self.query_one("#parents-state", Static).update(failed))
            return
        self.app.call_from_thread(self._show, *found)

    def _show(self, entries: list[ParentEntry], warnings: list[WarningItem]) -> None:
        self.entries = entries
        table = self.query_one("#parents", DataTable)
        for entry in entries:
            words = entry.title or entry.first_words or ""
            table.add_row(
                Text(clean_line(entry.id), no_wrap=True),
                Text(clean_line(entry.state)),
                Text(when(entry.started_at)),
                Text(f"{entry.delegated_children}{'+' if entry.more_children else ''}"),
                Text(cut(clean_line(words), 60)),
                key=entry.id,
            )
        state = "no chat in the store called delegate_task (that the dashboard shows)"
        if entries:
            state = f"{len(entries)} parents · Enter opens one · q quits"
        notes = [clean_line(w.message) for w in warnings]
        self.query_one("#parents-state", Static).update(Text(" · ".join([state, *notes])))
        table.focus()

    @on(DataTable.RowSelected, "#parents")
    def _chosen(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.dismiss(event.row_key.value)


class TaskScreenApp(App[int]):
    TITLE = "hermes-task"
    CSS = """
    #header { height: auto; background: $boost; padding: 0 1; }
    #body { layout: horizontal; height: 1fr; }
    #body.narrow { layout: vertical; }
    #tasks { height: 100%; }
    #body.narrow #tasks { height: 40%; }
    #side { width: 1fr; height: 100%; border-left: solid $primary; }
    #body.narrow #side { height: 1fr; border-left: none; border-top: solid $primary; }
    #pane-title { height: auto; max-height: 5; padding: 0 1; background: $boost; }
    #transcript { height: 1fr; padding: 0 1; }
    #notes { height: 1; padding: 0 1; color: $text-muted; }
    #search { display: none; }
    #search.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit_screen", "quit"),
        Binding("j,down", "select(1)", "next", show=False),
        Binding("k,up", "select(-1)", "previous", show=False),
        Binding("g", "select(-1_000_000)", "first", show=False),  # as far as the table goes
        Binding("G", "select(1_000_000)", "last", show=False),
        Binding("tab,enter", "focus_transcript", "transcript"),
        Binding("escape", "to_tasks", "back", show=False),
        Binding("f", "switch('follow')", "follow"),
        Binding("w", "switch('wrap')", "wrap"),
        Binding("r", "switch('reasoning')", "reasoning"),
        Binding("o", "older", "older"),
        Binding("slash", "search", "search"),
        Binding("n", "next_match(1)", "next match", show=False),
        Binding("N", "next_match(-1)", "previous match", show=False),
        Binding("e", "switch('only_wrong')", "went wrong"),
        Binding("s", "cycle_status", "status"),
        Binding("y", "copy_id", "copy id"),
        Binding("c", "command", "command"),
        Binding("question_mark", "help", "help"),
    ]
    KEYS = (
        "j / k / ↓ / ↑   select the next / previous task",
        "g / G           the first / last task",
        "Tab / Enter     focus the transcript (Esc: back to the tasks)",
        "f               follow the selected task's new rows (on by default; scrolling up stops it)",
        "w               wrap long lines",
        "r               show reasoning rows in full",
        "o               load older rows of the task (as `hermes-task older`)",
        "/               search the transcript; n / N the next / previous match",
        "e               only the tasks that went wrong (again: every task)",
        "s               cycle a status filter",
        "y               copy the child id (OSC 52)",
        "c               the equivalent CLI commands",
        "?               this help (type to filter)",
        "q               quit (--exit-status: the verdict's status)",
    )

    def __init__(
        self,
        *,
        start: StartLoop,
        parent_id: str | None = None,
        parents: ListParents | None = None,
        older: ReadOlder | None = None,
        url: str = "",
        interval: float = 2.0,
        exit_status: bool = False,
    ) -> None:
        super().__init__()
        self.start = start
        self.parent_id = parent_id
        self.list_parents = parents
        self.read_older = older
        self.url = url
        self.interval = interval
        self.wanted_status = exit_status
        self.loop: Loop | None = None
        self.tasks: dict[str, TaskEntry] = {}
        self.rows: dict[str, list[Row]] = {}
        self.task_notes: dict[str, list[str]] = {}
        self.at_start: dict[str, bool] = {}
        self.notes: list[str] = []
        self.result: ResultEvent | None = None
        self.selected: str | None = None
        self.shown: list[str] = []  # the task keys in the table, in order
        self.follow = True
        self.wrap = True
        self.reasoning = False
        self.only_wrong = False
        self.status_filter: str | None = None
        self.query_text = ""
        self.matches: list[int] = []  # line offsets of the rows that match
        self.match = -1
        self.lines_of: list[int] = []  # each shown row's first line in the transcript
        self.room = [0, 0]  # the goal column's width, the number column's
        self.columns = 80  # the terminal's width, as the last resize said

    def compose(self) -> ComposeResult:
        yield Static(Text(""), id="header")
        with Container(id="body"):
            yield DataTable(id="tasks", cursor_type="row", zebra_stripes=True)
            with Vertical(id="side"):
                yield Static(Text(""), id="pane-title")
                yield Transcript(id="transcript", markup=False, highlight=False, wrap=True, auto_scroll=False)
        yield Static(Text(""), id="notes")
        yield Input(placeholder="search the transcript (Enter; Esc cancels)", id="search")
        yield Footer()

    def on_mount(self) -> None:
        # SIGTERM and SIGHUP end the screen as they end every command (the shell's handlers
        # cannot raise into Textual's event loop); not on the main thread, the signals stay.
        loop = asyncio.get_running_loop()
        for sig, status in SIGNALS.items():
            try:
                loop.add_signal_handler(sig, self._signalled, status)
            except (RuntimeError, ValueError):
                break
        self._layout(self.size.width)
        if self.parent_id is None and self.list_parents is not None:
            self.push_screen(ParentsScreen(self.list_parents), self._open)
        elif self.parent_id is not None:
            self._open(self.parent_id)
        self.query_one("#tasks", DataTable).focus()

    def _signalled(self, status: int) -> None:
        if self.loop is not None:
            self.loop.stop_event.set()
        self.exit(status)

    def _open(self, parent_id: str | None) -> None:
        if parent_id is None:
            return
        self.parent_id = parent_id
        self._header()
        self._show_pane()
        self.loop = self.start(parent_id, self._emit)

    def _emit(self, event: FollowEvent, task: str | None) -> None:
        self.post_message(Fed(event, task))  # from the loop's thread: never waits

    def on_resize(self, event: Resize) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        self.columns = width
        body = self.query_one("#body")
        body.set_class(width < STACK_BELOW, "narrow")
        self.room = [0, 0]  # the columns laid out again
        self._fill_table()
        self.call_after_refresh(self._show_pane)

    def _widths(self) -> tuple[int, int, int]:
        """The table's width, its goal column's and its `#` column's (the widest number); beside
        the transcript, the goal's room grows with the width, the transcript keeping 40%."""
        number = max([WIDTHS["#"], *(len(number_text(key)) for key in list(self.tasks))])
        fixed = FIXED + number - WIDTHS["#"]  # the table's width but the goal's
        width = self.columns
        if width >= STACK_BELOW:
            width = min(max(fixed + SIDE_GOAL, width - max(MIN_PANE, width * 2 // 5)), fixed + MAX_GOAL)
        return width, max(MIN_GOAL, width - fixed), number

    def on_fed(self, message: Fed) -> None:
        event = message.event
        if isinstance(event, TaskEvent):
            key = key_of(event)
            self.tasks[key] = event
            shown = self.rows.setdefault(key, [])
            self._fill_table()
            self._header()
            if key == self.selected and shown:
                self._pane_title(key, event)
            elif key == self.selected:
                self._show_pane()
        elif isinstance(event, RowEvent):
            key = (event.task.number if event.task is not None else None) or "?"
            rows = self.rows.setdefault(key, [])
            rows.append(event)
            if key == self.selected and len(rows) > 1:
                self._write_row(event)
            elif key == self.selected:
                self._show_pane()
        elif isinstance(event, WarningEvent | ErrorEvent):
            label = (
                "warning" if isinstance(event, WarningEvent) else "retrying" if event.retryable else "error"
            )
            self._note(message.task, f"{label}: {clean_line(event.message)}")
        elif isinstance(event, ResultEvent):
            self.result = event
            self._header()

    def _note(self, task: str | None, text: str) -> None:
        if task is not None:
            self.task_notes.setdefault(task, []).append(text)
            text = f"task {clean_line(task)}: {text}"
        self.notes.append(text)
        self.query_one("#notes", Static).update(Text(text, style="yellow", no_wrap=True, overflow="ellipsis"))

    def _header(self) -> None:
        entries, result = list(self.tasks.values()), self.result
        head = Text("parent ", style="dim")
        head.append(clean_line(self.parent_id or "-"), style="bold")
        head.append(f"  ·  {clean_line(self.url)}", style="dim")
        if entries:
            doc = TasksDoc(parent_id=self.parent_id or "", tasks=entries, summary=summarize(entries))
            head.append(f"\n{summary_line(doc)} · verdict so far: {verdict(entries)}")
        else:
            head.append("\nno task read yet" if result is None else "\nno delegated tasks")
        if result is None:
            state = f"watching every {self.interval:g}s"
        elif result.end_reason and result.state == "ended":
            state = f"every task ended ({clean_line(result.end_reason)}) · the watch stopped"
        else:
            state = f"the watch stopped ({clean_line(result.state)}, exit {result.exit_code})"
            state += f" · verdict so far: {verdict(entries)}" if entries else ""
        head.append(f"\n{state}", style="dim")
        self.query_one("#header", Static).update(head)

    def _fill_table(self) -> None:
        table: DataTable[Text] = self.query_one("#tasks", DataTable)
        in_order = sorted(self.tasks.values(), key=lambda e: [number_order(n) for n in key_of(e).split("/")])
        visible = [
            entry
            for entry in in_order  # each nested task right under its task
            if not (self.only_wrong and entry.status not in FAILED)
            and self.status_filter in (None, entry.status)
        ]
        width, *room = self._widths()
        keys = [key_of(e) for e in visible]
        if room != self.room:
            self.room, self.shown = room, []
            table.clear(columns=True)
            widths = {**WIDTHS, "#": room[1]}
            for name in ("#", "status", "time", "goal", "child session"):
                table.add_column(name, key=name, width=widths.get(name, room[0]))
            table.styles.width = "100%" if self.columns < STACK_BELOW else width
        if keys != self.shown:
            table.clear()
            for entry in visible:
                table.add_row(*task_cells(entry, room[0]), key=key_of(entry))
            self.shown = keys
        else:
            for entry in visible:
                for column, cell in zip(table.columns, task_cells(entry, room[0]), strict=True):
                    table.update_cell(key_of(entry), column, cell)
        if keys and (self.selected not in keys):
            self._select(keys[0])
        elif self.selected in keys:
            table.move_cursor(row=keys.index(self.selected or ""), animate=False)

    def _select(self, key: str) -> None:
        changed = key != self.selected
        self.selected = key
        if key in self.shown:
            self.query_one("#tasks", DataTable).move_cursor(row=self.shown.index(key), animate=False)
        if changed:
            self.follow = True
            self.query_text, self.matches, self.match = "", [], -1
            self._show_pane()

    @on(DataTable.RowHighlighted, "#tasks")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None and event.row_key.value != self.selected:
            self._select(event.row_key.value)

    def _painter(self) -> Painter:
        pane = self.query_one("#transcript", Transcript)
        width = pane.scrollable_content_region.width if self.wrap else 0
        return Painter(color=True, width=width - 1 if width > 20 else None, markdown=False)

    def _row_text(self, row: Row, painter: Painter) -> Text:
        text = Text.from_ansi(painter.row(row_view(row, View(reasoning=self.reasoning))), no_wrap=True)
        if self.query_text:
            text.highlight_words([self.query_text], style="reverse", case_sensitive=False)
        return text

    def _show_pane(self) -> None:
        """The selected task's pane, drawn again whole."""
        pane = self.query_one("#transcript", Transcript)
        pane.clear()
        self.lines_of = []
        key = self.selected
        entry = self.tasks.get(key or "")
        if entry is None or key is None:
            self.query_one("#pane-title", Static).update(Text(""))
            pane.write(Text("no task selected" if self.tasks else "no task read yet", style="dim"))
            return
        pane.wrap = self.wrap
        self._pane_title(key, entry)
        rows = self.rows.get(key, [])
        if rows and not self.at_start.get(key, False):
            pane.write(Text("(o: load older rows)", style="dim"))
        for note in self.task_notes.get(key, []):
            pane.write(Text(note, style="yellow"))
        if not rows:
            pane.write(Text(self._why_no_rows(key, entry), style="dim"))
            return
        if entry.gap:
            pane.write(Text(gap_text(entry), style="dim"))
        painter = self._painter()
        for row in rows:
            self._write_row(row, painter, scroll=False)
        if self.follow:
            pane.scroll_end(animate=False, immediate=True)

    def _why_no_rows(self, key: str, entry: TaskEntry) -> str:
        """In `recover`'s words; a nested task's child may be another task's conversation."""
        child = entry.child_session_id
        if entry.gap:
            return gap_text(entry)
        if child is None:
            reason = UNAVAILABLE.get(entry.unavailable_reason or "", "no child session id is known")
            return RECOVER["unavailable"].format(reason=reason)
        found = [k for k, e in self.tasks.items() if k != key and e.child_session_id == child]
        if "/" in key and (child == self.parent_id or found):
            where = "the parent chat" if child == self.parent_id else f"task {clean_line(found[0])}"
            return f"this task's child is {where}'s conversation: it is read there, once"
        return "no row read yet: the child's rows appear as they are read"

    def _pane_title(self, key: str, entry: TaskEntry) -> None:
        title = Text(clean_line(entry.child_session_id or "no child session"), style="bold")
        title.append(f"\ntask {clean_line(key)} · ")
        state = Text(entry.status.label, style=entry.status.style)
        outcome = result_line(entry, None) if entry.terminal else ""
        if outcome:
            state.append(f" · {outcome}")
        if entry.result_source == "store":
            state.append(f" · {RECOVER['store_note']}", style="dim")
        title.append_text(state)
        title.append("\n" + cut(clean_line(entry.goal or "(no goal recorded)"), GOAL_SHOWN), style="dim")
        self.query_one("#pane-title", Static).update(title)

    def _write_row(self, row: Row, painter: Painter | None = None, *, scroll: bool = True) -> None:
        pane = self.query_one("#transcript", Transcript)
        text = self._row_text(row, painter or self._painter())
        self.lines_of.append(len(pane.lines))
        pane.write(text, scroll_end=False)
        if scroll and self.follow:
            pane.scroll_end(animate=False, immediate=True)

    @on(Transcript.ScrolledUp)
    def _scrolled_up(self) -> None:
        self.follow = False

    def action_select(self, step: int) -> None:
        if self.shown:
            at = self.shown.index(self.selected) if self.selected in self.shown else 0
            self._select(self.shown[max(0, min(len(self.shown) - 1, at + step))])

    @on(DataTable.RowSelected, "#tasks")
    def action_focus_transcript(self) -> None:
        self.query_one("#transcript", Transcript).focus()

    def action_to_tasks(self) -> None:
        self.query_one("#search", Input).remove_class("shown")
        self.query_one("#tasks", DataTable).focus()

    def action_switch(self, switch: str) -> None:
        on = not getattr(self, switch)
        setattr(self, switch, on)
        if switch == "follow":
            if on:
                self.query_one("#transcript", Transcript).scroll_end(animate=False)
            self.notify(f"follow {'on' if on else 'off'}", timeout=2)
        elif switch == "only_wrong":
            self._fill_table()
            self.notify("only the tasks that went wrong" if on else "every task", timeout=2)
        else:
            self._show_pane()

    def action_cycle_status(self) -> None:
        present = [s for s in TaskStatus if any(e.status == s for e in self.tasks.values())]
        cycle: list[str | None] = [None, *present]
        at = cycle.index(self.status_filter) if self.status_filter in cycle else 0
        self.status_filter = cycle[(at + 1) % len(cycle)]
        self._fill_table()
        self.notify(f"status: {self.status_filter or 'every task'}", timeout=2)

    def _child(self) -> str | None:
        entry = self.tasks.get(self.selected or "")
        return None if entry is None else entry.child_session_id

    def action_copy_id(self) -> None:
        child = self._child()
        if child is None:
            self.notify("this task has no proven child session id", severity="warning", timeout=3)
            return
        self.copy_to_clipboard(child)
        self.notify(f"copied {clean_line(child)}", timeout=3)

    def action_command(self) -> None:
        parent, child = clean_line(self.parent_id or "PARENT_ID"), clean_line(self._child() or "")
        own = [f"hermes-task {verb} {child}" for verb in ("show", "follow", "older")] if child else []
        lines = [*own, f"hermes-task recover {parent} --watch", f"hermes-task follow --parent {parent}"]
        self.push_screen(TextScreen("the same from the command line (Esc closes)", lines))

    def action_help(self) -> None:
        self.push_screen(TextScreen("keys (Esc closes)", self.KEYS, searchable=True))

    def action_search(self) -> None:
        search = self.query_one("#search", Input)
        search.add_class("shown")
        search.value = self.query_text
        search.focus()

    @on(Input.Submitted, "#search")
    def _searched(self, event: Input.Submitted) -> None:
        self.query_text = event.value
        event.input.remove_class("shown")
        self.query_one("#tasks", DataTable).focus()
        rows = self.rows.get(self.selected or "", [])
        painter = self._painter()
        needle = self.query_text.casefold()
        self.follow = False
        self._show_pane()
        self.matches = [
            self.lines_of[i]
            for i, row in enumerate(rows[: len(self.lines_of)])
            if needle and needle in self._row_text(row, painter).plain.casefold()
        ]
        self.match = -1
        if not self.matches:
            self.notify(
                f"no row matches {clean_line(self.query_text)!r}" if needle else "search cleared", timeout=3
            )
            return
        self.action_next_match(1)

    def action_next_match(self, step: int) -> None:
        if not self.matches:
            return
        self.match = (self.match + step) % len(self.matches)
        self.follow = False
        pane = self.query_one("#transcript", Transcript)
        pane.scroll_to(y=self.matches[self.match], animate=False, immediate=True)
        self.notify(f"match {self.match + 1} of {len(self.matches)}", timeout=2)

    def action_older(self) -> None:
        child = self._child()
        key = self.selected
        if child is None or key is None or self.read_older is None:
            self.notify("no child session to read older rows of", severity="warning", timeout=3)
            return
        self._older(key, child)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _older(self, key: str, child: str) -> None:
        assert self.read_older is not None
        try:
            older, warnings, at_start = self.read_older(child)
        except HermesError as err:
            self.call_from_thread(self._note, key, f"error: {clean_line(err.message)}")
            return
        self.call_from_thread(self._prepend, key, older, warnings, at_start)

    def _prepend(self, key: str, older: list[Row], warnings: list[WarningItem], at_start: bool) -> None:
        known = {(row.session_id, row.id) for row in self.rows.get(key, [])}
        first = next((i for i, row in enumerate(older) if (row.session_id, row.id) in known), len(older))
        fresh = older[:first]  # the rows before the oldest shown (newer ones come from the loop)
        self.rows[key] = fresh + self.rows.get(key, [])
        self.at_start[key] = at_start
        for item in warnings:
            self.task_notes.setdefault(key, []).append(f"warning: {clean_line(item.message)}")
        if key == self.selected:
            self.follow = False
            self._show_pane()
            self.query_one("#transcript", Transcript).scroll_home(animate=False)
        more = "the start of the transcript" if at_start else "o loads more"
        self.notify(f"{len(fresh)} older rows · {more}", timeout=3)

    def action_quit_screen(self) -> None:
        wanted = self.wanted_status and self.parent_id is not None
        self._signalled(quit_status(list(self.tasks.values()), self.result, wanted))
