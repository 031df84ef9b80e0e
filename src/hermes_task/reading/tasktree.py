"""Reading conversations for `recover`, and the nested task tree (acp-subagent-history-replay).

`read_conversation` reads one transcript through the same client and window as `show`:
`TaskReader.refresh()`, then `read_older(limit=500)` until nothing is older or `pages` pages
were read (then a `bound_reached` warning says the task list may be incomplete). GET only.

`build` turns a parent conversation into its task list and, with `recursive`, reads each task's
child when its reference is known and nests the child's own tasks under it. Invariants: each
conversation (every segment of its proven lineage) is visited at most once, under the first
task that references it (a conversation's children are chosen in task order before any of
them is expanded, then expanded in task order), so cycles end; the children of one
conversation are read side by side (reading/fanout.py) and used in task order; nesting is
bounded to `max_depth` levels and `max_conversations` reads (a `bound_reached` warning names
the bound and how many tasks' children it left unread); tasks come only from
rows of the conversation's proven lineage (its path-filtered view), and a child's detail must
name a segment of that lineage as its delegation parent (`parent_session_id` and
`_delegate_from`, reading/ownership.py) before any of its messages are read; a child that cannot be
read (not found, auth, network, ...) or that names another parent is reported once, as
`gap` on the task that references it, and its siblings continue; a child with an empty history
simply has no children (no gap, ending or failure is invented). `resolve` (when given) fills
the child ids a transcript lacks, before any descent (`reading/hints.py`: proposed by the
local store, proven over HTTP). Usage (`core/documents.py`): a task whose child is read takes its
`usage` from that read's proof (no detail is read again for it), and `usage_with_children` adds
its nested tasks'; one whose child is not descended into keeps the usage `resolve` gave it, and
lacks `nested` where a bound or a failed read left its nested tasks unread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from msgspec import Struct, field
from msgspec.structs import replace

from hermes_task.core.delegations import recover
from hermes_task.core.documents import Missing, TaskEntry, Usage, WarningItem, combine, warning, with_missing
from hermes_task.core.lineage import held
from hermes_task.core.sanitize import clean_line
from hermes_task.core.ui_strings import RECOVER, WarningCode
from hermes_task.core.wire import MAX_LIMIT, SessionDetail, WireMessage
from hermes_task.failures import Code, HermesError
from hermes_task.reading.api import DashboardAPI
from hermes_task.reading.details import SharedDetails
from hermes_task.reading.fanout import gather
from hermes_task.reading.hints import StoreHints
from hermes_task.reading.ownership import owned_by
from hermes_task.reading.reader import TaskReader
from hermes_task.reading.transcript import history_warnings, merge_warnings

MAX_DEPTH = 8
MAX_CONVERSATIONS = 1000
MAX_IDLE_PAGES = 3


class Conversation(Struct, frozen=True):
    """One read transcript: its rows in the window's order, the anchor's detail and the
    proven lineage path (anchor first)."""

    session_id: str
    messages: tuple[WireMessage, ...]
    anchor: SessionDetail
    path: tuple[str, ...]
    warnings: tuple[WarningItem, ...] = ()
    usage: Usage | None = None  # summed over `path` from the details its proof read


def _bound(detail: str) -> WarningItem:
    return warning(WarningCode.bound_reached, detail)


def read_conversation(
    client: DashboardAPI,
    session_id: str,
    *,
    hint: bool,
    pages: int | None = None,
    store: StoreHints | None = None,
    shared: SharedDetails | None = None,
) -> Conversation:
    """Read a whole transcript (or its newest `pages` pages); failures raise `HermesError`.
    `shared`: the run's details (a detail read before, by a proof, is not read again)."""
    reader = TaskReader(client, session_id, hint=hint, store=store, shared=shared)
    warnings = read_history(reader, pages)
    return conversation_of(reader, warnings)


def read_history(reader: TaskReader, pages: int | None = None) -> list[WarningItem]:
    """The reader's first cycle, then older pages until none is left, `pages` pages were read
    or `MAX_IDLE_PAGES` pages in a row brought nothing new; the warnings of the read."""
    snap = reader.refresh()
    warnings = list(snap.warnings)
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
    window = reader.window
    cur = reader.cursor()
    # The history's own warnings as they stand after the last page (foreign rows counted over
    # every page read), in place of the ones each refresh reported on the way.
    history = history_warnings(reader.view(), cur, cold_open=bool(reader.continues_parent))
    warnings = list(dict.fromkeys(merge_warnings(warnings, history)))
    unread = cur.kind in ("first", "blocked") and not held(cur.sid or "", [window])
    if unread and all(w.code != "partial_ancestors" for w in warnings):
        # an earlier segment of this conversation none of whose rows its pages carry
        warnings.append(warning(WarningCode.partial_ancestors))
    if window.has_older:
        key = "pages_bound" if pages is not None and read >= pages else "pages_stalled"
        warnings.append(_bound(RECOVER[key].format(pages=read, sid=clean_line(reader.anchor_id))))
    return warnings


def conversation_of(reader: TaskReader, warnings: Sequence[WarningItem] = ()) -> Conversation:
    """The rows of the reader's proven lineage, in order, as a `Conversation`: the
    path-filtered view, so a row naming a session outside the lineage (counted in the
    `foreign_rows` warning) never yields a task, a status or a child to descend into."""
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


def _as_is(conv: Conversation, tasks: list[TaskEntry]) -> list[TaskEntry]:
    return tasks


