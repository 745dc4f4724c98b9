"""``hudi-py compact``: schedule and/or run compactions of a MERGE_ON_READ table."""

from __future__ import annotations

import argparse
from typing import Any

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "compact", help="compact a MERGE_ON_READ table (schedule a plan, then run pending plans)",
        description="Without flags: schedule a plan over every file slice with log files (whatever "
                    "the trigger says), then run every pending plan oldest first.",
    )  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--schedule", action="store_true", help="only schedule a plan")
    mode.add_argument("--run", nargs="?", const="", default=None, metavar="INSTANT",
                      help="only run pending plans (or the one named)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_option_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable
    from hudi_core.write.transaction import writer_guard

    options = parse_options(args.option)
    table = HudiTable.open(args.base_uri, options=options)
    with writer_guard(table, table.write_config(options)):  # a table service is a writer
        return _compact(args, table, options)


def _compact(args: argparse.Namespace, table: Any, options: dict[str, str]) -> int:
    from hudi_core.cli.progress import Progress
    from hudi_core.compaction import (
        CompactionError,
        pending_compactions,
        read_plan,
        run_compaction,
        schedule_compaction,
    )

    scheduled = None
    if args.run is None:
        scheduled = schedule_compaction(table, config=options, force=True)
        if args.schedule:
            if args.json:
                print_json({"scheduled": scheduled})
            else:
                print(f"scheduled compaction {scheduled}" if scheduled else "nothing to compact")
            return 0
    targets = [i.timestamp for i in pending_compactions(table)]
    if args.run:
        targets = [args.run]
    done = []
    for t in targets:
        try:
            total = len(read_plan(table, t).operations)
        except CompactionError:
            total = 0  # run_compaction below says why this instant cannot run
        with Progress(total, f"compacting {t}") as bar:
            result = run_compaction(table, t, config=options, progress=lambda _r: bar.advance())
        done.append({"instant": t, "file_groups": len(result.operations),
                     "records": result.records_written})  # fmt: skip
    if args.json:
        print_json({"scheduled": scheduled, "completed": done})
        return 0
    if not done:
        print("nothing to compact")
    for d in done:
        print(f"completed compaction {d['instant']}: {d['file_groups']} file groups, {d['records']} records")
    return 0
