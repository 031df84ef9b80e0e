"""A parent chat's tasks as `recover` reads them (docs/commands.md, "`--recursive`"; docs/identity.md,
"A parent's tasks", "Completions the parent has not received") and the child reads of `search`,
the reports and `export`, each child once a run. GET only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import TypeVar

from msgspec import Struct
from msgspec.structs import replace

from hermes_task.core.delegations import (
    RESULT_FIELDS,
    TERMINAL_STATUSES,
    LedgerRecord,
    Proposal,
    call_sessions,
    number_order,
    propose,
    recover,
)
from hermes_task.core.documents import (
    Missing,
    TaskEntry,
    TasksDoc,
    TranscriptDoc,
    Usage,
    WarningItem,
    combine,
    warning,
    with_missing,
)
from hermes_task.core.lineage import held
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, SEARCH, UNAVAILABLE, TaskStatus, WarningCode
from hermes_task.core.verdict import summarize
from hermes_task.core.wire import MAX_LIMIT, SessionDetail, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI, SharedDetails, gather
from hermes_task.reading.hints import StoreHints, admit, find_children, owned_by
from hermes_task.reading.polling import FINAL_RETRIES
from hermes_task.reading.proof import ChildProof, ChildState
from hermes_task.reading.reader import TaskReader, Transcript, history_warnings, merge_warnings
from hermes_task.reading.stream import Plan, combine_warnings, read_batches

A = TypeVar("A")
T = TypeVar("T")
MAX_DEPTH = 8
MAX_CONVERSATIONS = 1000
MAX_IDLE_PAGES = 3


class Conversation(Struct, frozen=True):
    """One read transcript: its rows, the anchor's detail and the proven lineage (anchor first)."""

    session_id: str
    messages: tuple[WireMessage, ...]
    anchor: SessionDetail
    path: tuple[str, ...]
    warnings: tuple[WarningItem, ...] = ()
    usage: Usage | None = None  # summed over `path` from the details its proof read


def _bound(detail: str) -> WarningItem:
    return warning(WarningCode.bound_reached, detail)


def read_history(reader: TaskReader, pages: int | None = None) -> list[WarningItem]:
    """The first cycle, then older pages until the start, `pages` or `MAX_IDLE_PAGES` idle ones."""
    warnings = list(reader.refresh().warnings)
    read, idle = 1, 0
    while pages is None or read < pages:
        result = reader.read_older(limit=MAX_LIMIT, across=False)
        if result is None:
            break
        warnings += result.warnings  # a refresh made while paging (a restart, a re-anchor)
        read += 1
        idle = 0 if result.new_keys else idle + 1
        if idle >= MAX_IDLE_PAGES:
            break
    window, cur = reader.window, reader.cursor()
    # The history's warnings after the last page, in place of the ones each refresh reported.
    history = history_warnings(reader.view(), cur, cold_open=bool(reader.continues_parent))
    warnings = list(dict.fromkeys(merge_warnings(warnings, history)))
    unread = cur.kind in ("first", "blocked") and not held(cur.sid or "", [window])
    if unread and all(w.code != "partial_ancestors" for w in warnings):
        # an earlier segment of this conversation none of whose rows its pages carry
        warnings.append(warning(WarningCode.partial_ancestors))
    if not window.at_start:
        key = "pages_bound" if pages is not None and read >= pages else "pages_stalled"
        warnings.append(_bound(RECOVER[key].format(pages=read, sid=clean_line(reader.anchor_id))))
    return warnings


def read_conversation(reader: TaskReader, pages: int | None = None) -> Conversation:
    warnings = read_history(reader, pages)
    view = reader.view()
    assert reader.anchor is not None
    return Conversation(
        session_id=reader.anchor_id,
        messages=tuple(view.messages[k] for k in view.keys),
        anchor=reader.anchor,
        path=reader.path,
        warnings=tuple(warnings),
        usage=reader.usage(),
    )


Resolve = Callable[[Conversation, list[TaskEntry]], list[TaskEntry]]


