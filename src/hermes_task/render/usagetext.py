"""Usage and cost as people and pipes read them (pure: `Usage` in, strings out).

Four forms (docs/commands.md "Usage and cost"):
- `cell`: recover's table, `12.3k/1.5k ~$0.042`: input/output tokens, then the cost; `~` an
  estimate, `$?` no cost known, a leading `≥` a sum that is not complete (a lower bound);
- `told`: the tokens the task's result told the parent, when they differ from the proven sum
  (the table draws them under it, `told 10k/1.2k`);
- `line`: `show`'s header, every figure and what the sum lacks;
- `fields`: the piped task line's last fields (numbers as numbers, an unknown one empty).
"""

from __future__ import annotations

from hermes_task.core.documents import MISSING, TaskEntry, TaskTokens, Usage

FIELD_NAMES = ("input_tokens", "output_tokens", "cost_usd", "cost_kind", "usage_complete")


def count_text(value: int | None) -> str:
    """`950`, `12.3k`, `4.5M`; `?` when unknown."""
    if value is None:
        return "?"
    if value < 1000:
        return str(value)
    number, unit = (value / 1000, "k") if value < 999_950 else (value / 1_000_000, "M")
    return f"{number:.1f}".removesuffix(".0") + unit


def _dollars(cost: float) -> str:
    if cost == 0:
        return "$0"
    if cost < 0.01:
        text = f"{cost:.4f}"
        return "<$0.0001" if text == "0.0000" else "$" + text
    return "$" + (f"{cost:.3f}" if cost < 1 else f"{cost:,.2f}")


def cost_text(usage: Usage) -> str:
    """`$0.042` (actual), `~$0.042` (estimated), `$?` (no cost known)."""
    if usage.cost_usd is None:
        return "$?"
    return ("~" if usage.cost_kind == "estimated" else "") + _dollars(usage.cost_usd)


def cell(usage: Usage | None) -> str:
    """The table's usage cell; `-` when the task has no usage."""
    if usage is None:
        return "-"
    lower = "" if usage.complete else "≥"
    return f"{lower}{count_text(usage.input_tokens)}/{count_text(usage.output_tokens)} {cost_text(usage)}"


def told(entry: TaskEntry) -> str | None:
    """`told 10k/1.2k`: the tokens the result gave the parent, when a figure both sides have
    differs from the proven sum; else None."""
    usage, tokens = entry.usage, entry.tokens
    if usage is None or tokens is None:
        return None
    pairs = ((tokens.input, usage.input_tokens), (tokens.output, usage.output_tokens))
    if all(a is None or b is None or a == b for a, b in pairs):
        return None
    return told_text(tokens)


def told_text(tokens: TaskTokens) -> str:
    """`told 10k/1.2k`: the tokens a task's result gave the parent."""
    return f"told {count_text(tokens.input)}/{count_text(tokens.output)}"


def _full(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _amount(cost: float) -> str:
    return f"{cost:.6f}".rstrip("0").rstrip(".")


def line(usage: Usage | None) -> str | None:
    """`show`'s header line: the tokens (cache and reasoning tokens when not 0), the calls,
    the cost and its kind, the segments summed, and what the sum lacks; None without usage."""
    if usage is None:
        return None
    parts = [f"{_full(usage.input_tokens)} in", f"{_full(usage.output_tokens)} out"]
    extras = (
        (usage.cache_read_tokens, "cache read"),
        (usage.cache_write_tokens, "cache write"),
        (usage.reasoning_tokens, "reasoning"),
    )
    parts += [f"{_full(n)} {label}" for n, label in extras if n]  # a zero says nothing here
    parts.append(f"{_full(usage.api_calls)} API call" + ("" if usage.api_calls == 1 else "s"))
    if usage.cost_usd is None:
        parts.append("cost unknown")
    else:
        sign = "~" if usage.cost_kind == "estimated" else ""
        parts.append(f"{sign}${_amount(usage.cost_usd)} {usage.cost_kind}")
    parts.append(f"{usage.segments} segment" + ("" if usage.segments == 1 else "s"))
    text = "usage: " + " · ".join(parts)
    if not usage.complete:
        text += " · not complete: " + "; ".join(MISSING[m] for m in usage.missing)
    return text


def fields(usage: Usage | None) -> tuple[str, ...]:
    """The piped line's usage fields (`FIELD_NAMES`); empty where unknown."""
    if usage is None:
        return ("",) * len(FIELD_NAMES)
    cost = "" if usage.cost_usd is None else f"{usage.cost_usd:.10f}".rstrip("0").rstrip(".")
    return (
        "" if usage.input_tokens is None else str(usage.input_tokens),
        "" if usage.output_tokens is None else str(usage.output_tokens),
        cost,
        usage.cost_kind or "",
        "true" if usage.complete else "false",
    )
