"""``hudi-py timeline``: the instants of the active timeline (``--archived``: the archived ones
before them), and where the active timeline starts."""

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
    p.add_argument("--archived", action="store_true",
                   help="also the archived instants (.hoodie/archived), before the active ones")  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable

    table = HudiTable.open(args.base_uri)
    listed = [(inst, False) for inst in table.timeline]
    if args.archived:
        from hudi_core.archival import archived_instants

        listed = [(a.instant, True) for a in archived_instants(table)] + listed
    rows = []
    for inst, archived in listed:
        if args.action and args.action not in (inst.action, inst.display_action):
            continue
        if args.state and inst.state.name != args.state:
            continue
        row = {"instant": inst.timestamp, "action": inst.display_action, "state": inst.state.name}
        rows.append({**row, "archived": True} if archived else row)
    first = table.timeline.first()
    if args.json:
        print_json(rows)
        return 0
    print(f"active timeline starts at {first.timestamp if first else '-'}")
    if not rows:
        print("(no instants)")
        return 0
    print(f"{'INSTANT':<19} {'ACTION':<14} STATE")
    for r in rows:
        print(
            f"{r['instant']:<19} {r['action']:<14} {r['state']}{' (archived)' if r.get('archived') else ''}"
        )
    return 0