@dataclass
class _Walk:
    read: Callable[[str], Conversation]
    resolve: Resolve
    detail: Callable[[str], SessionDetail] | None
    max_depth: int
    max_conversations: int
    debug: Callable[[str], None] | None
    visited: set[str] = field(default_factory=set)
    warnings: list[WarningItem] = field(default_factory=list)
    reads: int = 0
    deep: int = 0  # tasks at the depth bound whose child was not read
    cut: int = 0  # tasks past the conversation bound whose child was not read
    unread: set[str] = field(default_factory=set)  # children a bound or a failed read left unread

    def expand(self, conv: Conversation, depth: int) -> list[TaskEntry]:
        """The conversation's tasks, their children read side by side, expanded in task order."""
        out = self.resolve(conv, recover(conv.messages))
        chosen: list[int] = []
        for i, task in enumerate(out):
            ref = task.child_session_id
            if ref is None or ref in self.visited:
                out[i] = _nested(task, None)
                continue
            deep = depth >= self.max_depth
            if deep or self.reads >= self.max_conversations:
                self.deep, self.cut = self.deep + deep, self.cut + (not deep)
                self.unread.add(ref)
                out[i] = _nested(task, "nested")
            else:
                self.visited.add(ref)
                self.reads += 1
                chosen.append(i)
        parents = frozenset(conv.path)  # the segments whose rows carry every spawn call
        jobs = [lambda ref=out[i].child_session_id: self._child(ref or "", parents) for i in chosen]
        covered: set[str] = set()  # the lineages of the siblings expanded before
        for i, got in zip(chosen, gather(jobs, what="child conversations", debug=self.debug), strict=True):
            out[i] = self._with_child(out[i], got, covered, depth)
        return out

    def _with_child(
        self, task: TaskEntry, got: Conversation | str, covered: set[str], depth: int
    ) -> TaskEntry:
        """`task` with its child's read (`got`: the conversation, or a gap's code), expanded."""
        if task.child_session_id in covered:  # a segment of a sibling's lineage: it holds the tasks
            return _nested(task, None)
        if got == Code.IDENTITY_MISMATCH.value:  # not this parent's child: nor its usage
            return _nested(replace(task, gap=got, usage=None), None)
        if isinstance(got, str):
            self.unread.add(task.child_session_id or "")
            return _nested(replace(task, gap=got), "nested")
        lineage = {*got.path, *(m.session_id for m in got.messages)}
        covered.update(lineage)
        self.visited |= lineage
        self.warnings += [w for w in got.warnings if w.code == "bound_reached"]
        kids = self.expand(got, depth + 1)
        # A nested child left unread makes the sum lack `nested`, even when its task has no usage.
        lacks: tuple[Missing, ...] = (
            ("nested",) if any(k.child_session_id in self.unread for k in kids) else ()
        )
        whole = combine([got.usage, *(k.usage_with_children for k in kids)], extra=lacks)
        return replace(task, children=kids, usage=got.usage, usage_with_children=whole)

    def _child(self, ref: str, parents: frozenset[str]) -> Conversation | str:
        """The child's conversation, or its `gap` code (a worker thread's: touches only its reads)."""
        try:
            if self.detail is not None and not owned_by(self.detail(ref), parents, self.detail):
                return Code.IDENTITY_MISMATCH.value
            child = self.read(ref)
        except HermesError as exc:
            if exc.code is Code.INTERRUPTED:
                raise
            return exc.code.value
        if self.detail is None and not owned_by(child.anchor, parents):
            return Code.IDENTITY_MISMATCH.value
        return child


def _nested(task: TaskEntry, reason: Missing | None) -> TaskEntry:
    """A task not descended into: its own `usage`, lacking `reason` (nested tasks unread)."""
    return replace(task, usage_with_children=with_missing(task.usage, reason) if reason else task.usage)


def build(
    parent: Conversation,
    read_child: Callable[[str], Conversation],
    *,
    recursive: bool,
    resolve: Resolve = lambda conv, tasks: tasks,
    read_detail: Callable[[str], SessionDetail] | None = None,
    max_depth: int = MAX_DEPTH,
    max_conversations: int = MAX_CONVERSATIONS,
    debug: Callable[[str], None] | None = None,
) -> tuple[list[TaskEntry], list[WarningItem]]:
    """The parent's tasks (nested when `recursive`) and the read's warnings."""
    if not recursive:
        return resolve(parent, recover(parent.messages)), list(parent.warnings)
    walk = _Walk(read_child, resolve, read_detail, max_depth, max_conversations, debug)
    walk.visited = {parent.session_id, *parent.path, *(m.session_id for m in parent.messages)}
    walk.warnings = list(parent.warnings)
    tasks = walk.expand(parent, 0)
    if walk.deep:
        walk.warnings.append(_bound(RECOVER["depth_bound"].format(depth=max_depth, left=walk.deep)))
    if walk.cut:
        walk.warnings.append(_bound(RECOVER["visit_bound"].format(n=max_conversations, left=walk.cut)))
    return tasks, list(dict.fromkeys(walk.warnings))  # each once


