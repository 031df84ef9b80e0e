"""Reading the Markdown reports back as a Markdown parser does (markdown-it-py, as installed with
rich: CommonMark with GFM tables and strike-through), for the tests of `--format markdown`.

`parse` gives the token stream; `inert` checks that nothing but the report's own structure came
of the text (no link, image, raw HTML other than the report's `<details>`/`<summary>` lines, no
heading, list, quote or code block other than those the test expects); `tables`, `fences` and
`details` give the tables' cells, the fenced blocks' contents and the collapsible blocks'
summaries as a reader sees them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

PARSER = MarkdownIt("commonmark").enable("table").enable("strikethrough")
# The raw HTML a report writes itself (render/report.py), the summary's text escaped.
DETAILS_OPEN = re.compile(r"<details>\n<summary>([^<>\n]*)</summary>\n")
DETAILS_CLOSE = "</details>\n"
# Inline tokens whose content is text as a reader sees it.
TEXT_TOKENS = {"text", "code_inline"}
LINE_BREAKS = {"softbreak", "hardbreak"}
FORBIDDEN_INLINE = {"link_open", "image", "html_inline", "s_open"}


def parse(markdown: str) -> list[Token]:
    return PARSER.parse(markdown)


def inline_text(token: Token) -> str:
    """What an inline token reads as: its text and code, a line break as a newline."""
    out = []
    for child in token.children or []:
        if child.type in TEXT_TOKENS:
            out.append(child.content)
        elif child.type in LINE_BREAKS:
            out.append("\n")
    return "".join(out)


def inert(tokens: Sequence[Token], *, blocks: frozenset[str] = frozenset()) -> None:
    """No link, image, raw inline HTML or strike-through anywhere; raw HTML blocks only the
    report's `<details>`/`<summary>` lines (balanced); block tokens only paragraphs, tables,
    fences and the `blocks` the caller expects (e.g. `heading`, `blockquote`)."""
    allowed = {"paragraph", "inline", "table", "thead", "tbody", "tr", "th", "td", "fence", "html_block"}
    allowed |= {b.removesuffix("_open").removesuffix("_close") for b in blocks}
    depth = 0
    for token in tokens:
        kind = token.type.removesuffix("_open").removesuffix("_close")
        assert kind in allowed, (token.type, token.content, token.map)
        if token.type == "html_block":
            if token.content == DETAILS_CLOSE:
                depth -= 1
            else:
                assert DETAILS_OPEN.fullmatch(token.content), token.content
                depth += 1
            assert depth in (0, 1), token.content
        for child in token.children or []:
            assert child.type not in FORBIDDEN_INLINE, (child.type, child.content)
    assert depth == 0


def tables(tokens: Sequence[Token]) -> list[list[list[str]]]:
    """Every table: its rows (the header first), each a list of its cells' text."""
    out: list[list[list[str]]] = []
    row: list[str] | None = None
    for token in tokens:
        if token.type == "table_open":
            out.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            assert row is not None
            out[-1].append(row)
            row = None
        elif token.type == "inline" and row is not None:
            row.append(inline_text(token))
    return out


def fences(tokens: Sequence[Token]) -> list[str]:
    return [t.content for t in tokens if t.type == "fence"]


def details(tokens: Sequence[Token]) -> list[str]:
    """The summary line of every `<details>` block, unescaped as a browser shows it."""
    out = []
    for token in tokens:
        match = DETAILS_OPEN.fullmatch(token.content) if token.type == "html_block" else None
        if match:
            out.append(html.unescape(match.group(1)))
    return out


def paragraphs_text(tokens: Sequence[Token]) -> list[str]:
    """The text of every paragraph, in order."""
    out = []
    for i, token in enumerate(tokens):
        if token.type == "inline" and i and tokens[i - 1].type == "paragraph_open":
            out.append(inline_text(token))
    return out


def strong_texts(tokens: Sequence[Token]) -> list[str]:
    """The text of every strong span."""
    out: list[str] = []
    for token in tokens:
        inside: list[str] | None = None
        for child in token.children or []:
            if child.type == "strong_open":
                inside = []
            elif child.type == "strong_close" and inside is not None:
                out.append("".join(inside))
                inside = None
            elif inside is not None and child.type in TEXT_TOKENS:
                inside.append(child.content)
    return out


def detail_blocks(tokens: Sequence[Token]) -> list[list[Token]]:
    """The tokens inside each `<details>` block, in order."""
    out: list[list[Token]] = []
    inside: list[Token] | None = None
    for token in tokens:
        if token.type == "html_block" and DETAILS_OPEN.fullmatch(token.content):
            inside = []
        elif token.type == "html_block" and token.content == DETAILS_CLOSE:
            assert inside is not None
            out.append(inside)
            inside = None
        elif inside is not None:
            inside.append(token)
    return out
