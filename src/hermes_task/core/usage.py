"""Usage and cost per task: each proven segment's figures, summed (pure; issue 28 item 1).

The dashboard's session detail is the sessions row, and Hermes writes a segment's usage into
it (`SessionDB.update_token_counts`): `input_tokens`, `output_tokens`, `cache_read_tokens`,
`cache_write_tokens`, `reasoning_tokens`, `api_call_count`, `estimated_cost_usd`,
`actual_cost_usd` and `cost_status`, per segment. `core/wire.py` reads them permissively: a key
not sent, null, of another type, negative or not finite is absent (`None`), never 0, and never
makes the detail incompatible (the detail is also the lineage proof's evidence).

Rules (docs/identity.md, "Usage and cost"):
- a task's usage is the sum over the segments of its proven lineage, read from the details
  the proof read (`lineage_usage`); a token figure or the call count is summed over the
  segments that sent it (null when none did);
- a segment's cost is its `actual_cost_usd` when it has one, else its `estimated_cost_usd`
  unless its `cost_status` is `unknown` (Hermes could not price a call: the 0 it stores then
  is no figure); `cost_usd` sums them, and `cost_kind` is `actual` only when every cost
  summed was an actual cost, `estimated` when at least one was an estimate, null when no
  segment had a cost;
- `complete` is true only when nothing is `missing`: every proven segment sent every figure
  and a cost, no later segment may exist unproven (the newest proven one did not end by
  compression), no earlier one is left out, and, in a sum of tasks, every task had usage and
  its nested tasks were read. `missing` names what the sum lacks (`MISSING`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Literal, Protocol

from msgspec import Meta, Struct, field

from hermes_task.core.wire import NO_FIGURES, Figures, figures_of

TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
COUNTS = (*TOKENS, "api_calls")
Missing = Literal["figures", "cost", "later_segments", "earlier_segments", "tasks", "nested"]
ORDER: tuple[Missing, ...] = ("figures", "cost", "later_segments", "earlier_segments", "tasks", "nested")
# What each `missing` code means (docs/json.md; the show header and the table's note use it).
MISSING: dict[Missing, str] = {
    "figures": "a segment sent no token figure or call count",
    "cost": "a segment has no known cost",
    "later_segments": "later segments are not proven",
    "earlier_segments": "earlier segments are not included",
    "tasks": "a task has no proven usage",
    "nested": "nested tasks were not read",
}
COST_ROUND = 10  # decimal places kept of a summed cost (float noise only)


class Usage(Struct, frozen=True, kw_only=True):
    """Usage summed over proven segments (docs/json.md "Usage"); a figure no summed segment
    sent is null, never 0."""

    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    reasoning_tokens: int | None
    api_calls: Annotated[int | None, Meta(description="The segments' api_call_count, summed.")]
    cost_usd: Annotated[
        float | None,
        Meta(
            description="Each segment's actual cost where it has one, else its estimate, summed; null: none known."
        ),
    ]
    cost_kind: Annotated[
        Literal["actual", "estimated"] | None,
        Meta(
            description="actual: every cost summed was actual; estimated: at least one was an estimate; null: none."
        ),
    ]
    complete: Annotated[
        bool, Meta(description="Nothing is missing: every figure of every segment the sum needs.")
    ]
    segments: Annotated[int, Meta(description="How many proven segments were summed.")]
    missing: Annotated[
        list[Missing],
        Meta(
            description="What the sum lacks: figures, cost (a segment without them), later_segments, "
            "earlier_segments (not proven or not included), tasks (a task without usage), nested "
            "(nested tasks not read)."
        ),
    ] = field(default_factory=list)


# The documents' usage fields (core/documents.py), each with its schema description.
LineageUsage = Annotated[
    Usage | None,
    Meta(description="Usage and cost summed over `segments` (the proven lineage) from their details."),
]
ChildUsage = Annotated[
    Usage | None,
    Meta(
        description="Usage and cost summed over the proven segments of the task's child; null: no child proven "
        "(no child id, not this parent's, unreadable, or past a bound). `tokens` stays as the parent was told."
    ),
]
NestedUsage = Annotated[
    Usage | None, Meta(description="With --recursive: `usage` plus every nested task's; else null.")
]
TasksUsage = Annotated[
    Usage | None, Meta(description="Every task's `usage` summed (nested ones too); null: none known.")
]


def segment_usage(figures: Figures) -> Usage:
    """One segment's figures as a `Usage` (its cost by the module's rules)."""
    actual = figures.actual_cost_usd
    estimate = figures.estimated_cost_usd if figures.cost_status != "unknown" else None
    cost = actual if actual is not None else estimate
    kind: Literal["actual", "estimated"] | None = (
        "actual" if actual is not None else "estimated" if estimate is not None else None
    )
    missing: list[Missing] = []
    if any(getattr(figures, name) is None for name in COUNTS):
        missing.append("figures")
    if cost is None:
        missing.append("cost")
    counts = {name: getattr(figures, name) for name in COUNTS}
    return Usage(**counts, cost_usd=cost, cost_kind=kind, complete=not missing, segments=1, missing=missing)


class HasFigures(Protocol):
    @property
    def figures(self) -> Figures: ...


def lineage_usage(
    path: Sequence[str], details: Mapping[str, HasFigures], *, later: bool = False, earlier: bool = False
) -> Usage:
    """The usage of a proven lineage `path` from the details its proof read (`details`; a
    segment not held counts as one that sent nothing). `later`: a newer segment may exist
    unproven; `earlier`: segments before `path[0]` are not included."""
    parts = [segment_usage(details[sid].figures if sid in details else NO_FIGURES) for sid in path]
    extra: list[Missing] = []
    if later:
        extra.append("later_segments")
    if earlier:
        extra.append("earlier_segments")
    total = combine(parts, extra=extra)
    assert total is not None  # a path has at least its anchor
    return total


def _sum(values: Iterable[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def combine(parts: Sequence[Usage | None], *, extra: Sequence[Missing] = ()) -> Usage | None:
    """The sum of `parts` (segments, or tasks: a None part is a task without usage, `tasks`
    missing); None when no part has usage. `extra`: what else the sum lacks."""
    known = [p for p in parts if p is not None]
    if not known:
        return None
    costs = [p.cost_usd for p in known if p.cost_usd is not None]
    kinds = {p.cost_kind for p in known if p.cost_kind is not None}
    missing: set[Missing] = {m for p in known for m in p.missing} | set(extra)
    if len(known) < len(parts):
        missing.add("tasks")
    ordered = [m for m in ORDER if m in missing]
    return Usage(
        **{name: _sum(getattr(p, name) for p in known) for name in COUNTS},
        cost_usd=round(math.fsum(costs), COST_ROUND) if costs else None,
        cost_kind=None if not kinds else "actual" if kinds == {"actual"} else "estimated",
        complete=not ordered,
        segments=sum(p.segments for p in known),
        missing=ordered,
    )


def with_missing(usage: Usage | None, *reasons: Missing) -> Usage | None:
    """`usage` with `reasons` added to what it lacks (None stays None)."""
    if usage is None or not reasons:
        return usage
    return combine([usage], extra=reasons)


__all__ = [
    "MISSING",
    "NO_FIGURES",
    "Figures",
    "Missing",
    "Usage",
    "combine",
    "figures_of",
    "lineage_usage",
    "segment_usage",
    "with_missing",
]
