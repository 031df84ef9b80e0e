"""Backend text as inert GitHub-flavoured Markdown: the escaping every Markdown report uses.

Backend text is hostile: it must never become a link, an image, raw HTML, a heading, a list,
a table row, or the end of the table cell or code fence it sits in. Each function here takes
text as it came from the backend, strips control sequences first (`core/sanitize.py`), then:

- `escaped` / `inline` / `cell` / `paragraphs`: backslash escapes (CommonMark lets every ASCII
  punctuation character be escaped, and an escaped one starts nothing) wherever a character
  could start something: always `\\`, backtick, `*`, `[`, `]`, `<`, `>`, `!`, `&`, `|`, `~`,
  `$` and `@` (emphasis, code spans, links and images, raw HTML and autolinks, entities, table
  pipes, strike-through, GitHub's math, e-mail autolinks); `_` unless between two letters or
  digits (`snake_case` emphasises nothing); the `:` of `://` and the `.` of `www.` (GFM's
  extended autolinks); and at a line's start its first character when it is
  punctuation, or the `.`/`)` after leading digits (headings, quotes, lists, fences, setext
  and thematic breaks). What is left (`-` in a date, `:` in a time, `/` in a path, ...) is
  inert where it stands. `paragraphs` keeps the text's lines (a hard break between two
  lines, a blank line a paragraph break) and its leading indentation as no-break spaces
  (four spaces would start a code block), so only paragraphs come of it;
- `code`: a code span whose backtick run is longer than any inside the text (in a table cell,
  `|` escaped as GFM requires even inside code);
- `fence`: a fenced block whose backtick fence is longer than any backtick run inside, so no
  line of the text can close it;
- `html_text`: HTML-escaped, for the one line of raw HTML the reports write (`<summary>`).

GitHub links `@name` to a user or team (and notifies them, in a comment) after rendering, in
any text outside code: an invisible word joiner (U+2060) after such an `@` keeps it text.
Pure: strings in, strings out.
"""

from __future__ import annotations

import html
import re

from hermes_task.core.sanitize import clean, clean_line

# What starts something wherever it stands (module docstring), and at a line's start.
_ANYWHERE = re.compile(r"[\\`*\[\]<>!&|~$@]|(?<![^\W_])_|_(?![^\W_])|:(?=//)|(?<=[wW]{3})\.")
_LINE_START = re.compile(r"[ \t]*(?:(?P<mark>[!-/:-@\[-`{-~])|(?P<digits>\d+)(?P<dot>[.)]))")
_MENTION = re.compile(r"@(?=[0-9A-Za-z])")
_BACKTICKS = re.compile(r"`+")
_INDENT = re.compile(r"^[ \t]+")
WORD_JOINER = "\u2060"
NO_BREAK_SPACE = "\u00a0"


def _defanged(text: str) -> str:
    return _MENTION.sub("@" + WORD_JOINER, text) if "@" in text else text


def _escaped_line(line: str, *, starts: bool = True) -> str:
    """One line (no newline, sanitised) escaped where a character could start something
    (`starts`: it begins a line of the document, where block markers count)."""
    start = _LINE_START.match(line) if starts else None
    head = ""
    if start is not None and not (start.group("mark") and _ANYWHERE.match(line, start.start("mark"))):
        cut = start.end()
        head = line[: cut - 1] + "\\" + line[cut - 1]
        line = line[cut:]
    return _defanged(head + _ANYWHERE.sub(r"\\\g<0>", line))


def escaped(text: str, *, starts: bool = True) -> str:
    """One line of backend text escaped as it stands (no stripping): `clean_line`d, escaped
    where a character could start something (`starts`: it begins a line), mentions defanged."""
    return _escaped_line(clean_line(text), starts=starts)


def inline(text: str) -> str:
    """One line of backend text after a label: as `escaped`, without the spaces around it."""
    return escaped(clean_line(text).strip())


def cell(text: str) -> str:
    """One line of backend text as a table cell: as `inline`, where no block can start."""
    return _escaped_line(clean_line(text).strip(), starts=False)


def _indented(line: str) -> str:
    """`line` (escaped) with its leading spaces as no-break spaces (a tab as four)."""
    match = _INDENT.match(line)
    if match is None:
        return line
    lead = match.group().replace("\t", "    ").replace(" ", NO_BREAK_SPACE)
    return lead + line[match.end() :]


def paragraphs(text: str) -> str:
    """Backend text of any length as Markdown paragraphs that read as the text does (module
    docstring); the empty string for text with nothing but whitespace."""
    out: list[str] = []
    lines: list[str] = []
    for line in clean(text).split("\n"):
        if not line.strip(" \t"):
            if lines:
                out.append("\\\n".join(lines))
                lines = []
            continue
        lines.append(_indented(_escaped_line(line.rstrip(" \t"))))
    if lines:
        out.append("\\\n".join(lines))
    return "\n\n".join(out)


def code(text: str, *, cell: bool = False) -> str:
    """`text` (one line) as a code span; `cell`: inside a table cell. Empty text is `-`."""
    text = clean_line(text)
    if not text:
        return "-"
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    # A parser strips one space from each end of a span's text unless it is all spaces.
    pad = " " if text.strip(" ") and (text[0] in "` " or text[-1] in "` ") else ""
    span = f"{ticks}{pad}{text}{pad}{ticks}"
    return span.replace("|", "\\|") if cell else span


def fence(text: str) -> str:
    """`text` as a fenced code block (no newline after the closing fence)."""
    body = clean(text)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    ticks = "`" * max(3, longest + 1)
    if not body.endswith("\n"):
        body += "\n"
    return f"{ticks}\n{body}{ticks}"


def html_text(text: str) -> str:
    """One line of backend text inside raw HTML: HTML-escaped, mentions defanged."""
    return _defanged(html.escape(clean_line(text).strip(), quote=True))


def table(header: list[str], rows: list[list[str]]) -> str:
    """A GFM table of cells already escaped for a cell (`cell`, `code(..., cell=True)`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


__all__ = ["cell", "code", "escaped", "fence", "html_text", "inline", "paragraphs", "table"]
