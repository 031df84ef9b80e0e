"""The output documents as plain JSON data (`core/documents.py` re-exports both functions).

Invariant: a document becomes exactly the dicts, lists and scalars of its fields, in field
order, so `json.dumps(to_json_dict(doc))` is the document `render/jsonout.py` writes.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type) -> tuple[str, ...]:
    """A document class's field names, in order (cached: JSON writers ask for them per value)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def to_json_dict(doc: Any) -> Any:
    """`doc` (a document, or a value inside one) as plain JSON data: dataclasses become dicts
    in field order, lists and tuples lists (the `.model_dump(mode="json")` of the documents)."""
    if isinstance(doc, str | int | float | None):
        return doc
    if isinstance(doc, list | tuple):
        return [to_json_dict(item) for item in doc]
    if isinstance(doc, dict):
        return {key: to_json_dict(value) for key, value in doc.items()}
    return {name: to_json_dict(getattr(doc, name)) for name in field_names(type(doc))}
