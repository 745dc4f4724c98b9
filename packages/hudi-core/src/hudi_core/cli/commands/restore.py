"""``hudi-py restore``: bring the table back to a savepoint (Hudi's rollback_to_savepoint)."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("restore", help="restore the table to a savepoint",
                       description="Roll back every write after a savepoint, newest first, as one "
                                   "restore instant (Hudi's rollback_to_savepoint). Stop the writers "
                                   "first.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("savepoint", help="the savepoint's instant (see `hudi-py savepoint --list`)")
    add_option_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable

    options = parse_options(args.option)
    res = HudiTable.open(args.base_uri, options=options).restore(args.savepoint, options)
    print_json({"restore_instant": res.restore_instant, "savepoint": res.savepoint,
                "rolled_back": res.rolled_back})  # fmt: skip
    return 0
