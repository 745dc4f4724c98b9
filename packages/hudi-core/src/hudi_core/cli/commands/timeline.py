"""``hudi-py timeline``: the instants of the active timeline."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("timeline", help="list the instants of a table's timeline",
                       description="List every instant on the active timeline.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("--json", action="store_true", help='print [{"instant", "action", "state"}...]')
    p.add_argument("--action", default=None, help="only this action (commit, deltacommit, ...)")
    p.add_argument("--state", default=None, choices=["REQUESTED", "INFLIGHT", "COMPLETED"],
                   help="only this state")  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable

    table = HudiTable.open(args.base_uri)
    rows = []
    for inst in table.timeline:
        if args.action and args.action not in (inst.action, inst.display_action):
            continue
        if args.state and inst.state.name != args.state:
            continue
        rows.append({"instant": inst.timestamp, "action": inst.display_action, "state": inst.state.name})
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("(no instants)")
        return 0
    print(f"{'INSTANT':<19} {'ACTION':<14} STATE")
    for r in rows:
        print(f"{r['instant']:<19} {r['action']:<14} {r['state']}")
    return 0