RUN_WIDE = frozenset({"legacy_backend", "store_unavailable"})  # said once for a run, not per child
MAX_READS = 100  # whole transcripts read for one search or report


class Unread(Struct, frozen=True):
    code: str
    message: str


def read_child(
    client: DashboardAPI,
    child_id: str,
    parents: frozenset[str],
    hints: StoreHints | None,
    *,
    pages: int | None = None,
    shared: SharedDetails | None = None,
) -> Transcript:
    detail = shared or client.detail
    reader = TaskReader(client, child_id, hint=True, store=hints, admit=admit(parents, detail), shared=shared)
    try:
        snap = reader.refresh()
        reader.fill()
        paging = []
        if pages != 1:
            batches = None if pages is None else pages - 1
            paging = read_batches(reader, Plan(batches=batches, limit=MAX_LIMIT)).warnings
    except HermesError as exc:  # this child only (Ctrl-C is KeyboardInterrupt: it ends the run)
        return Transcript(rows=reader.rows(), failure=exc, segments=tuple(reader.path))
    doc = reader.document(combine_warnings(snap.warnings, paging))
    return Transcript(rows=doc.rows, doc=doc, failure=snap.failure, segments=tuple(reader.path))


def unread(task: TaskEntry) -> Unread | None:
    """Why `task`'s child cannot be read (no id known), or None."""
    if task.child_session_id is not None:
        return None
    code = task.unavailable_reason or "no_durable_child_reference"
    return Unread(code, UNAVAILABLE.get(task.unavailable_reason or "", SEARCH["no_child"]))


@dataclass(eq=False)
class ChildReads:
    """A run's children, each read once, at most `max_reads` (`bound`: the words past it)."""

    client: DashboardAPI
    hints: StoreHints | None
    _: KW_ONLY
    pages: int | None = None
    max_reads: int = MAX_READS
    bound: str = ""
    shared: SharedDetails | None = None
    done: dict[str, Transcript] = field(default_factory=dict, init=False)

    def read(self, task: TaskEntry, parents: frozenset[str]) -> Transcript | Unread:
        if (missing := unread(task)) is not None:
            return missing
        child = task.child_session_id or ""
        if child not in self.done:
            if len(self.done) >= self.max_reads:
                return Unread("bound_reached", self.bound.format(n=self.max_reads))
            self.done[child] = read_child(
                self.client, child, parents, self.hints, pages=self.pages, shared=self.shared
            )
        return self.done[child]


MAX_CHECKS_PER_CYCLE = 8
MAX_USAGE_CHILDREN = 100  # children of terminal tasks proven for their usage in one run


