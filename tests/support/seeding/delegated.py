"""The delegated task: parent P's synchronous, background, legacy and control calls, the
whole ``seed`` run that writes every scenario, and the manifest."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.seeding import children, segments, store, usage
from tests.support.seeding.common import GOALS, MODEL, Agent, Msg, SeedError, backend_label
from tests.support.seeding.payloads import (
    assistant_call,
    c1_c2_completion,
    dispatched_payload,
    new_delegation_id,
    result_entry,
    sync_note,
    tool_result,
)
from tests.support.seeding.seeder import Seeder


def seed(out: Path, name: str | None = None) -> dict[str, Any]:
    label = backend_label(name)
    s = Seeder()
    print(f"seeding: {label['name']} capabilities {json.dumps(s.caps.summary())}", file=sys.stderr)
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
    call, sync_call = assistant_call({"tasks": [{"goal": GOALS["long"]}, {"goal": GOALS["rich"]}]})
    p(call)
    long_child = s.child(parent, 0, GOALS["long"], 2)
    rich_child = s.child(parent, 1, GOALS["rich"], 2)
    children.seed_long(s, long_child, manifest)
    children.seed_rich(s, rich_child, manifest)
    p(
        tool_result(
            sync_call,
            {
                "results": [
                    result_entry(s, 0, "completed", "Summarised 119 modules.", 120, 48.2),
                    result_entry(s, 1, "failed", "", 4, 6.5),
                ],
                "total_duration_seconds": 48.9,
                "note": sync_note(s),
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
    call, bg_call = assistant_call({"tasks": [{"goal": GOALS["c1"]}, {"goal": GOALS["c2"]}]})
    p(call)
    dispatched_at = time.time()
    bg_deleg = new_delegation_id()
    c1 = s.child(parent, 0, GOALS["c1"], 2)
    c2 = s.child(parent, 1, GOALS["c2"], 2, source="tool")
    bg_payload = dispatched_payload(s, [GOALS["c1"], GOALS["c2"]], bg_deleg, [c1, c2])
    p(tool_result(bg_call, bg_payload))
    bg_sids = bg_payload.get("subagent_ids") or [None, None]

    # ---- legacy top-level goal call: running --------------------------------------------
    call, legacy_call = assistant_call({"goal": GOALS["running"], "context": "pytest -q in a loop"})
    p(call)
    legacy_deleg = new_delegation_id()
    running = s.child(parent, 0, GOALS["running"], 1)
    legacy_payload = dispatched_payload(s, [GOALS["running"]], legacy_deleg, [running])
    p(tool_result(legacy_call, legacy_payload))
    legacy_sids = legacy_payload.get("subagent_ids") or [None]

    # ---- control plane (0.20, iot): list, steer c1, stop running (acknowledgements only) --
    steer_text = "Skip tests/ when counting."
    if s.caps.control_action is not None:
        control_calls(
            s,
            parent,
            p,
            [(c1, GOALS["c1"]), (c2, GOALS["c2"]), (running, GOALS["running"])],
            bg_sids[0],
            legacy_sids[0],
            steer_text,
        )

    # ---- the children do their work --------------------------------------------------------
    segments.seed_c1(s, c1, manifest, steer_text)
    segments.seed_c2(s, c2, manifest)
    children.seed_running(s, running, manifest)

    # ---- async completion of the background unit ----------------------------------------
    p(c1_c2_completion(s, bg_deleg, dispatched_at, P))
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

    segments.seed_plain(s, manifest)
    segments.seed_other(s, manifest)
    segments.seed_c3(s, manifest)
    store.seed_store_cases(s, manifest)
    usage.seed_usage(s, manifest)  # last: no later write of a scenario resets the figures

    # The parent keeps its agent open (a live chat); ``running`` is never closed.
    manifest["seeded_in_seconds"] = round(time.time() - started, 2)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=True) + "\n", encoding="utf-8")
    tmp.replace(out)
    return manifest


def control_calls(
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
        call, call_id = assistant_call(args)
        p(call)
        ack = _handle_control_action(args["action"], args.get("subagent_id"), args.get("message"), parent)
        if '"error"' in ack[:20]:
            raise SeedError(f"control action {args['action']} failed: {ack}")
        p(tool_result(call_id, ack))
