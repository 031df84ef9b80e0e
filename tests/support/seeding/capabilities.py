"""What the installed package offers, found by looking for it (never by version string)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.seeding.common import SeedError


def find(*candidates: str) -> Any:
    """The first ``module:attribute`` that this package has, or None."""
    import importlib

    for candidate in candidates:
        module_name, _, attr = candidate.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, attr):
            return getattr(module, attr)
    return None


def assigned_literal(func: Any, target: str, prefix: str) -> str | None:
    """The string literal that *func*'s source assigns to *target* (e.g. ``payload["note"]``)
    and that starts with *prefix*: how a version words a note it builds inline."""
    import ast
    import inspect
    import textwrap

    target = ast.unparse(ast.parse(target, mode="eval").body)  # normalised quoting
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        value = node.value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        if value.value.startswith(prefix) and any(ast.unparse(t) == target for t in node.targets):
            return value.value
    return None


class Capabilities:
    """What the installed package offers, found by looking for it (not by version string).

    Every scenario is written through whichever of these the package has, so the same manifest
    comes out of hermes-agent 0.18.2/0.19.0, upstream 0.20.1 (axisrow) and the iot fork.
    """

    def __init__(self) -> None:
        import inspect

        import tools.delegate_tool as delegate_tool
        from hermes_state import SessionDB

        # delegate_task builds children through a wrapper that restores the parent's tool
        # globals where the package has one (iot: delegate_tool_results; 0.20: delegate_tool).
        self.build_child = find(
            "tools.delegate_tool_results:_build_child_preserving_parent_tools",
            "tools.delegate_tool:_build_child_preserving_parent_tools",
            "tools.delegate_tool:_build_child_agent",
        )
        # Typed rows: SessionDB.append_message takes display_kind/display_metadata (0.20, iot).
        params = inspect.signature(SessionDB.append_message).parameters
        self.display_columns = "display_kind" in params and "display_metadata" in params
        # A steer as its own typed user row (iot), else the marker appended to a tool result.
        self.steer_user_row = find("agent.prompt_builder:steer_user_row")
        self.format_steer_marker = find("agent.prompt_builder:format_steer_marker")
        # The background-dispatch tool result: iot has a builder; the others build it inline in
        # delegate_task, 0.20 adding subagent_ids and a control_hint there.
        self.dispatched_payload = find("tools.delegate_tool_dispatch:_dispatched_payload")
        self.control_hint = assigned_literal(
            delegate_tool.delegate_task, 'payload["control_hint"]', "While a child runs"
        )
        # delegate_task(action=list|steer|stop) (0.20, iot).
        self.control_action = find(
            "tools.delegate_tool_registry:_handle_control_action",
            "tools.delegate_tool:_handle_control_action",
        )
        self.register_subagent = find(
            "tools.delegate_tool_registry:_register_subagent", "tools.delegate_tool:_register_subagent"
        )
        # The note a synchronous fallback run carries, as this version words it.
        notes = find("tools.delegate_tool_dispatch:_SYNC_FALLBACK_NOTES")
        sync_note: str | None = (
            notes["no_async"]
            if notes
            else assigned_literal(delegate_tool.delegate_task, '_sync_result["note"]', "background=true")
        )
        if not sync_note:
            raise SeedError("cannot find how delegate_task words its synchronous-fallback note")
        self.sync_note: str = sync_note
        # Keys of one synchronous result entry beyond the common ones.
        sources = "".join(
            path.read_text(encoding="utf-8")
            for path in sorted(Path(delegate_tool.__file__).parent.glob("delegate_tool*.py"))
        )
        self.entry_truncated = '"truncated": exit_reason' in sources
        self.entry_cost = 'entry["cost_usd"]' in sources
        # The parent's completion row for a background unit, and its typed metadata.
        self.format_completion = find(
            "tools.process_registry_notifications:_format_async_delegation",
            "tools.process_registry:_format_async_delegation",
        )
        self.completion_metadata = (
            find(
                "tui_gateway.session_notifications:_async_delegation_display_metadata",
                "tui_gateway.server:_async_delegation_display_metadata",
            )
            if self.display_columns
            else None
        )
        # Hermes' durable ledger of background units (the store's async_delegations table):
        # 0.19, upstream 0.20 and iot write it; 0.18 keeps its units in memory only.
        self.persist_dispatch = find("tools.async_delegation:_persist_dispatch")
        self.persist_completion = find("tools.async_delegation:_persist_completion")
        missing = [
            name
            for name in ("build_child", "format_steer_marker", "register_subagent", "format_completion")
            if getattr(self, name) is None and not (name == "format_steer_marker" and self.steer_user_row)
        ]
        if missing:
            raise SeedError(f"this package lacks what the scenarios need: {', '.join(missing)}")

    def summary(self) -> dict[str, Any]:
        """What was found, for the manifest (``seeded_with``)."""
        return {
            "build_child": self.build_child.__module__ + "." + self.build_child.__name__,
            "display_columns": self.display_columns,
            "steer_row": self.steer_user_row is not None,
            "dispatch_builder": self.dispatched_payload is not None,
            "dispatch_subagent_ids": self.dispatched_payload is not None or self.control_hint is not None,
            "control_actions": self.control_action is not None,
            "entry_truncated": self.entry_truncated,
            "entry_cost": self.entry_cost,
            "completion_metadata": self.completion_metadata is not None,
            "ledger": self.persist_dispatch is not None and self.persist_completion is not None,
        }
