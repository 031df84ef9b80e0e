"""The common JUnit XML schema's shape (Jenkins/Ant `junit-10.xsd`, the one GitHub, GitLab,
Jenkins and Buildkite read), checked on a parsed document: which elements may hold which,
which attributes each may carry and must carry, where text may stand, and that the counters
(`tests`, `failures`, `errors`, `skipped`) are numbers that agree with the cases. Stricter than
the schema where readers are (Ant's order: a case's failure or error before its output).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import NamedTuple


class Shape(NamedTuple):
    attributes: frozenset[str]
    required: frozenset[str]
    children: frozenset[str]
    text: bool  # may hold text (mixed or simple content)


_OUTCOME = Shape(frozenset({"type", "message"}), frozenset(), frozenset(), True)
_OUTPUT = Shape(frozenset(), frozenset(), frozenset(), True)
SCHEMA: dict[str, Shape] = {
    "testsuites": Shape(
        frozenset({"name", "time", "tests", "failures", "disabled", "errors"}),
        frozenset(),
        frozenset({"testsuite"}),
        False,
    ),
    "testsuite": Shape(
        frozenset(
            {
                "name",
                "tests",
                "failures",
                "errors",
                "time",
                "disabled",
                "skipped",
                "skips",
                "timestamp",
                "hostname",
                "id",
                "package",
                "assertions",
                "file",
                "skip",
                "log",
                "url",
            }
        ),
        frozenset({"tests"}),
        frozenset({"testsuite", "properties", "testcase", "system-out", "system-err"}),
        False,
    ),
    "testcase": Shape(
        frozenset(
            {
                "name",
                "assertions",
                "time",
                "timestamp",
                "classname",
                "status",
                "class",
                "file",
                "line",
                "log",
                "group",
                "url",
            }
        ),
        frozenset({"name"}),
        frozenset({"skipped", "error", "failure", "system-out", "system-err"}),
        False,
    ),
    "failure": _OUTCOME,
    "error": _OUTCOME,
    "skipped": _OUTCOME,
    "system-out": _OUTPUT,
    "system-err": _OUTPUT,
    "properties": Shape(frozenset(), frozenset(), frozenset({"property"}), False),
    "property": Shape(frozenset({"name", "value"}), frozenset({"name", "value"}), frozenset(), False),
}
COUNTERS = ("tests", "failures", "errors", "skipped")
DECIMAL = re.compile(r"\d+(\.\d+)?")


def _blank(text: str | None) -> bool:
    return text is None or not text.strip()


def _check(element: ET.Element) -> None:
    shape = SCHEMA.get(element.tag)
    assert shape is not None, f"unknown element <{element.tag}>"
    names = set(element.attrib)
    assert names <= shape.attributes, (element.tag, names - shape.attributes)
    assert shape.required <= names, (element.tag, shape.required - names)
    for child in element:
        assert child.tag in shape.children, f"<{child.tag}> inside <{element.tag}>"
        assert _blank(child.tail) or shape.text, f"text after <{child.tag}> inside <{element.tag}>"
        _check(child)
    if not shape.text:
        assert _blank(element.text), f"text inside <{element.tag}>"
    for counter in COUNTERS:
        if counter in element.attrib:
            assert element.attrib[counter].isdigit(), (element.tag, counter, element.attrib[counter])
    if "time" in element.attrib:
        assert DECIMAL.fullmatch(element.attrib["time"]), element.attrib["time"]
    if element.tag == "testcase":
        order = [child.tag for child in element]
        outcomes = [i for i, tag in enumerate(order) if tag in ("failure", "error", "skipped")]
        outputs = [i for i, tag in enumerate(order) if tag in ("system-out", "system-err")]
        assert not outcomes or not outputs or max(outcomes) < min(outputs), order
    if element.tag == "testsuite":
        cases = element.findall("testcase")
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for counter, value in counts.items():
            if counter in element.attrib:
                assert int(element.attrib[counter]) == value, (counter, element.attrib, value)


def validate(document: str) -> ET.Element:
    """Parse `document` (it must be well-formed XML 1.0) and check its shape; the root."""
    root = ET.fromstring(document.encode("utf-8"))  # noqa: S314 (our own document, from the code under test)
    assert root.tag == "testsuites", root.tag
    _check(root)
    suites = root.findall("testsuite")
    for counter in ("tests", "failures", "errors"):
        if counter in root.attrib:
            assert int(root.attrib[counter]) == sum(int(s.attrib.get(counter, "0")) for s in suites), counter
    return root


def outcome(case: ET.Element) -> str:
    """`pass`, `failure`, `error` or `skipped`: what a CI reader makes of a testcase."""
    for kind in ("failure", "error", "skipped"):
        if case.find(kind) is not None:
            return kind
    return "pass"
