"""The seeding command line (``python -m tests.support.seeding``), run by the backend's interpreter."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from tests.support import seeding
from tests.support.seeding import compacted, delegated, fanout, held, mutations, rotparent, watch
from tests.support.seeding.common import check_environment, guard_network, stub_summariser, write_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(seeding.__doc__ or "").splitlines()[0])
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
    p_rot = sub.add_parser("rotate", help="append rows, rotate a session, append to the new segment")
    p_rot.add_argument("--session", required=True)
    p_rot.add_argument("--before", type=int, default=0)
    p_rot.add_argument("--after", type=int, default=0)
    p_rot.add_argument(
        "--how",
        choices=mutations.ROTATIONS,
        default="compressor",
        help="compressor: the real compression path, new segment ended; "
        "by-hand: 0.19.0's order of SessionDB calls, new segment left open",
    )
    p_chain = sub.add_parser("chain", help="a plain chat rotated N times through the real compressor")
    p_chain.add_argument("--rotations", type=int, required=True)
    p_chain.add_argument(
        "--fork", action="store_true", help="a second continuation of the last compressed segment"
    )
    p_demo = sub.add_parser("demo", help="the demo's parent chat and a still-running parent (tools/demo.py)")
    p_demo.add_argument("--out", required=True, type=Path)
    p_demo.add_argument("--watch-goals-json", required=True)
    p_wp = sub.add_parser("watch-parent", help="a parent whose background unit has not completed yet")
    p_wp.add_argument("--goals-json", required=True)
    sub.add_parser("rotated-parent", help="a parent rotated by compression whose later segment delegates")
    sub.add_parser("compacted-child", help="a background child compacted in place (its goal row archived)")
    p_fan = sub.add_parser("fan-out", help="a parent that dispatched N goals in one background unit (fast)")
    p_fan.add_argument("--goals-json", required=True)
    p_fan.add_argument(
        "--finished", action="store_true", help="every child ended; the completion row written"
    )
    p_fan.add_argument(
        "--nested", type=int, default=0, help="each child dispatched this many goals of its own"
    )
    sub.add_parser("writer", help="append one row per stdin line 'SESSION_ID TEXT'; print each commit")
    p_cu = sub.add_parser("complete-unit", help="write a background unit's completion row")
    p_cu.add_argument("--parent", required=True)
    p_cu.add_argument("--delegation", required=True)
    p_cu.add_argument("--goals-json", required=True)
    p_cu.add_argument("--statuses-json", required=True)
    p_cu.add_argument("--dispatched-at", type=float, required=True)
    p_hu = sub.add_parser("held-unit", help="a parent whose background unit runs, recorded in the ledger")
    p_hu.add_argument("--goals-json", required=True)
    p_fh = sub.add_parser("finish-held", help="close a held unit's children; maybe record its completion")
    p_fh.add_argument("--parent", required=True)
    p_fh.add_argument("--delegation", required=True)
    p_fh.add_argument("--goals-json", required=True)
    p_fh.add_argument("--children-json", required=True)
    p_fh.add_argument("--dispatched-at", type=float, required=True)
    p_fh.add_argument("--statuses-json", help="record the completion with these statuses (default: none)")
    args = parser.parse_args(argv)

    check_environment()
    guard_network()
    real_stdout = sys.stdout
    result: dict[str, Any] | None
    # The package prints status lines ("Compacting context…") on stdout; keep ours clean.
    with contextlib.redirect_stdout(sys.stderr):
        if args.cmd == "seed":
            write_config()
            stub_summariser()
            delegated.seed(args.out, args.name)
            result = None
        elif args.cmd == "demo":
            write_config()
            stub_summariser()
            watch.seed_demo(args.out, json.loads(args.watch_goals_json))
            result = None
        elif args.cmd == "append":
            result = mutations.append_rows(args.session, args.n)
        elif args.cmd == "rotate":
            result = mutations.rotate(args.session, before=args.before, after=args.after, how=args.how)
        elif args.cmd == "rotated-parent":
            write_config()
            stub_summariser()
            result = rotparent.rotated_parent()
        elif args.cmd == "compacted-child":
            write_config()
            stub_summariser()
            result = compacted.compacted_child()
        elif args.cmd == "held-unit":
            result = held.held_unit(json.loads(args.goals_json))
        elif args.cmd == "finish-held":
            result = held.finish_held(
                args.parent,
                args.delegation,
                json.loads(args.goals_json),
                json.loads(args.children_json),
                args.dispatched_at,
                None if args.statuses_json is None else json.loads(args.statuses_json),
            )
        elif args.cmd == "chain":
            result = mutations.chain(args.rotations, fork=args.fork)
        elif args.cmd == "fan-out":
            result = fanout.fan_out(json.loads(args.goals_json), finished=args.finished, nested=args.nested)
        elif args.cmd == "writer":
            fanout.writer()
            result = None
        elif args.cmd == "watch-parent":
            result = watch.watch_parent(json.loads(args.goals_json))
        elif args.cmd == "complete-unit":
            result = watch.complete_unit(
                args.parent,
                args.delegation,
                json.loads(args.goals_json),
                json.loads(args.statuses_json),
                args.dispatched_at,
            )
        else:
            result = mutations.end_session(args.session, args.reason)
    if result is not None:
        real_stdout.write(json.dumps(result) + "\n")
        real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
