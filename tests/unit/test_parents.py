"""`hermes-task parents` (issue 26 item 2): the newest chats that called delegate_task, proposed
by the local store and proven over HTTP (the chat's detail, and a child whose detail names it
as its delegation parent) before a line is printed; `store_unavailable` (exit 12) without a
store; every text from HTTP, sanitised."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from hermes_task.cli.options import Environment
from hermes_task.reading import hints
from tests.support.cli_runner import invoke
from tests.support.dashboard import Dashboard, serving
from tests.unit.conftest import SCHEMA

P1 = "20261201_100000_aaaaaa"
P2 = "20261201_110000_bbbbbb"
ORCH = "20261201_110005_cccccc"
KIDS1 = ["20261201_100001_a00001", "20261201_100002_a00002"]
KIDS2 = ["20261201_110001_b00001"]
GRAND = "20261201_110006_dddddd"
PLAIN = "20261201_120000_eeeeee"
HOSTILE = "Deploy \x1b[31mred\x1b[0m \x1b]52;c;ZXZpbA==\x07 and\tthen\nreport"


def config(parent: str | None) -> str | None:
    return json.dumps({"max_iterations": 90, "_delegate_from": parent}) if parent else None


class World:
    """One dashboard and its store, written from the same list of sessions."""

    def __init__(self, tmp_path: Path) -> None:
        self.dash = Dashboard()
        self.store = tmp_path / "state.db"
        conn = sqlite3.connect(self.store)
        conn.executescript(SCHEMA)
        conn.close()

    def session(
        self,
        sid: str,
        started: float,
        *,
        parent: str | None = None,
        marker: str | None = None,
        source: str = "cli",
        title: str | None = None,
        ended: float | None = None,
        profile: str | None = None,
        http: bool = True,
        first: str | None = None,
    ) -> None:
        if http:
            self.dash.put(
                sid,
                source=source,
                parent_session_id=parent,
                model_config=config(marker),
                started_at=started,
                ended_at=ended,
                end_reason="agent_close" if ended else None,
                title=title,
            )
            if first is not None:
                self.dash.row(sid, role="user", content=first, timestamp=started)
        conn = sqlite3.connect(self.store)
        conn.execute(
            "INSERT INTO sessions (id, source, parent_session_id, model_config, started_at, ended_at, title,"
            " profile_name) VALUES (?,?,?,?,?,?,?,?)",
            (sid, source, parent, config(marker), started, ended, title, profile),
        )
        conn.commit()
        conn.close()

    def child(self, sid: str, parent: str, started: float, **kw: Any) -> None:
        self.session(sid, started, parent=parent, marker=parent, source="subagent", **kw)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    w.session(P1, 1000.0, first="Audit   this\nrepository, please.")
    for n, kid in enumerate(KIDS1):
        w.child(kid, P1, 1001.0 + n)
    w.session(P2, 1100.0, title=HOSTILE, ended=1200.0)
    w.child(KIDS2[0], P2, 1101.0)
    w.child(ORCH, P2, 1105.0, first="Prepare the release notes")  # an orchestrator child...
    w.child(GRAND, ORCH, 1106.0)  # ...that delegated in turn
    w.session(PLAIN, 1300.0, first="A chat that never delegated")
    with serving(w.dash.handle):
        yield w


def run(world: World, *args: str, tty: bool = False, env: dict[str, str] | None = None) -> Result:
    environment = Environment(isatty=lambda stream: True) if tty else None
    return invoke(
        "parents", *args, env={"HERMES_TASK_STORE": str(world.store), **(env or {})}, environment=environment
    )


def entry(sid: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": sid, "source": "cli", "started_at": None, "ended_at": None, "end_reason": None,
        "state": "open", "title": None, "first_words": None, "delegated_children": 1,
        "more_children": False, "last_delegated_at": None, "delegated_by": None, **fields,
    }  # fmt: skip


CLEAN_TITLE = "Deploy ^[[31mred^[[0m ^[]52;c;ZXZpbA==^G and then report"  # shown, never obeyed


def test_the_newest_delegation_first_each_proven_over_http(world: World) -> None:
    result = run(world, "--json")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    doc = json.loads(result.stdout)
    assert doc == {
        "schema_version": 1,
        "kind": "parents",
        "parents": [
            entry(ORCH, source="subagent", started_at=1105.0, first_words="Prepare the release notes",
                  last_delegated_at=1106.0, delegated_by=P2),
            entry(P2, started_at=1100.0, ended_at=1200.0, end_reason="agent_close", state="ended",
                  title=doc["parents"][1]["title"], delegated_children=2, last_delegated_at=1105.0),
            entry(P1, started_at=1000.0, first_words="Audit this repository, please.",
                  delegated_children=2, last_delegated_at=1002.0),
        ],
        "warnings": [],
    }  # fmt: skip
    # every text from HTTP, one clean line: no escape, tab or newline survives
    title = doc["parents"][1]["title"]
    assert "\x1b" not in title
    assert "\x07" not in title
    assert "\t" not in title
    assert "\n" not in title
    asked = world.dash.calls()
    assert ("detail", PLAIN) not in asked  # the store never proposed a chat that did not delegate
    for sid in [P1, P2, ORCH, *KIDS1, *KIDS2, GRAND]:
        assert ("detail", sid) in asked  # each parent and each child proven by its own detail
    assert ("messages", P2) not in asked  # a title: no transcript read
    assert world.dash.reads() == [("messages", ORCH, "0", "1"), ("messages", P1, "0", "1")]


def test_piped_lines_are_tab_separated_and_whole(world: World) -> None:
    result = run(world, "--header", "--utc", "--limit", "2")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "parent_session\tstarted\tchildren\tstate\tend_reason\tdelegated_by\ttitle",
        f"{ORCH}\t1970-01-01 00:18:25Z\t1\topen\t\t{P2}\tPrepare the release notes",
        f"{P2}\t1970-01-01 00:18:20Z\t2\tended\tagent_close\t\t{CLEAN_TITLE}",
    ]
    assert result.stderr == ""


def test_the_table_on_a_terminal_prints_every_id_whole(world: World) -> None:
    for columns in ("200", "80", "40"):
        result = run(world, "--utc", tty=True, env={"COLUMNS": columns})
        assert result.exit_code == 0, result.output
        words = set(result.stdout.split())
        assert {ORCH, P1, P2} <= words, columns
        assert "\x1b" not in result.stdout
        assert "^[[31mred" in result.stdout
        assert "list a chat's tasks: hermes-task recover PARENT_SESSION" in " ".join(result.stdout.split())
    wide = run(world, "--utc", tty=True, env={"COLUMNS": "200"}).stdout.splitlines()
    assert wide[0].split() == [
        "parent",
        "session",
        "started",
        "children",
        "state",
        "delegated",
        "by",
        "title",
    ]
    assert wide[1].split()[:5] == [ORCH, "1970-01-01", "00:18:25Z", "1", "open"]
    narrow = run(world, "--utc", tty=True, env={"COLUMNS": "40"}).stdout.splitlines()
    assert narrow[:3] == [ORCH, "  started       1970-01-01 00:18:25Z", "  children      1"]


def test_a_proposal_the_dashboard_does_not_prove_is_never_printed(world: World) -> None:
    world.dash.missing.add(P1)  # the chat itself is not shown
    ghost = "20261201_130000_ffffff"
    world.session(ghost, 1300.0, http=True)
    world.child("20261201_130001_f00001", ghost, 1301.0, http=False)  # its child: store only
    other = "20261201_140000_999999"
    world.session(other, 1400.0)
    world.child("20261201_140001_900001", other, 1401.0)
    world.dash.details["20261201_140001_900001"]["model_config"] = config(P2)  # names another parent
    result = run(world, "--json", "--debug")
    assert result.exit_code == 0, result.output
    assert [p["id"] for p in json.loads(result.stdout)["parents"]] == [ORCH, P2]
    assert "parents: a proposal was dropped (no_child_shown)" in result.stderr
    assert "parents: a proposal was dropped (not_shown)" in result.stderr


def test_a_store_whose_proposals_the_dashboard_shows_none_of_is_another_dashboards(world: World) -> None:
    world.dash.missing.update({P1, P2, ORCH})
    result = run(world, "--json")
    assert result.exit_code == 12
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "store_unavailable"
    assert "another dashboard's store" in error["message"]
    assert (
        error["hint"]
        == "pass --store PATH to the store of the dashboard at this URL (its $HERMES_HOME/state.db)"
    )


def test_children_of_another_profile_are_not_proposed(world: World) -> None:
    work = "20261201_150000_111111"
    world.session(work, 1500.0)
    world.child("20261201_150001_100001", work, 1501.0, profile="work")
    result = run(world, "--json")
    assert work not in [p["id"] for p in json.loads(result.stdout)["parents"]]
    assert ("detail", work) not in world.dash.calls()


def test_more_children_than_checked_say_so(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hints, "CHILD_CHECKS", 1)
    doc = json.loads(run(world, "--json").stdout)
    counts = {p["id"]: (p["delegated_children"], p["more_children"]) for p in doc["parents"]}
    assert counts == {ORCH: (1, False), P2: (1, True), P1: (1, True)}
    table = run(world, tty=True, env={"COLUMNS": "200"}).stdout
    assert " 1+ " in table


def test_limit_and_the_scan_bound(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    assert [p["id"] for p in json.loads(run(world, "--json", "--limit", "1").stdout)["parents"]] == [ORCH]
    monkeypatch.setattr(hints, "SCAN", 2)  # the two newest rows with a parent: GRAND, ORCH
    doc = json.loads(run(world, "--json").stdout)
    assert [p["id"] for p in doc["parents"]] == [ORCH, P2]
    assert doc["warnings"] == [
        {"code": "bound_reached", "message": "a proof or paging bound stopped the work early (only the newest "
         "2 sessions with a parent in the store were read)"}
    ]  # fmt: skip


@pytest.mark.parametrize("how", ["off", "missing", "remote"])
def test_without_a_store_it_fails_store_unavailable_saying_what_to_do(
    world: World, tmp_path: Path, how: str
) -> None:
    args: tuple[str, ...] = ("--json",)
    env = {"HERMES_TASK_STORE": str(tmp_path / "nothing.db")}
    if how == "off":
        args += ("--no-store",)
    if how == "remote":
        env = {"HERMES_TASK_STORE": "", "HERMES_HOME": str(tmp_path)}
        with serving(world.dash.handle, "https://dash.example"):
            result = invoke("parents", *args, env=env, url="https://dash.example")
    else:
        result = invoke("parents", *args, env=env)
    assert result.exit_code == 12
    error = json.loads(result.stdout)["error"]
    expected = {
        "off": ("--no-store", "drop --no-store (or the config file's no_store = true)"),
        "missing": (
            f"no store file at {tmp_path / 'nothing.db'}",
            "run hermes-task on the dashboard's host (as the user that runs it), or pass --store PATH "
            "to the dashboard's state.db",
        ),
        "remote": (
            "the dashboard URL is not loopback: its store is not looked for here",
            "run hermes-task on the dashboard's host, where its store is found by itself, or pass "
            "--store PATH to the dashboard's state.db (a copy works)",
        ),
    }[how]
    assert error == {
        "code": "store_unavailable",
        "message": f"the local Hermes store is needed and could not be read: {expected[0]}",
        "retryable": False,
        "hint": expected[1],
    }
    assert world.dash.calls() == []  # nothing was asked of the dashboard
    human = invoke("parents", *args[1:], env=env) if how != "remote" else None
    if human is not None:
        assert human.exit_code == 12
        assert human.stdout == ""
        assert human.stderr.splitlines() == [
            f"error: the local Hermes store is needed and could not be read: {expected[0]}",
            f"hint: {expected[1]}",
        ]


def test_a_store_with_no_delegation_is_an_empty_list(tmp_path: Path) -> None:
    w = World(tmp_path)
    w.session(PLAIN, 1.0)
    with serving(w.dash.handle):
        piped = run(w)
        doc = run(w, "--json")
    assert (piped.exit_code, piped.stdout) == (0, "")
    assert piped.stderr == "no chat in the store called delegate_task (that the dashboard shows)\n"
    assert json.loads(doc.stdout) == {"schema_version": 1, "kind": "parents", "parents": [], "warnings": []}


def test_a_network_failure_is_the_commands_failure(world: World) -> None:
    import httpx

    world.dash.faults += [httpx.ConnectError("refused")] * 2  # once retried by the client
    result = run(world, "--json")
    assert result.exit_code == 7
    assert json.loads(result.stdout)["error"]["code"] == "network"


def test_the_order_is_the_newest_child_the_dashboard_proved(world: World) -> None:
    """The store proposes P3 first (its newest child started last), but the dashboard does not
    show that child: P3's proven newest child is older than every other chat's."""
    p3 = "20261201_090000_333333"
    world.session(p3, 900.0)
    world.child("20261201_090001_300001", p3, 901.0)
    world.child("20261201_160000_300002", p3, 1600.0, http=False)
    doc = json.loads(run(world, "--json").stdout)
    assert [(p["id"], p["last_delegated_at"]) for p in doc["parents"]] == [
        (ORCH, 1106.0), (P2, 1105.0), (P1, 1002.0), (p3, 901.0)
    ]  # fmt: skip


def test_only_ids_the_id_check_accepts_are_proposed() -> None:
    from hermes_task.core.lineage import StoreSession, propose_parents

    def row(sid: str, parent: str, marker: str | None = None, profile: str | None = None) -> StoreSession:
        return StoreSession(
            id=sid, parent_session_id=parent, model_config=config(marker or parent), started_at=1.0,
            ended_at=None, end_reason=None, source="subagent", profile_name=profile,
        )  # fmt: skip

    bad = "20261201_090002_cc\x1b]0;pwned\x07"
    rows = [
        row("20261201_090001_000001", bad),  # a parent id with a control sequence
        row(bad, P1),  # a child id with one
        row("20261201_090003_000003", " " + P2),  # surrounding whitespace
        row("20261201_090004_000004", P2, marker=P1),  # names another parent: a continuation's shape
        row("20261201_090005_000005", ORCH, profile="work"),  # another profile
        row("20261201_090006_000006", P1),
        row("20261201_090007_000007", P1),  # P1 again: once
        row("20261201_090008_000008", P2),
    ]
    assert propose_parents(rows, None, 10) == [P1, P2]
    assert propose_parents(rows, None, 1) == [P1]
    assert propose_parents(rows, "work", 10) == [ORCH, P1, P2]


def test_the_newest_children_are_proven_when_the_store_bound_cuts(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: the store proposes a parent's newest children; a cut is `more_children`."""
    monkeypatch.setattr("hermes_task.core.lineage.MAX_CHILDREN", 1)
    doc = json.loads(run(world, "--json").stdout)
    found = {
        p["id"]: (p["delegated_children"], p["more_children"], p["last_delegated_at"]) for p in doc["parents"]
    }
    assert found == {ORCH: (1, False, 1106.0), P2: (1, True, 1105.0), P1: (1, True, 1002.0)}
