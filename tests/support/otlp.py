"""OTLP/JSON read back with the official protobuf definitions (`opentelemetry-proto`, a test
dependency only): what `hermes-task export --format otlp-json` wrote must parse as an
`ExportTraceServiceRequest`.

OTLP/JSON is the protobuf JSON mapping with OTLP's deviations (opentelemetry-proto
docs/specification.md, "JSON Protobuf Encoding"); the only one protobuf's own parser cannot
take is the ids: hex in OTLP, base64 in the mapping (hex digits are base64 digits too, so a hex
id would parse silently into the wrong bytes). `parse` therefore checks each id is lowercase
hex of the right length and hands protobuf its base64, then parses strictly (an unknown field
is an error), and checks the ids came back as 16 and 8 bytes and every span is
`SPAN_KIND_INTERNAL` (docs/json.md).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

HEX = {"traceId": 32, "spanId": 16, "parentSpanId": 16}


def _ids_to_base64(span: dict[str, Any]) -> None:
    for key, length in HEX.items():
        if key not in span:
            continue
        hexed = span[key]
        assert re.fullmatch(f"[0-9a-f]{{{length}}}", hexed), (
            f"{key} {hexed!r} is not {length} lowercase hex digits"
        )
        assert hexed.strip("0"), f"{key} is all zeros"
        span[key] = base64.b64encode(bytes.fromhex(hexed)).decode("ascii")


def parse(text: str | bytes) -> ExportTraceServiceRequest:
    """`text` as an `ExportTraceServiceRequest` (module docstring)."""
    data = json.loads(text)
    for resource in data.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _ids_to_base64(span)
    request = ExportTraceServiceRequest()
    json_format.ParseDict(data, request)
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                assert len(span.trace_id) == 16
                assert len(span.span_id) == 8
                assert len(span.parent_span_id) in (0, 8)
                assert span.kind == span.SPAN_KIND_INTERNAL  # a missing `kind` reads as UNSPECIFIED
    return request


def spans(text: str | bytes) -> list[dict[str, Any]]:
    """Every span of the document, as JSON (after `parse` accepted it), with its attributes
    as a plain dict (`attrs`)."""
    parse(text)
    data = json.loads(text)
    found = []
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["attrs"] = {kv["key"]: plain(kv["value"]) for kv in span.get("attributes", [])}
                found.append(span)
    return found


def plain(value: dict[str, Any]) -> Any:
    """An OTLP `AnyValue` as Python: intValue back to int, an array to a list."""
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [plain(v) for v in value["arrayValue"].get("values", [])]
    ((_, item),) = value.items()
    return item
