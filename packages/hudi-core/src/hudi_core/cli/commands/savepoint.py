"""``hudi-py savepoint``: keep a completed commit restorable (create, list, delete)."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("savepoint", help="create, list or delete savepoints",
                       description="Savepoint a completed commit (default: the latest) as Hudi's "
                                   "create_savepoint does: the cleaner and archival keep its files, and "
                                   "`hudi-py restore` brings the table back to it. --list shows the "
                                   "savepoints, --delete removes one.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("instant", nargs="?", help="the commit to savepoint (or, with --delete, the savepoint)")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--list", action="store_true", help="list the table's savepoints")
    action.add_argument("--delete", action="store_true", help="delete the savepoint at INSTANT")
    p.add_argument("--user", default="", help="who savepoints (savepointedBy)")
    p.add_argument("--comment", default="", help="why (comments)")
    add_option_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable
    from hudi_core.errors import ConfigError

    options = parse_options(args.option)
    table = HudiTable.open(args.base_uri, options=options)
    if args.list:
        print_json({"savepoints": table.savepoints()})
    elif args.delete:
        if not args.instant:
            raise ConfigError("--delete needs the savepoint's instant")
        table.delete_savepoint(args.instant, options)
        print_json({"deleted": args.instant})
    else:
        print_json({"savepoint": table.savepoint(args.instant, user=args.user, comments=args.comment,
                                                 options=options)})  # fmt: skip
    return 0
