"""``hudi-py streamer``: HoodieStreamer-like ingestion with Spark.

Each round reads what is new in a source, writes it as one commit (a deltacommit on MERGE_ON_READ)
with :func:`hudi_spark.writer.write`, and records the source checkpoint in the commit's extra
metadata, so a restarted streamer (ours or Hudi's HoodieStreamer) continues where the last completed
commit stopped. Sources: a folder of JSON/CSV/parquet files (files newer than the checkpoint, as
Hudi's ``DFSPathSelector`` picks them), or ``rate`` (N generated rows per round). Compaction is
scheduled on the driver every N deltacommits and run in the background while the next rounds ingest.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.errors import ConfigError

if TYPE_CHECKING:
    from hudi_core.storage import FileInfo, Storage
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "CHECKPOINT_KEY",
    "CHECKPOINT_RESET_KEY",
    "PY_CHECKPOINT_KEY",
    "Checkpoint",
    "FileSource",
    "RateSource",
    "RoundResult",
    "Streamer",
    "last_checkpoint",
]

#: the extra-metadata key HoodieStreamer keeps its source checkpoint under (and resumes from)
CHECKPOINT_KEY = "deltastreamer.checkpoint.key"
#: the ``--checkpoint`` a commit was resumed from (HoodieStreamer's: a run given the same value
#: again resumes from the table's checkpoint, not from it)
CHECKPOINT_RESET_KEY = "deltastreamer.checkpoint.reset_key"
#: our own, exact position in a folder source, ``<mtime_ns>:<path below the folder>``; wins over
#: :data:`CHECKPOINT_KEY` when a commit has both
PY_CHECKPOINT_KEY = "hoodie.py.streamer.checkpoint"
_FORMATS = ("json", "csv", "parquet")
#: names Hudi's DFSPathSelector leaves out, files and folders alike (``_SUCCESS``, ``.crc``...)
_IGNORED_PREFIXES = (".", "_")
_NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class Checkpoint:
    """Where a source stopped. ``hudi`` is the value HoodieStreamer keeps under
    :data:`CHECKPOINT_KEY`; ``exact`` our finer position, where Hudi's value cannot say it."""

    hudi: str
    exact: str | None = None

    def extra_metadata(self) -> dict[str, str]:
        out = {CHECKPOINT_KEY: self.hudi}
        if self.exact is not None:
            out[PY_CHECKPOINT_KEY] = self.exact
        return out


def last_checkpoint(base_uri: str, options: Mapping[str, str] | None = None) -> Checkpoint | None:
    """The checkpoint of the newest completed commit that has one (None for a new table)."""
    from hudi_core import HudiTable

    opts = dict(options or {})  # storage options (an s3:// table's credentials) included
    if not HudiTable.exists(base_uri, options=opts):
        return None
    table = HudiTable.open(base_uri, options=opts)
    for extra in _extra_metadata_newest_first(table):
        if extra.get(CHECKPOINT_KEY):
            return _checkpoint_of(extra)
    return None


def _checkpoint_of(extra: Mapping[str, str]) -> Checkpoint:
    """The checkpoint a commit's extra metadata holds (it has :data:`CHECKPOINT_KEY`)."""
    exact = extra.get(PY_CHECKPOINT_KEY)
    return Checkpoint(str(extra[CHECKPOINT_KEY]), str(exact) if exact else None)


def resume_checkpoint(
    base_uri: str, options: Mapping[str, str] | None = None, given: str | None = None
) -> Checkpoint | None:
    """Where a run starts, as HoodieStreamer decides it: the ``given`` checkpoint (``--checkpoint``)
    unless the newest commit with checkpoint information was resumed from that same value
    (:data:`CHECKPOINT_RESET_KEY`), else the table's checkpoint (:func:`last_checkpoint`)."""
    from hudi_core import HudiTable

    if given is None:
        return last_checkpoint(base_uri, options)
    opts = dict(options or {})
    if HudiTable.exists(base_uri, options=opts):
        for extra in _extra_metadata_newest_first(HudiTable.open(base_uri, options=opts)):
            if extra.get(CHECKPOINT_KEY) or extra.get(CHECKPOINT_RESET_KEY):
                if extra.get(CHECKPOINT_RESET_KEY) == given and extra.get(CHECKPOINT_KEY):
                    return _checkpoint_of(extra)
                break
    return Checkpoint(given)


