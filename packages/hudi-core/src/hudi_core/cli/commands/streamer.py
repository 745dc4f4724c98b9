"""``hudi-py streamer``: continuous ingestion into a table with Spark (HoodieStreamer-like).

Thin: the work is in ``hudi_spark.streamer``; this command only parses flags (named after
HoodieStreamer's) and says what to install when hudi-spark is missing.
"""

from __future__ import annotations

import argparse

from hudi_core.cli.commands._common import parse_options
from hudi_core.errors import ConfigError


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "streamer", help="ingest a folder of files or generated rows into a table with Spark (needs hudi-spark)",
        description="Each round reads what is new in the source and writes it as one commit; the source "
        "checkpoint is kept in the commit metadata, so a restart continues where it stopped.",
    )  # fmt: skip
    p.add_argument("--target-base-path", required=True, help="the table's base path")
    p.add_argument("--target-table", default=None, help="table name (hoodie.table.name) when creating it")
    p.add_argument("--table-type", default="COPY_ON_WRITE", choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
    p.add_argument("--op", default="UPSERT", help="UPSERT, INSERT or BULK_INSERT")
    p.add_argument("--source-kind", default="dfs", choices=["dfs", "rate"],
                   help="dfs: new files of --source-path; rate: --rate-rows generated rows per round")  # fmt: skip
    p.add_argument("--source-class", default=None,
                   help="HoodieStreamer's source class instead of --source-kind/--source-format: JsonDFSSource, "
                   "CsvDFSSource or ParquetDFSSource (short or org.apache.hudi.utilities.sources.* names)")  # fmt: skip
    p.add_argument("--props", default=None,
                   help="a properties file of hoodie.* options, as HoodieStreamer's --props (--hoodie-conf wins); "
                   "hoodie.streamer.source.dfs.root names the source folder")  # fmt: skip
    p.add_argument("--source-path", default=None, help="folder the dfs source watches")
    p.add_argument("--source-format", default="json", choices=["json", "csv", "parquet"])
    p.add_argument("--source-schema", default=None, help="DDL schema of the source files (else inferred)")
    p.add_argument("--max-files-per-round", type=int, default=0, help="0 = all new files")
    p.add_argument("--source-limit", type=int, default=0,
                   help="dfs: a round stops before the file that would bring its bytes to this many "
                   "(HoodieStreamer's; 0 = no limit; one file at least)")  # fmt: skip
    p.add_argument("--checkpoint", default=None,
                   help="resume from this source checkpoint (a dfs source's: epoch milliseconds, files modified "
                   "after it are new) instead of the table's, once: the commits record it "
                   "(deltastreamer.checkpoint.reset_key) and a run given the same value resumes from the table")  # fmt: skip
    p.add_argument("--rate-rows", type=int, default=1000)
    p.add_argument("--record-key", default=None, help="hoodie.datasource.write.recordkey.field")
    p.add_argument("--partition-field", default=None, help="hoodie.datasource.write.partitionpath.field")
    p.add_argument("--source-ordering-field", default=None, help="hoodie.datasource.write.precombine.field")
    p.add_argument("--continuous", action="store_true", help="keep running rounds")
    p.add_argument("--min-sync-interval-seconds", type=float, default=0.0)
    p.add_argument("--max-rounds", type=int, default=0, help="with --continuous: stop after this many rounds")
    p.add_argument("--compact-every", type=int, default=0,
                   help="MERGE_ON_READ: schedule a compaction every N deltacommits and run it asynchronously")  # fmt: skip
    p.add_argument("--transformer-class", action="append", default=[], metavar="CLASS[,CLASS...]",
                   help="HoodieStreamer's transformers, run in order on each round's rows: SqlQueryBasedTransformer "
                   "(hoodie.streamer.transformer.sql, the source named <SRC>) or SqlFileBasedTransformer "
                   "(hoodie.streamer.transformer.sql.file)")  # fmt: skip
    p.add_argument("--filter-dupes", action="store_true",
                   help="INSERT: drop the records whose key the table holds, and deduplicate the round's")  # fmt: skip
    p.add_argument("--master", default="local[2]", help="Spark master")
    p.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting for the session, e.g. spark.driver.memory=4g (repeatable)")  # fmt: skip
    p.add_argument("--quick-start", action="store_true",
                   help="small-machine settings: faster start-up, slower on large inputs (hudi_spark.session.FAST_CONF)")  # fmt: skip
    p.add_argument("--hoodie-conf", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="a hoodie.* option (repeatable)")  # fmt: skip
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from hudi_spark.streamer_cli import run_streamer
    except ImportError as e:
        raise ConfigError(
            f"hudi-py streamer runs on Spark and needs the hudi-spark package ({e}); install it: pip install hudi-spark"
        ) from e
    return run_streamer(args, parse_options(args.hoodie_conf, "--hoodie-conf"))
