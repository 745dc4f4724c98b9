"""``hudi-py write``: write a parquet file into a table (creating the table when absent)."""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import add_option_flag, parse_options, print_json
from hudi_core.cli.progress import progress_bars

OPERATIONS = ("insert", "upsert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("write", help="write a parquet file into a table",
                       description="Write FILE.parquet into the table (created when it does not exist) "
                                   "and print the instant and counts as JSON.")  # fmt: skip
    p.add_argument("base_uri", help="table base path or URI")
    p.add_argument(
        "--operation", default="upsert", choices=OPERATIONS, help="write operation (default upsert)"
    )
    p.add_argument("--input", required=True, metavar="FILE.parquet", help="the records (delete: the keys)")
    p.add_argument("--record-key", default=None, help="record key field(s) (needed to create the table)")
    p.add_argument("--partition-by", default=None, help="partition field(s)")
    p.add_argument("--ordering-field", default=None, help="precombine / ordering field")
    p.add_argument("--type", default=None, choices=["COPY_ON_WRITE", "MERGE_ON_READ", "cow", "mor"],
                   help="table type when the write creates the table")  # fmt: skip
    p.add_argument("--name", default=None, help="table name when the write creates the table")
    add_option_flag(p)
    p.set_defaults(func=run)


def _flag_options(args: argparse.Namespace) -> dict[str, str]:
    out: dict[str, str] = {}
    if args.record_key:
        out["hoodie.datasource.write.recordkey.field"] = args.record_key
    if args.partition_by:
        out["hoodie.datasource.write.partitionpath.field"] = args.partition_by
    if args.ordering_field:
        out["hoodie.datasource.write.precombine.field"] = args.ordering_field
    if args.type:
        out["hoodie.datasource.write.table.type"] = args.type
    return out


def run(args: argparse.Namespace) -> int:
    import pyarrow.parquet as pq

    from hudi_core import HudiTable
    from hudi_core.errors import ConfigError

    options = {**parse_options(args.option), **_flag_options(args)}
    data = pq.read_table(args.input)
    if HudiTable.exists(args.base_uri, options=options):
        table = HudiTable.open(args.base_uri, options=options)
        if args.name and args.name != table.name:
            raise ConfigError(f"--name {args.name!r} conflicts with the table's name {table.name!r}")
    else:
        if not args.record_key and "hoodie.datasource.write.recordkey.field" not in options:
            raise ConfigError(f"no table at {args.base_uri}: pass --record-key (and --name) to create one")
        name = (
            args.name
            or options.get("hoodie.datasource.write.table.name")
            or args.base_uri.rstrip("/").rsplit("/", 1)[-1]
        )
        table = HudiTable.create(
            args.base_uri, name=name, table_type=args.type or options.get("hoodie.datasource.write.table.type", "COPY_ON_WRITE"),
            record_key_fields=args.record_key or options["hoodie.datasource.write.recordkey.field"],
            partition_fields=args.partition_by, ordering_field=args.ordering_field, options=options,
            schema=data.schema if args.operation != "delete" else None,
        )  # fmt: skip
    with progress_bars(f"{args.operation} (write tasks)") as progress:
        if args.operation == "delete":
            result = table.delete(data, options=options)
        else:
            result = table._write(data, args.operation, options, progress=progress)
    print_json(result.to_dict())
    return 0