def _extra_metadata_newest_first(table: Any) -> Iterator[dict[str, str]]:
    """Extra metadata of the completed commits, newest first: the active timeline's, then (only
    when a caller reads that far: every active commit came from another writer) the archived."""
    from hudi_core.archival import archived_instants
    from hudi_core.timeline.commit_metadata import CommitMetadata

    tl = table.timeline
    for inst in reversed(list(tl.completed_commits())):
        yield CommitMetadata.from_json(tl.read_details(inst)).extra_metadata or {}
    for archived in reversed(archived_instants(table)):
        yield (archived.commit_metadata or {}).get("extraMetadata") or {}


@dataclass(frozen=True, order=True)
class _File:
    """A source file; files sort by (modification time, path below the folder)."""

    mtime_ns: int
    rel: str
    path: str = field(compare=False)
    size: int = field(compare=False)


def _resume_after(checkpoint: Checkpoint | None) -> tuple[int, str]:
    """The (mtime_ns, path) position a checkpoint stands at: the files after it are new."""
    if checkpoint is None:
        return (-1, "")
    value = checkpoint.exact or checkpoint.hudi
    if value.removeprefix("-").isdigit():
        # HoodieStreamer's: every file modified in or before this millisecond is done
        return ((int(value) + 1) * _NS_PER_MS, "")
    mtime, _, rel = value.partition(":")  # ours (older commits kept it in CHECKPOINT_KEY)
    if not mtime.isdigit() or not rel:
        raise ConfigError(
            f"the table's last checkpoint {value!r} is not a folder source's (epoch milliseconds, "
            "or <mtime_ns>:<file>); was the table written from another kind of source?"
        )
    return (int(mtime), rel)


@dataclass
class FileSource:
    """New files below a folder, oldest first, as Hudi's ``DFSPathSelector`` selects them: every
    file in the folder and its sub-folders, read as ``fmt`` whatever its name, except names
    starting with ``.`` or ``_`` and empty files. ``path`` is any URI hudi_core's storage serves.

    HoodieStreamer's checkpoint is the newest taken file's modification time in epoch
    milliseconds (one less when a file of that millisecond is left for the next round); ours,
    which wins, is ``<mtime_ns>:<path>`` of the last file taken, so files
    sharing a millisecond and rounds cut by ``max_files`` (non-empty files per round) or
    ``max_bytes`` are neither skipped nor read twice.
    """

    path: str
    fmt: str = "json"
    max_files: int = 0
    schema: str | None = None
    storage_options: Mapping[str, str] = field(default_factory=dict)
    #: HoodieStreamer's ``--source-limit`` for DFS sources: a round stops before the file that
    #: would bring its bytes to this many (0: no limit); it takes one file at least
    max_bytes: int = 0
    _storage: Storage = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        from hudi_core.storage import normalize_uri, storage_for

        if self.fmt not in _FORMATS:
            raise ConfigError(f"source format {self.fmt!r} is not one of {', '.join(_FORMATS)}")
        self.path = normalize_uri(self.path)
        self._storage = storage_for(self.path, self.storage_options)
        if not self._storage.is_dir(self.path):
            raise ConfigError(f"source folder {self.path!r} does not exist")

    def _files(self) -> Iterator[_File]:
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            for info in self._storage.list(self._storage.join(self.path, rel_dir)):
                if info.name.startswith(_IGNORED_PREFIXES):
                    continue
                rel = f"{rel_dir}/{info.name}" if rel_dir else info.name
                if info.is_dir:
                    stack.append(rel)
                elif (mtime_ns := _mtime_ns(self._storage, info)) is not None:
                    yield _File(mtime_ns, rel, info.path, info.size)

    def next_batch(
        self, spark: SparkSession, checkpoint: Checkpoint | None
    ) -> tuple[DataFrame | None, Checkpoint | None]:
        after = _resume_after(checkpoint)
        new = sorted(f for f in self._files() if (f.mtime_ns, f.rel) > after)
        taken: list[_File] = []
        passed = 0  # new[:passed] are behind the new checkpoint: the taken files and empty ones
        size = 0
        for i, f in enumerate(new):
            if f.size > 0:
                if self.max_files and len(taken) == self.max_files:
                    break
                if self.max_bytes and taken and size + f.size >= self.max_bytes:
                    break
                taken.append(f)
                size += f.size
            passed = i + 1
        if not taken:  # nothing but empty files: no commit, so the checkpoint stays
            return None, checkpoint
        last = new[passed - 1]
        ms = last.mtime_ns // _NS_PER_MS
        if passed < len(new) and new[passed].mtime_ns // _NS_PER_MS == ms:
            ms -= 1  # a file of that millisecond is left: HoodieStreamer must not skip it
        reader = spark.read
        if self.schema:
            reader = reader.schema(self.schema)
        if self.fmt == "csv":
            reader = reader.option("header", "true").option("inferSchema", "true")
        df = reader.format(self.fmt).load([f.path for f in taken])  # (``reader.parquet`` takes no list)
        return df, Checkpoint(str(ms), f"{last.mtime_ns}:{last.rel}")