@dataclass(eq=False)
class Unreported:
    """A conversation's tasks as their children's proven ends make them, each proof kept across
    `again`; not `steady()` right after a task ended unreported (the store is asked once more)."""

    client: DashboardAPI
    hints: StoreHints
    _: KW_ONLY
    per_cycle: int | None = None
    usage: bool = False  # prove terminal tasks' children too, for their usage
    debug: Callable[[str], None] | None = None
    warn: Callable[[WarningItem], None] | None = None  # a watch's reporter: told `warnings()` once
    shared: SharedDetails | None = None
    children: dict[str, ChildProof] = field(default_factory=dict, init=False)
    base: list[TaskEntry] = field(default_factory=list, init=False)
    segments: dict[str, frozenset[str]] = field(default_factory=dict, init=False)
    records: dict[str, LedgerRecord | None] = field(default_factory=dict, init=False)
    turn: int = field(default=0, init=False)
    ended: set[str] = field(default_factory=set, init=False)
    fresh_ends: bool = field(default=False, init=False)
    admitted: set[str] = field(default_factory=set, init=False)  # children proven for a terminal task's usage
    unproven: set[str] = field(default_factory=set, init=False)  # tasks the bound left without usage
    warned: bool = field(default=False, init=False)
    failures: Counter[str] = field(default_factory=Counter, init=False)  # transient, in a row
    locked: bool = field(default=False, init=False)  # the last look at the store's records met a lock
    store_locks: int = field(default=0, init=False)  # looks at the store's records that met a lock

    def __call__(self, messages: Sequence[WireMessage], tasks: Sequence[TaskEntry]) -> list[TaskEntry]:
        """The (resolved) tasks of `messages`, settled; kept for `again`."""
        self.base = list(tasks)
        self.segments = call_sessions(messages)
        return self.again()

    def again(self) -> list[TaskEntry]:
        """The last tasks, their children checked once more (at most `per_cycle`)."""
        self.records = {}
        self.store_locks += self.locked  # the store met a lock last time: counted, so a lasting one ends
        self.locked = False
        opened = [t for t in self.base if _linked(t, terminal=False)]
        closed = [t for t in self.base if self.usage and _linked(t, terminal=True) and self._admit(t)]
        first = [t for t in closed if self._child(t).state is None]
        self._check(opened + first + [t for t in closed if t not in first])
        out = [self._settled(t) for t in self.base]
        now = {t.number or "" for t in out if t.status == TaskStatus.ended_unreported}
        self.fresh_ends = bool(now - self.ended)
        self.ended = now
        if self.warn is not None and self.unproven and not self.warned:
            self.warned = True
            for item in self.warnings():
                self.warn(item)
        return out

    def steady(self) -> bool:
        unchecked = any(
            self._child(t).state is None and self._child(t).owned is not False
            for t in self.base
            if self.usage and _linked(t, terminal=True) and t.child_session_id in self.admitted
        )
        return not self.fresh_ends and not unchecked and not self.locked

    def warnings(self) -> list[WarningItem]:
        tasks = ", ".join(sorted(self.unproven, key=number_order))
        detail = RECOVER["usage_bound"].format(n=MAX_USAGE_CHILDREN, tasks=tasks)
        return [warning(WarningCode.bound_reached, detail)] if tasks else []

    def _admit(self, task: TaskEntry) -> bool:
        ref = task.child_session_id or ""
        proven = ref in self.children and self.children[ref].state is not None
        if proven or ref in self.admitted or len(self.admitted) < MAX_USAGE_CHILDREN:
            self.admitted.add(ref)
            self.unproven.discard(task.number or "")
            return True
        self.unproven.add(task.number or "?")
        return False

    def _child(self, task: TaskEntry) -> ChildProof:
        ref = task.child_session_id or ""
        if ref not in self.children:
            self.children[ref] = ChildProof(self.client, ref, self.hints, shared=self.shared)
        return self.children[ref]

    def _check(self, tasks: list[TaskEntry]) -> None:
        due: list[TaskEntry] = []
        refs: set[str] = set()
        for task in tasks:  # each child once (two tasks naming one child share its state)
            child = self._child(task)
            if child.owned is not False and child.state != "ended" and child.anchor_id not in refs:
                refs.add(child.anchor_id)
                due.append(task)
        due, self.turn = in_turn(due, self.per_cycle, self.turn)
        jobs = [lambda task=task: caught(self._child(task).check, self._segments(task)) for task in due]
        for task, got in zip(due, gather(jobs, what="child state checks", debug=self.debug), strict=True):
            ref = task.child_session_id or ""
            state: ChildState | None
            if isinstance(got, HermesError):  # a transient failure is asked again, `FINAL_RETRIES` times
                self.failures[ref] += got.retryable
                state = "unknown" if not got.retryable or self.failures[ref] > FINAL_RETRIES else None
                seen = f"unknown (not read: {got.code.value})"
            else:
                state, seen = got, got or "not proven the task's child"
            self._child(task).state = state
            self._say(f"task {task.number} child {task.child_session_id}: {seen}")

    def _settled(self, task: TaskEntry) -> TaskEntry:
        child = self.children.get(task.child_session_id or "") if task.call_id else None
        if child is not None and child.owned and child.usage is not None:
            task = replace(task, usage=child.usage)
        if child is None or not _linked(task, terminal=False) or not child.owned or child.state is None:
            return task
        if child.state != "ended":
            return replace(task, child_state=child.state)
        locks = self.hints.locks
        proposal = self._proposal(task)
        if proposal is None and self.hints.locks != locks and self.store_locks <= FINAL_RETRIES:
            # The store's record could not be read for now: nothing decided, asked again.
            self.locked = True
            return replace(task, child_state="ended")
        if proposal is None:
            return replace(task, status=TaskStatus.ended_unreported, terminal=True, child_state="ended")
        filled = {
            name: getattr(proposal.result, name) if getattr(task, name) is None else getattr(task, name)
            for name in RESULT_FIELDS
        }
        return replace(
            task,
            status=proposal.status,
            terminal=True,
            child_state="ended",
            result_source="store",
            delivery_state=proposal.delivery_state,
            **filled,
        )

    def _proposal(self, task: TaskEntry) -> Proposal | None:
        deleg, index = task.delegation_id, task.task_index
        if deleg is None or index is None:
            return None
        if deleg not in self.records:
            self.records[deleg] = self.hints.delegation(deleg)
        record = self.records[deleg]
        found = None
        if record is not None:
            segments = self._segments(task)
            found = propose(record, delegation_id=deleg, task_index=index, goal=task.goal, segments=segments)
        self._say(
            f"task {task.number} {deleg}: " + (f"store proposes {found.status}" if found else "no outcome")
        )
        return found

    def _segments(self, task: TaskEntry) -> frozenset[str]:
        return self.segments.get(task.call_id or "", frozenset())

    def _say(self, line: str) -> None:
        if self.debug is not None:
            self.debug(f"unreported: {line}")


