"""``hudi-py streamer``: HoodieStreamer-like ingestion with Spark.

Each round reads what is new in a source, writes it as one commit (a deltacommit on MERGE_ON_READ)
with :func:`hudi_spark.writer.write`, and records the source checkpoint in the commit's extra
metadata, so a restarted streamer continues where the last completed commit stopped. Sources:
a folder of JSON/CSV/parquet files (files newer than the checkpoint), or ``rate`` (N generated
rows per round). Compaction is scheduled on the driver every N deltacommits and run in the
background while the next rounds ingest.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.errors import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["CHECKPOINT_KEY", "FileSource", "RateSource", "RoundResult", "Streamer", "last_checkpoint"]

#: the extra-metadata key HoodieStreamer keeps its source checkpoint under
CHECKPOINT_KEY = "deltastreamer.checkpoint.key"
_FORMATS = ("json", "csv", "parquet")


def last_checkpoint(base_uri: str) -> str | None:
    """The checkpoint of the newest completed commit that has one (None for a new table)."""
    from hudi_core.table import HudiTable
    from hudi_core.timeline.commit_metadata import CommitMetadata

    if not HudiTable.exists(base_uri):
        return None
    table = HudiTable.open(base_uri)
    tl = table.timeline
    for inst in reversed(list(tl.completed_commits())):
        meta = CommitMetadata.from_json(tl.read_details(inst))
        value = (meta.extra_metadata or {}).get(CHECKPOINT_KEY)
        if value:
            return str(value)
    return None


@dataclass
class FileSource:
    """New files of a folder (``*.json``, ``*.csv``, ``*.parquet``), oldest first.

    The checkpoint is ``<mtime_ns>:<name>`` of the last file taken; files sort by (mtime, name),
    so files sharing a modification time are neither skipped nor read twice.
    """

    path: str
    fmt: str = "json"
    max_files: int = 0
    schema: str | None = None

    def __post_init__(self) -> None:
        if self.fmt not in _FORMATS:
            raise ConfigError(f"source format {self.fmt!r} is not one of {', '.join(_FORMATS)}")
        if not os.path.isdir(self.path):
            raise ConfigError(f"source folder {self.path!r} does not exist")

    def _files(self) -> list[tuple[int, str]]:
        out = []
        for entry in os.scandir(self.path):
            if (
                entry.is_file()
                and entry.name.endswith("." + self.fmt)
                and not entry.name.startswith((".", "_"))
            ):
                out.append((entry.stat().st_mtime_ns, entry.name))
        return sorted(out)

    def next_batch(self, spark: SparkSession, checkpoint: str | None) -> tuple[DataFrame | None, str | None]:
        after: tuple[int, str] = (-1, "")
        if checkpoint:
            mtime, _, name = checkpoint.partition(":")
            after = (int(mtime), name)
        new = [f for f in self._files() if f > after]
        if self.max_files:
            new = new[: self.max_files]
        if not new:
            return None, checkpoint
        paths = [os.path.join(self.path, name) for _, name in new]
        reader = spark.read
        if self.schema:
            reader = reader.schema(self.schema)
        if self.fmt == "csv":
            reader = reader.option("header", "true").option("inferSchema", "true")
        df = reader.format(self.fmt).load(paths)  # (``reader.parquet`` takes no list)
        return df, f"{new[-1][0]}:{new[-1][1]}"


@dataclass
class RateSource:
    """``rows_per_round`` generated rows per round: ``value`` (the offset), ``ts``, ``key``."""

    rows_per_round: int = 1000
    keys: int = 0  # > 0: keys repeat modulo this many, so later rounds update earlier rows

    def next_batch(self, spark: SparkSession, checkpoint: str | None) -> tuple[DataFrame, str]:
        from pyspark.sql import functions as F

        start = int(checkpoint) if checkpoint else 0
        end = start + self.rows_per_round
        df = spark.range(start, end).withColumnRenamed("id", "value")
        key = F.col("value") % self.keys if self.keys else F.col("value")
        df = df.select(
            key.cast("string").alias("key"),
            F.col("value"),
            F.col("value").alias("ts"),
            (F.col("value") % 4).cast("string").alias("part"),
        )
        return df, str(end)


@dataclass
class RoundResult:
    round: int
    instant: str | None
    rows: int
    checkpoint: str | None
    compaction_scheduled: str | None = None


@dataclass
class Streamer:
    """Runs rounds: source -> :func:`hudi_spark.writer.write` -> commit with checkpoint."""

    spark: SparkSession
    base_uri: str
    source: Any
    options: Mapping[str, str] = field(default_factory=dict)
    operation: str = "upsert"
    compactor: Any = None  # hudi_spark.compaction.AsyncCompactor, for MERGE_ON_READ tables
    on_round: Callable[[RoundResult], None] | None = None

    def run_round(self, number: int = 0) -> RoundResult:
        from hudi_spark.writer import write

        checkpoint = last_checkpoint(self.base_uri)
        df, new_checkpoint = self.source.next_batch(self.spark, checkpoint)
        if df is None:
            result = RoundResult(number, None, 0, checkpoint)
        else:
            res = write(df, self.base_uri, operation=self.operation, options=self.options,
                        extra_metadata={CHECKPOINT_KEY: str(new_checkpoint)})  # fmt: skip
            result = RoundResult(number, res.instant, res.num_records, new_checkpoint)
        if self.compactor is not None and result.instant is not None:
            result.compaction_scheduled = self.compactor.maybe_schedule()
        if self.on_round is not None:
            self.on_round(result)
        return result

    def run(
        self, *, continuous: bool = False, min_sync_interval: float = 0.0, max_rounds: int = 0
    ) -> list[RoundResult]:
        """One round, or rounds until ``max_rounds`` (0 = forever) with ``continuous``."""
        results: list[RoundResult] = []
        number = 0
        try:
            while True:
                started = time.monotonic()
                results.append(self.run_round(number))
                number += 1
                if not continuous or (max_rounds and number >= max_rounds):
                    break
                time.sleep(max(0.0, min_sync_interval - (time.monotonic() - started)))
        finally:
            if self.compactor is not None:
                self.compactor.wait()
        return results