def _mtime_ns(storage: Storage, info: FileInfo) -> int | None:
    """A file's modification time in ns; None when it went away meanwhile."""
    from hudi_core.storage import LocalStorage

    if isinstance(storage, LocalStorage):
        # the listing's float seconds can round across a millisecond; the stat has it exactly
        try:
            return os.stat(storage.arrow_path(info.path)).st_mtime_ns
        except FileNotFoundError:
            return None
    # other stores keep milliseconds (Hadoop) or seconds (object stores)
    return round((info.mtime or 0.0) * 1000) * _NS_PER_MS


@dataclass
class RateSource:
    """``rows_per_round`` generated rows per round: ``value`` (the offset), ``ts``, ``key``."""

    rows_per_round: int = 1000
    keys: int = 0  # > 0: keys repeat modulo this many, so later rounds update earlier rows

    def next_batch(self, spark: SparkSession, checkpoint: Checkpoint | None) -> tuple[DataFrame, Checkpoint]:
        from pyspark.sql import functions as F

        start = int(checkpoint.hudi) if checkpoint else 0
        end = start + self.rows_per_round
        df = spark.range(start, end).withColumnRenamed("id", "value")
        key = F.col("value") % self.keys if self.keys else F.col("value")
        df = df.select(
            key.cast("string").alias("key"),
            F.col("value"),
            F.col("value").alias("ts"),
            (F.col("value") % 4).cast("string").alias("part"),
        )
        return df, Checkpoint(str(end))


@dataclass
class RoundResult:
    round: int
    instant: str | None
    rows: int
    checkpoint: str | None  # HoodieStreamer's checkpoint after the round
    compaction_scheduled: str | None = None
    clustering_scheduled: str | None = None


@dataclass
class Streamer:
    """Runs rounds: source -> :func:`hudi_spark.writer.write` -> commit with checkpoint."""

    spark: SparkSession
    base_uri: str
    source: Any
    options: Mapping[str, str] = field(default_factory=dict)
    operation: str = "upsert"
    compactor: Any = None  # hudi_spark.services.AsyncCompactor, for MERGE_ON_READ tables
    clusterer: Any = None  # hudi_spark.services.AsyncClusterer (hoodie.clustering.async.enabled)
    on_round: Callable[[RoundResult], None] | None = None
    transform: Callable[[DataFrame], DataFrame] | None = None  # hudi_spark.transformers (--transformer-class)
    checkpoint: str | None = None  # HoodieStreamer's --checkpoint: resume from it once
    #: where the source stands past files that held no rows: nothing was committed for them, so
    #: the next round starts here rather than at the table's checkpoint (a restart reads them
    #: again, and again finds nothing)
    _passed: Checkpoint | None = field(default=None, init=False, repr=False)

    def run_round(self, number: int = 0) -> RoundResult:
        from hudi_spark.writer import write_commit

        checkpoint = self._passed or resume_checkpoint(self.base_uri, self.options, self.checkpoint)
        df, new_checkpoint = self.source.next_batch(self.spark, checkpoint)
        if df is not None and not df.columns:  # files with no rows (blank lines, a bare header)
            df, self._passed = None, new_checkpoint
        if df is not None and self.transform is not None:
            df = self.transform(df)
        if df is None:
            result = RoundResult(number, None, 0, checkpoint.hudi if checkpoint else None)
        else:
            extra = new_checkpoint.extra_metadata()
            if self.checkpoint is not None:
                extra[CHECKPOINT_RESET_KEY] = self.checkpoint
            res = write_commit(df, self.base_uri, operation=self.operation, options=self.options,
                               extra_metadata=extra, batch=False)  # fmt: skip
            result = RoundResult(number, res.instant, res.num_records, new_checkpoint.hudi)
            self._passed = None if res.instant else new_checkpoint  # (no commit holds it)
        if self.compactor is not None and result.instant is not None:
            result.compaction_scheduled = self.compactor.maybe_schedule()
        if self.clusterer is not None and result.instant is not None:
            result.clustering_scheduled = self.clusterer.maybe_schedule()
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
            for service in (self.compactor, self.clusterer):
                if service is not None:
                    service.wait()
        return results
