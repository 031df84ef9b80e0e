"""`hermes-task parents` against the real backends (issue 26 item 2): the dashboard's own store
proposes the chats that delegated, each printed only once the dashboard proves it.

- The seeded chats that delegated are listed, most recent delegation first, with the children
  each one's proposal proved over HTTP (the manifest's counts), an orchestrator child with the
  chat that delegated it, and no chat that never delegated.
- A chat that delegates now (seeded through the package's own delegate path) is listed first,
  proven, and PARENT_ID completion offers it first.
- Without a store: `store_unavailable`, exit 12.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli_runner import backend_store_env, cli_env, hermes_task

pytestmark = pytest.mark.integration


def listed(backend: Any, *args: str) -> list[dict[str, Any]]:
    run = hermes_task(backend, "parents", "--json", *args)
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    doc = run.json()
    assert doc["kind"] == "parents"
    parents: list[dict[str, Any]] = doc["parents"]
    return parents


def test_the_seeded_chats_that_delegated_are_listed_newest_delegation_first(backend: Any) -> None:
    m = backend.manifest
    store = m["store"]
    by_id = {p["id"]: p for p in listed(backend, "--limit", "100")}
    # the seeding order of the chats' delegations (later tests may have added newer chats)
    seeded = [store["parent"], store["orch"]["child"], m["c3"]["parent"], m["other"]["parent"], m["parent"]]
    order = [sid for sid in by_id if sid in seeded]
    assert order == seeded
    counts = {sid: by_id[sid]["delegated_children"] for sid in seeded}
    assert counts == {
        store["parent"]: 6,  # same x2, docs, orch, tool2, live (the synchronous failure never started one)
        store["orch"]["child"]: 1,
        m["c3"]["parent"]: 1,
        m["other"]["parent"]: 1,
        m["parent"]: len(m["expected_tasks"]),
    }
    assert by_id[store["orch"]["child"]]["delegated_by"] == store["parent"]
    assert {by_id[sid]["delegated_by"] for sid in seeded if sid != store["orch"]["child"]} == {None}
    main = by_id[m["parent"]]
    assert main["state"] == "open"  # the seeded chat keeps its agent open
    assert main["source"] == "cli"
    assert main["first_words"] == "Audit this repository: summarise the modules and describe the screenshot."
    assert main["last_delegated_at"] is not None
    assert main["last_delegated_at"] >= main["started_at"]
    assert m["plain"]["root"] not in by_id
    assert m["plain"]["tip"] not in by_id


def test_a_chat_that_delegates_now_is_listed_first_and_completed_first(backend: Any, tmp_path: Path) -> None:
    goals = ["Lint the changelog", "Rebuild the docs"]
    unit = backend.watch_parent(goals)
    first = listed(backend)[0]
    assert first["id"] == unit["parent"]
    assert first["delegated_children"] == len(goals)
    assert first["state"] == "open"
    assert first["delegated_by"] is None
    piped = hermes_task(backend, "parents")
    assert piped.code == 0, piped.stderr
    fields = piped.stdout.splitlines()[0].split("\t")
    assert (fields[0], fields[2], fields[3]) == (unit["parent"], str(len(goals)), "open")
    # PARENT_ID completion (recover, follow --parent) offers it first: the store's proposal
    console_script = Path(sys.executable).parent / "hermes-task"
    env = cli_env(backend.token, **backend_store_env(backend))
    for line in (
        f"hermes-task recover --url {backend.url} ",
        f"hermes-task follow --url {backend.url} --parent ",
    ):
        proc = subprocess.run(
            [str(console_script)],
            capture_output=True,
            text=True,
            env={
                **env,
                "_HERMES_TASK_COMPLETE": "complete_fish",
                "_TYPER_COMPLETE_ARGS": line,
                "_TYPER_COMPLETE_FISH_ACTION": "get-args",
            },
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        offered = proc.stdout.split()
        assert offered[0] == unit["parent"], line
        assert backend.manifest["parent"] in offered


def test_without_a_store_it_is_store_unavailable(backend: Any, tmp_path: Path) -> None:
    run = hermes_task(backend, "parents", "--json", "--no-store")
    assert run.code == 12
    assert run.json()["error"]["code"] == "store_unavailable"
    missing = hermes_task(backend, "parents", "--store", str(tmp_path / "state.db"))
    assert missing.code == 12
    assert missing.stdout == ""
    assert missing.stderr.splitlines() == [
        f"error: the local Hermes store is needed and could not be read: no store file at {tmp_path / 'state.db'}",
        "hint: run hermes-task on the dashboard's host (as the user that runs it), or pass --store PATH "
        "to the dashboard's state.db",
    ]
