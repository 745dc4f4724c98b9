"""``hudi-py file-slices``: the latest file slice of every file group."""

from __future__ import annotations

import argparse
from typing import Any

from hudi_core.cli.commands._common import print_json


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("file-slices", help="list the latest file slice of every file group",
                       description="List partition, file id, base instant, base file and log files "
                                   "of the latest slice of every visible file group.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("--as-of", default=None, metavar="T", help="as of instant T")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable

    table = HudiTable.open(args.base_uri)
    slices = sorted(table.file_slices(as_of=args.as_of), key=lambda s: (s.partition_path, s.file_id))
    rows: list[dict[str, Any]] = [
        {
            "partition": s.partition_path,
            "file_id": s.file_id,
            "base_instant": s.base_instant,
            "base_file": s.base_file.name if s.base_file else None,
            "log_files": [lf.name for lf in s.log_files],
        }
        for s in slices
    ]
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("(no file slices)")
        return 0
    for r in rows:
        print(f"{r['partition'] or '(root)'}  {r['file_id']}  {r['base_instant']}")
        print(f"    base: {r['base_file'] or '(none)'}")
        for name in r["log_files"]:
            print(f"    log:  {name}")
    return 0
