"""`render/jsonout.document` is byte-identical to the standard library's indented dump."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_task.core.documents import to_json_dict
from hermes_task.render.jsonout import document


def reference(doc: Any) -> str:
    return json.dumps(to_json_dict(doc), ensure_ascii=True, indent=2) + "\n"


@dataclass(frozen=True)
class Leaf:
    name: str
    value: Any = None


@dataclass(frozen=True)
class Node:
    kind: str
    items: list[Any] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    pair: tuple[Any, ...] = ()


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # every code point: controls, surrogates, bidi overrides, astral
)


def trees(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return (
        st.lists(children, max_size=4)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=8), children, max_size=4)
        | st.builds(Leaf, st.text(max_size=8), children)
        | st.builds(
            Node,
            st.text(max_size=8),
            st.lists(children, max_size=3),
            st.dictionaries(st.text(max_size=5), children, max_size=3),
        )
    )


values = st.recursive(scalars, trees, max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(values)
def test_document_equals_the_standard_library_dump(value: Any) -> None:
    assert document(value) == reference(value)


@pytest.mark.parametrize(
    "value",
    [
        {},
        [],
        Node("empty"),
        {"n": {2: "int key", None: "null key", True: [Leaf("x", 1.5)]}},  # keys json converts
        [math.inf, -math.inf, math.nan, -0.0, 1e400, 5e-324, 2**64, True, False, None],
        "\u202e\x1b[31m\x7f\x85\ud800😀",
    ],
)
def test_edge_values(value: Any) -> None:
    assert document(value) == reference(value)


def test_what_json_cannot_encode_is_refused_like_json() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        document({"x": object()})
