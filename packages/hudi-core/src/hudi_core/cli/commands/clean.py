"""``hudi-py clean``: delete file slices no retained query needs."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json
from hudi_core.cli.progress import progress_bars

_POLICY_RETAINED = {
    "KEEP_LATEST_COMMITS": "hoodie.cleaner.commits.retained",
    "KEEP_LATEST_FILE_VERSIONS": "hoodie.cleaner.fileversions.retained",
    "KEEP_LATEST_BY_HOURS": "hoodie.cleaner.hours.retained",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("clean", help="delete old file slices (hoodie.cleaner.* policy)",
                       description="Clean a table: KEEP_LATEST_COMMITS (default), "
                                   "KEEP_LATEST_FILE_VERSIONS or KEEP_LATEST_BY_HOURS.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument("--policy", choices=sorted(_POLICY_RETAINED), default=None, type=str.upper)
    p.add_argument("--retained", type=int, default=None,
                   help="commits, file versions or hours retained (by policy)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the clean metadata as JSON")
    add_option_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hudi_core import HudiTable
    from hudi_core.clean import clean
    from hudi_core.write.transaction import writer_guard

    options = parse_options(args.option)
    policy = args.policy or options.get("hoodie.cleaner.policy") or "KEEP_LATEST_COMMITS"
    options["hoodie.cleaner.policy"] = policy
    if args.retained is not None:
        options[_POLICY_RETAINED[policy.upper()]] = str(args.retained)
    table = HudiTable.open(args.base_uri, options=options)
    with writer_guard(table, table.write_config(options)), progress_bars("cleaning") as progress:
        meta = clean(table, config=options, progress=progress)
    summary = {
        "instant": meta.start_clean_time if meta else None,
        "policy": policy,
        "earliest_commit_to_retain": meta.earliest_commit_to_retain if meta else None,
        "files_deleted": meta.total_files_deleted if meta else 0,
        "partitions": {p: s.success_delete_files for p, s in meta.partitions.items()} if meta else {},
    }
    if args.json:
        print_json(summary)
    elif meta is None:
        print("nothing to clean")
    else:
        print(f"clean {meta.start_clean_time}: deleted {meta.total_files_deleted} files "
              f"(earliest commit retained: {meta.earliest_commit_to_retain or '-'})")  # fmt: skip
    return 0
