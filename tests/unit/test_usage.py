"""Usage figures per segment and their sums (core/documents.py, issue 28 item 1): read permissively
from the detail (absent is absent, never 0), summed over a proven lineage, actual cost only when
every cost summed was actual, and `complete` false with a reason whenever something is missing."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_task.core.documents import Usage, combine, lineage_usage, segment_usage, with_missing
from hermes_task.core.wire import NO_FIGURES, Figures, SessionDetail, WireError, decode, figures_of

LINEAGE: dict[str, Any] = {"id": "20261130_170001_bbbbbb", "source": "subagent", "parent_session_id": None,
           "started_at": 1.0, "ended_at": None, "end_reason": None}  # fmt: skip
FULL: dict[str, Any] = {"input_tokens": 1200, "output_tokens": 90, "cache_read_tokens": 300, "cache_write_tokens": 20,
        "reasoning_tokens": 7, "api_call_count": 3, "estimated_cost_usd": 0.0125, "actual_cost_usd": None,
        "cost_status": "estimated"}  # fmt: skip


def figures(**body: Any) -> Figures:
    return figures_of({**FULL, **body})


def decoded(body: dict[str, Any]) -> SessionDetail:
    return decode(json.dumps(body).encode(), SessionDetail)


class Segment:
    """What `lineage_usage` reads of a detail: its figures."""

    def __init__(self, figures: Figures) -> None:
        self.figures = figures


def test_the_detail_carries_its_figures_and_an_unusable_one_never_fails_it() -> None:
    detail = decoded({**LINEAGE, **FULL})
    assert detail.figures == Figures(input_tokens=1200, output_tokens=90, cache_read_tokens=300,
                                     cache_write_tokens=20, reasoning_tokens=7, api_calls=3,
                                     estimated_cost_usd=0.0125, cost_status="estimated")  # fmt: skip
    hostile: dict[str, Any] = {"input_tokens": "12", "output_tokens": True, "cache_read_tokens": -1, "cache_write_tokens": 1.5,
               "reasoning_tokens": [], "api_call_count": {"n": 1}, "estimated_cost_usd": "0.1",
               "actual_cost_usd": float("nan"), "cost_status": 7}  # fmt: skip
    assert decoded({**LINEAGE, **hostile}).figures == NO_FIGURES
    assert decoded(LINEAGE).figures == NO_FIGURES  # absent: absent, not 0
    with pytest.raises(WireError):  # the lineage fields stay strict
        decoded({**LINEAGE, **FULL, "parent_session_id": 7})


@pytest.mark.parametrize(
    ("value", "amount"),
    [(0, 0.0), (3, 3.0), (0.25, 0.25), (None, None), (-0.5, None), (float("inf"), None), (10**400, None),
     (True, None), ("0.1", None)],
)  # fmt: skip
def test_a_cost_is_a_finite_non_negative_number(value: object, amount: float | None) -> None:
    assert figures(estimated_cost_usd=value).estimated_cost_usd == amount


def test_a_segment_costs_its_actual_cost_else_its_estimate_unless_hermes_could_not_price_it() -> None:
    estimated = segment_usage(figures())
    assert (estimated.cost_usd, estimated.cost_kind, estimated.complete) == (0.0125, "estimated", True)
    actual = segment_usage(figures(actual_cost_usd=0.011, cost_status="actual"))
    assert (actual.cost_usd, actual.cost_kind, actual.complete) == (0.011, "actual", True)
    # cost_status "unknown": Hermes stores 0 for a call it could not price; that is no figure
    unpriced = segment_usage(figures(estimated_cost_usd=0.0, cost_status="unknown"))
    assert (unpriced.cost_usd, unpriced.cost_kind, unpriced.missing) == (None, None, ["cost"])
    included = segment_usage(figures(estimated_cost_usd=0.0, cost_status="included"))
    assert (included.cost_usd, included.cost_kind, included.complete) == (0.0, "estimated", True)
    none = segment_usage(NO_FIGURES)
    assert (none.input_tokens, none.complete, none.missing) == (None, False, ["figures", "cost"])


def test_a_three_segment_lineage_is_summed_field_by_field() -> None:
    details = {
        "root": Segment(figures()),
        "mid": Segment(figures(input_tokens=800, output_tokens=60, estimated_cost_usd=0.0075)),
        "tip": Segment(
            figures(input_tokens=500, output_tokens=40, api_call_count=2, estimated_cost_usd=0.005)
        ),
    }
    usage = lineage_usage(["root", "mid", "tip"], details)
    assert usage == Usage(input_tokens=2500, output_tokens=190, cache_read_tokens=900, cache_write_tokens=60,
                          reasoning_tokens=21, api_calls=8, cost_usd=0.025, cost_kind="estimated",
                          complete=True, segments=3, missing=[])  # fmt: skip


def test_what_a_sum_lacks_makes_it_not_complete_and_is_named() -> None:
    details = {"root": Segment(figures()), "tip": Segment(figures(reasoning_tokens=None))}
    usage = lineage_usage(["root", "tip"], details)
    assert (usage.reasoning_tokens, usage.input_tokens, usage.complete) == (7, 2400, False)
    assert usage.missing == ["figures"]
    # a proven segment whose detail is not held counts as one that sent nothing
    assert lineage_usage(["root", "gone"], details).missing == ["figures", "cost"]
    assert lineage_usage(["root"], details, later=True).missing == ["later_segments"]
    assert lineage_usage(["root"], details, earlier=True).missing == ["earlier_segments"]


def test_cost_kind_is_actual_only_when_every_cost_summed_was_actual() -> None:
    actual = {"a": Segment(figures(actual_cost_usd=0.01)), "b": Segment(figures(actual_cost_usd=0.02))}
    both = lineage_usage(["a", "b"], actual)
    assert (both.cost_usd, both.cost_kind) == (0.03, "actual")
    mixed = lineage_usage(["a", "c"], {**actual, "c": Segment(figures(estimated_cost_usd=0.5))})
    assert (mixed.cost_usd, mixed.cost_kind, mixed.complete) == (0.51, "estimated", True)
    unknown = lineage_usage(["a", "d"], {**actual, "d": Segment(figures(estimated_cost_usd=None))})
    assert (unknown.cost_usd, unknown.cost_kind, unknown.missing) == (0.01, "actual", ["cost"])


def test_tasks_sum_to_none_when_none_has_usage_and_say_which_lack_it() -> None:
    one = segment_usage(figures())
    assert combine([]) is None
    assert combine([None, None]) is None
    total = combine([one, None, one])
    assert total is not None
    assert (total.input_tokens, total.segments, total.complete, total.missing) == (2400, 2, False, ["tasks"])
    assert with_missing(one, "nested") == Usage(**{**_fields(one), "complete": False, "missing": ["nested"]})
    assert with_missing(None, "nested") is None


def _fields(usage: Usage) -> dict[str, Any]:
    return {name: getattr(usage, name) for name in Usage.__struct_fields__}


counts = st.one_of(st.none(), st.integers(min_value=0, max_value=10**12))
costs = st.one_of(st.none(), st.floats(min_value=0, max_value=1e6, allow_nan=False))
segment_figures = st.builds(
    Figures,
    input_tokens=counts,
    output_tokens=counts,
    cache_read_tokens=counts,
    cache_write_tokens=counts,
    reasoning_tokens=counts,
    api_calls=counts,
    estimated_cost_usd=costs,
    actual_cost_usd=costs,
    cost_status=st.sampled_from([None, "estimated", "actual", "unknown", "included"]),
)


@given(st.lists(st.one_of(st.none(), segment_figures.map(segment_usage)), max_size=6))
def test_a_sum_is_the_sum_of_what_its_parts_know_and_complete_only_when_every_part_is(
    parts: list[Usage | None],
) -> None:
    total = combine(parts)
    known = [p for p in parts if p is not None]
    if not known:
        assert total is None
        return
    assert total is not None
    for name in ("input_tokens", "output_tokens", "api_calls"):
        values = [getattr(p, name) for p in known if getattr(p, name) is not None]
        assert getattr(total, name) == (sum(values) if values else None)
    cost = [p.cost_usd for p in known if p.cost_usd is not None]
    assert total.cost_usd == (None if not cost else pytest.approx(math.fsum(cost), rel=1e-9, abs=1e-9))
    assert total.complete == (len(known) == len(parts) and all(p.complete for p in known))
    assert total.complete == (total.missing == [])
    assert total.segments == len(known)
