"""``hudi-py archive``: move completed instants beyond the keep window to ``.hoodie/archived``."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("archive", help="archive old instants (hoodie.keep.min/max.commits)",
                       description="Archive completed instants beyond hoodie.keep.max.commits, keeping "
                                   "hoodie.keep.min.commits, as Hudi's archiver does.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("--json", action="store_true", help="print what was archived as JSON")
    add_option_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable

    options = parse_options(args.option)
    result = HudiTable.open(args.base_uri, options=options).archive(options)
    instants = [
        {"instant": i.timestamp, "action": i.display_action} for i in (result.instants if result else [])
    ]
    summary = {"archive_file": result.archive_file if result else None, "archived": instants}
    if args.json:
        print_json(summary)
    elif result is None:
        print("nothing to archive")
    else:
        print(f"archived {len(instants)} instants ({instants[0]['instant']} .. {instants[-1]['instant']}) "
              f"to {result.archive_file}")  # fmt: skip
    return 0
