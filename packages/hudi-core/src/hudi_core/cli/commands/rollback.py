"""``hudi-py rollback``: roll back a pending or the latest completed write instant."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("rollback", help="roll back a write instant",
                       description="Roll back a pending or the latest completed write instant.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("instant", help="instant time to roll back (see `hudi-py timeline`)")
    add_option_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable

    options = parse_options(args.option)
    res = HudiTable.open(args.base_uri, options=options).rollback(args.instant, options)
    print_json({"rollback_instant": res.rollback_instant, "rolled_back": res.rolled_back,
                "deleted_files": res.deleted_files, "rollback_log_files": res.rollback_log_files})  # fmt: skip
    return 0