def caught(call: Callable[[A], T], arg: A) -> T | HermesError:
    """`call(arg)`, or its failure (a `gather` job: one child's failure is that child's)."""
    try:
        return call(arg)
    except HermesError as err:
        return err


def in_turn(items: list[T], limit: int | None, turn: int) -> tuple[list[T], int]:
    """At most `limit` of `items`, starting where the last call stopped; the next `turn`."""
    if limit is None or len(items) <= limit:
        return items, turn
    start = turn % len(items)
    chosen = (items[start:] + items[:start])[:limit]
    return chosen, start + len(chosen)


def _linked(task: TaskEntry, *, terminal: bool) -> bool:
    """Does the task name its child and spawn call, with its terminal state `terminal`?"""
    named = task.child_session_id is not None and bool(task.call_id)
    return named and (task.status in TERMINAL_STATUSES) is terminal


class ParentTasks(Struct, frozen=True, kw_only=True):
    doc: TasksDoc
    paths: dict[str, tuple[str, ...]]
    transcript: TranscriptDoc | None = None


def read_parent_tasks(
    client: DashboardAPI,
    hints: StoreHints,
    parent: str,
    *,
    shared: SharedDetails,
    recursive: bool = False,
    pages: int | None = None,
    debug: Callable[[str], None] | None = None,
    transcript: bool = False,
) -> ParentTasks:
    """The tasks of `parent` (and its transcript); the parent's failures raise."""
    paths: dict[str, tuple[str, ...]] = {}
    documents: dict[str, TranscriptDoc] = {}

    def read(sid: str, *, is_parent: bool = False) -> Conversation:
        store = None if is_parent else hints
        reader = TaskReader(client, sid, hint=not is_parent, store=store, shared=shared)
        conversation = read_conversation(reader, pages)
        paths[conversation.session_id] = conversation.path
        if is_parent and transcript:
            documents[sid] = reader.document(conversation.warnings)
        return conversation

    # With `recursive` a task's usage comes from its child's own read (`build`).
    settle = Unreported(client, hints, usage=not recursive, debug=debug, shared=shared)
    tasks, warnings = build(
        read(parent, is_parent=True),
        read,
        recursive=recursive,
        resolve=lambda conv, found: settle(
            conv.messages, find_children(client, hints, conv.messages, found, shared)
        ),
        read_detail=shared,
        debug=debug,
    )
    warnings += settle.warnings() + hints.warnings()
    doc = TasksDoc(parent_id=parent, tasks=tasks, summary=summarize(tasks), warnings=warnings)
    return ParentTasks(doc=doc, paths=paths, transcript=documents.get(parent))


class TraceSource(Struct, frozen=True, kw_only=True):
    tasks: TasksDoc
    parent: TranscriptDoc
    children: dict[str, Transcript | Unread]


def read_trace(
    client: DashboardAPI,
    hints: StoreHints,
    parent: str,
    *,
    recursive: bool = False,
    debug: Callable[[str], None] | None = None,
) -> TraceSource:
    shared = SharedDetails(client)
    got = read_parent_tasks(
        client, hints, parent, shared=shared, recursive=recursive, debug=debug, transcript=True
    )
    assert got.transcript is not None  # asked for: the parent's read always documents it
    reads = ChildReads(client, hints, pages=None, bound=RECOVER["report_bound"], shared=shared)
    children: dict[str, Transcript | Unread] = {}

    def walk(tasks: Sequence[TaskEntry], owners: frozenset[str]) -> None:
        for task in tasks:
            child = task.child_session_id
            if child is None or child in children:
                continue
            read = children[child] = reads.read(task, owners)
            if task.children:
                segments = read.segments if isinstance(read, Transcript) and read.segments else (child,)
                walk(task.children, frozenset(segments))

    walk(got.doc.tasks, frozenset(got.paths.get(parent, (parent,))))
    return TraceSource(tasks=got.doc, parent=got.transcript, children=children)