class _Walk(Struct):
    read: Callable[[str], Conversation]
    resolve: Resolve
    detail: Callable[[str], SessionDetail] | None
    max_depth: int
    max_conversations: int
    visited: set[str]
    warnings: list[WarningItem]
    debug: Callable[[str], None] | None = None
    reads: int = 0
    deep: int = 0  # tasks at the depth bound whose child was not read
    cut: int = 0  # tasks past the conversation bound whose child was not read
    unread: set[str] = field(default_factory=set)  # children a bound or a failed read left unread

    def warn(self, item: WarningItem) -> None:
        if item not in self.warnings:
            self.warnings.append(item)

    def expand(self, conv: Conversation, depth: int) -> list[TaskEntry]:
        """The conversation's tasks: which children to read is decided in task order, then
        they are read side by side (`_child`), then each is expanded in task order."""
        out = self.resolve(conv, recover(conv.messages))
        chosen = self._choose(out, depth)
        # The segments of this conversation's proven lineage (which carries every spawn call:
        # its rows are the only ones tasks are built from).
        parents = frozenset(conv.path)
        jobs = [lambda ref=out[i].child_session_id: self._child(ref or "", parents) for i in chosen]
        covered: set[str] = set()  # the lineages of the siblings expanded before
        for i, got in zip(chosen, gather(jobs, what="child conversations", debug=self.debug), strict=True):
            out[i] = self._with_child(out[i], got, covered, depth)
        return out

    def _choose(self, out: list[TaskEntry], depth: int) -> list[int]:
        """The indexes of the tasks whose child is read, decided in task order within the
        bounds (each chosen child marked visited and counted); every other task is settled in
        `out` here, without its child."""
        chosen: list[int] = []
        for i, task in enumerate(out):
            ref = task.child_session_id
            if ref is None or ref in self.visited:
                out[i] = _nested(task, None)
                continue
            if depth >= self.max_depth:
                self.deep += 1
                self.unread.add(ref)
                out[i] = _nested(task, "nested")
            elif self.reads >= self.max_conversations:
                self.cut += 1
                self.unread.add(ref)
                out[i] = _nested(task, "nested")
            else:
                self.visited.add(ref)
                self.reads += 1
                chosen.append(i)
        return chosen

    def _with_child(
        self, task: TaskEntry, got: Conversation | str, covered: set[str], depth: int
    ) -> TaskEntry:
        """`task` with what its child's read gave (`got`: the conversation, or a gap's code),
        expanded in turn; `covered` (the lineages of the siblings expanded before) grows by
        this child's."""
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
        for item in got.warnings:
            if item.code == "bound_reached":
                self.warn(item)
        kids = self.expand(got, depth + 1)
        # The child's own read proved its lineage: its usage, from the details that read held.
        # A nested child left unread (a bound, a failed read) makes the sum lack `nested`,
        # even when that task has no usage to carry the word itself.
        lacks: tuple[Missing, ...] = (
            ("nested",) if any(k.child_session_id in self.unread for k in kids) else ()
        )
        whole = combine([got.usage, *(k.usage_with_children for k in kids)], extra=lacks)
        return replace(task, children=kids, usage=got.usage, usage_with_children=whole)

    def _child(self, ref: str, parents: frozenset[str]) -> Conversation | str:
        """One child read as its own conversation, or the code of its `gap` (on a worker
        thread: it touches nothing but its own reads)."""
        try:
            # Ownership first: the child's detail must name this parent as its delegation
            # parent before any of its messages are read (reading/ownership.py).
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

    def bounds(self) -> None:
        """A bound that cut the tree says how many tasks' children it left unread."""
        if self.deep:
            self.warn(_bound(RECOVER["depth_bound"].format(depth=self.max_depth, left=self.deep)))
        if self.cut:
            self.warn(_bound(RECOVER["visit_bound"].format(n=self.max_conversations, left=self.cut)))


def _nested(task: TaskEntry, reason: Missing | None) -> TaskEntry:
    """A task of a recursive read whose child was not descended into: `usage_with_children`
    is its own `usage`, lacking its nested tasks (`reason`) when they may exist unread."""
    return replace(task, usage_with_children=with_missing(task.usage, reason) if reason else task.usage)


def build(
    parent: Conversation,
    read_child: Callable[[str], Conversation],
    *,
    recursive: bool,
    resolve: Resolve = _as_is,
    read_detail: Callable[[str], SessionDetail] | None = None,
    max_depth: int = MAX_DEPTH,
    max_conversations: int = MAX_CONVERSATIONS,
    debug: Callable[[str], None] | None = None,
) -> tuple[list[TaskEntry], list[WarningItem]]:
    """The parent's tasks (nested when `recursive`) and the warnings of the whole read.
    `read_detail` (one exact-id detail read) checks a child's parent before `read_child`;
    both may run on several threads at once (reading/fanout.py)."""
    walk = _Walk(
        read=read_child,
        resolve=resolve,
        detail=read_detail,
        max_depth=max_depth if recursive else 0,
        max_conversations=max_conversations,
        visited={parent.session_id, *parent.path, *(m.session_id for m in parent.messages)},
        warnings=list(parent.warnings),
        debug=debug,
    )
    if not recursive:
        return resolve(parent, recover(parent.messages)), walk.warnings
    tasks = walk.expand(parent, 0)
    walk.bounds()
    return tasks, walk.warnings


__all__ = ["MAX_DEPTH", "Conversation", "build", "conversation_of", "read_conversation", "read_history"]
