"""``hudi-py compactions``: the compaction plans of a table with their state."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("compactions", help="list compaction plans (state, operations)",
                       description="List every compaction instant on the active timeline.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("--json", action="store_true", help='print [{"instant", "state", "operations"}...]')
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable
    from hudi_core.compaction import CompactionError, read_plan
    from hudi_core.timeline import Action

    table = HudiTable.open(args.base_uri)
    rows = []
    for inst in table.timeline:
        if inst.action != Action.COMPACTION:
            continue
        try:
            ops = len(read_plan(table, inst.timestamp).operations)
        except CompactionError:
            ops = None  # plan archived or removed
        rows.append({"instant": inst.timestamp, "state": inst.state.name, "operations": ops})
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("(no compactions)")
        return 0
    print(f"{'INSTANT':<19} {'STATE':<10} OPERATIONS")
    for r in rows:
        print(f"{r['instant']:<19} {r['state']:<10} {'-' if r['operations'] is None else r['operations']}")
    return 0
