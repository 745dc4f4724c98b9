"""``hudi-py cluster``: schedule and/or run clusterings (small file slices rewritten into fewer,
larger file groups, optionally sorted)."""

from __future__ import annotations

import argparse
from typing import Any

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "cluster", help="cluster a table's small file slices (schedule a plan, then run pending plans)",
        description="Without flags: run every pending clustering, then schedule a plan over the small "
                    "file slices (base file under hoodie.clustering.plan.strategy.small.file.limit) and "
                    "run it, as Hudi's run_clustering procedure does. Writes meanwhile may not update "
                    "the file groups of a pending plan.",
    )  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--schedule", action="store_true", help="only schedule a plan")
    mode.add_argument("--run", nargs="?", const="", default=None, metavar="INSTANT",
                      help="only run pending plans (or the one named)")  # fmt: skip
    mode.add_argument("--list", action="store_true",
                      help="list pending clusterings (Hudi's show_clustering): state, groups, file groups")  # fmt: skip
    p.add_argument("--sort-columns", metavar="COLS",
                   help="sort each group's rows by these comma-separated columns "
                        "(hoodie.clustering.plan.strategy.sort.columns)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_option_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable
    from hudi_core.config.clustering import ClusteringOptions
    from hudi_core.write.transaction import writer_guard

    options = parse_options(args.option)
    if args.sort_columns:
        options[ClusteringOptions.SORT_COLUMNS.key] = args.sort_columns
    table = HudiTable.open(args.base_uri, options=options)
    with writer_guard(table, table.write_config(options)):  # a table service is a writer
        return _cluster(args, table, options)


def _cluster(args: argparse.Namespace, table: Any, options: dict[str, str]) -> int:
    from hudi_core.clustering import pending_clusterings, read_plan, run_clustering, schedule_clustering

    if args.list:
        pending = []
        for inst in pending_clusterings(table):
            plan = read_plan(table, inst.timestamp)
            pending.append({"instant": inst.timestamp, "state": inst.state.name, "groups": len(plan.groups),
                            "file_groups": sum(len(g.slices) for g in plan.groups),
                            "sort_columns": plan.sort_columns})  # fmt: skip
        if args.json:
            print_json({"pending": pending})
        for p in pending if not args.json else []:
            print(f"{p['instant']} {p['state']}: {p['groups']} groups, {p['file_groups']} file groups")
        return 0
    scheduled = None
    targets = [args.run] if args.run else [i.timestamp for i in pending_clusterings(table)]
    if args.run is None:
        scheduled = schedule_clustering(table, config=options)
        if args.schedule:
            if args.json:
                print_json({"scheduled": scheduled})
            else:
                print(f"scheduled clustering {scheduled}" if scheduled else "nothing to cluster")
            return 0
        targets += [scheduled] if scheduled else []
    done = []
    for t in targets:
        result = run_clustering(table, t, config=options)
        done.append({"instant": t, "replaced_file_groups": sum(map(len, result.replaced_file_ids.values())),
                     "new_file_groups": len(result.metadata.all_write_stats()),
                     "records": result.records_written})  # fmt: skip
    if args.json:
        print_json({"scheduled": scheduled, "completed": done})
    elif not done:
        print("nothing to cluster")
    for d in done if not args.json else []:
        print(f"clustering {d['instant']}: {d['replaced_file_groups']} file groups -> "
              f"{d['new_file_groups']}, {d['records']} records")  # fmt: skip
    return 0
