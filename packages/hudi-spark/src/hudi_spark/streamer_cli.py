"""The body of ``hudi-py streamer`` (the command module in hudi-core stays import-light)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from hudi_core.errors import ConfigError

__all__ = ["run_streamer", "streamer_options"]


#: HoodieStreamer's DFS source classes -> the format of our file source
_SOURCE_CLASSES = {"JsonDFSSource": "json", "CsvDFSSource": "csv", "ParquetDFSSource": "parquet"}
#: where HoodieStreamer's DFS sources read from (the older key second)
DFS_ROOT_KEYS = ("hoodie.streamer.source.dfs.root", "hoodie.deltastreamer.source.dfs.root")


def streamer_options(args: argparse.Namespace, extra: Mapping[str, str]) -> dict[str, str]:
    """Hudi write options from the streamer flags, then ``--props``, then ``--hoodie-conf``
    (each wins over the one before)."""
    from hudi_core.config.properties import load_properties

    opts: dict[str, str] = {"hoodie.datasource.write.table.type": args.table_type}
    if args.target_table:
        opts["hoodie.table.name"] = args.target_table
    if args.record_key:
        opts["hoodie.datasource.write.recordkey.field"] = args.record_key
    if args.partition_field:
        opts["hoodie.datasource.write.partitionpath.field"] = args.partition_field
    if args.source_ordering_field:
        opts["hoodie.datasource.write.precombine.field"] = args.source_ordering_field
    if getattr(args, "props", None):
        try:
            with open(args.props, encoding="utf-8") as f:
                opts.update(load_properties(f.read()))
        except OSError as e:
            raise ConfigError(f"cannot read --props {args.props!r}: {e.strerror or e}") from e
    opts.update(extra)
    if getattr(args, "filter_dupes", False):  # HoodieStreamer's --filter-dupes
        op = str(args.op).upper()
        if op == "UPSERT":
            raise ConfigError("'--filter-dupes' needs to be disabled when '--op' is 'UPSERT' to ensure updates "
                              "are not missed (as HoodieStreamer refuses it)")  # fmt: skip
        if op == "BULK_INSERT":
            raise ConfigError("'--filter-dupes' with '--op BULK_INSERT' is not supported here: use '--op INSERT' "
                              "(the records whose key the table holds are dropped, the batch deduplicated)")  # fmt: skip
        opts["hoodie.datasource.write.insert.drop.duplicates"] = "true"
    return opts


def _source(args: argparse.Namespace, options: Mapping[str, str]) -> Any:
    from hudi_spark.streamer import FileSource, RateSource

    fmt = args.source_format
    if getattr(args, "source_class", None):
        name = args.source_class.rsplit(".", 1)[-1]
        if name not in _SOURCE_CLASSES:
            raise ConfigError(
                f"--source-class {args.source_class!r} is not one of {', '.join(_SOURCE_CLASSES)}"
            )
        fmt = _SOURCE_CLASSES[name]
    elif args.source_kind == "rate":
        return RateSource(rows_per_round=args.rate_rows)
    path = args.source_path or next((options[k] for k in DFS_ROOT_KEYS if options.get(k)), None)
    if not path:
        raise ConfigError(f"a file source needs --source-path <folder or URI> (or {DFS_ROOT_KEYS[0]})")
    limit = getattr(args, "source_limit", None) or 0
    return FileSource(path, fmt, args.max_files_per_round, args.source_schema, storage_options=options,
                      max_bytes=limit)  # fmt: skip


def run_streamer(args: argparse.Namespace, extra: Mapping[str, str]) -> int:
    from hudi_core.cli.commands._common import parse_options

    from hudi_spark.services import AsyncClusterer, AsyncCompactor
    from hudi_spark.session import spark_session
    from hudi_spark.streamer import RoundResult, Streamer
    from hudi_spark.transformers import transformers

    options = streamer_options(args, extra)
    source = _source(args, options)  # a bad source, transformer or flag fails here, before Spark starts
    transform = transformers(getattr(args, "transformer_class", None) or [], options)
    # the rounds report progress themselves; Spark's progress bars would overwrite those lines
    conf = {"spark.ui.showConsoleProgress": "false", **parse_options(args.spark_conf, "--spark-conf")}
    spark = spark_session(args.master, app_name="hudi-py-streamer", conf=conf, fast=args.quick_start)
    compactor = None
    if args.compact_every:  # a copy-on-write table is never compacted (the compactor checks)
        compactor = AsyncCompactor(spark, args.target_base_path, every=args.compact_every, options=options)
        options = {**options, "hoodie.compact.inline": "false"}  # as Hudi: async compaction, not inline
    clusterer = AsyncClusterer.from_options(spark, args.target_base_path, options)

    def report(r: RoundResult) -> None:
        what = f"commit {r.instant}: {r.rows} records" if r.instant else "nothing new"
        sched = f", compaction {r.compaction_scheduled} scheduled" if r.compaction_scheduled else ""
        sched += f", clustering {r.clustering_scheduled} scheduled" if r.clustering_scheduled else ""
        print(f"round {r.round}: {what} (checkpoint {r.checkpoint}){sched}", file=sys.stderr, flush=True)

    streamer = Streamer(spark, args.target_base_path, source, options, args.op.lower(), compactor=compactor,
                        clusterer=clusterer, on_round=report, transform=transform,
                        checkpoint=getattr(args, "checkpoint", None))  # fmt: skip
    try:
        streamer.run(continuous=args.continuous, min_sync_interval=args.min_sync_interval_seconds,
                     max_rounds=args.max_rounds)  # fmt: skip
    finally:
        spark.stop()
    return 0
