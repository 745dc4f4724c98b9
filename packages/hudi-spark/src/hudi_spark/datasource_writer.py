"""``df.write.format("hudi")``: bulk_insert, insert and the overwrites through the Data Source API.

``writer()`` runs on the driver side: it opens (or creates) the table and starts the instant.
Each task writes its rows as new file groups (one per partition path) with core's create
handle; ``commit`` completes the instant with every task's statuses (an overwrite also replaces
the file groups of the partitions written, or of all), ``abort`` rolls it back.
``mode("overwrite")`` is Hudi's: an existing table is deleted and written anew. Operations that
need an index lookup or a shuffle (upsert, delete, ...) are refused in one line showing the
:func:`hudi_spark.write` call, with the same options, that runs the whole pipeline.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from hudi_core.errors import ConfigError
from hudi_core.keygen.auto import default_operation
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from hudi_spark.compat import arrow_schema

__all__ = ["HudiArrowWriter", "refusal"]

_SUPPORTED = ("bulk_insert", "insert", "insert_overwrite", "insert_overwrite_table")
_OVERWRITES = ("insert_overwrite", "insert_overwrite_table")


def refusal(what: str, base: str, op: str, options: dict[str, str]) -> str:
    """One line: what the data-source writer cannot do, and the ``hudi_spark.write`` call that
    does it with the same options."""
    call = f"hudi_spark.write(df, {base!r}, operation={op!r}, options={options!r})"
    return (
        f'df.write.format("hudi") through the Python data source cannot write {what} (its tasks cannot '
        f"shuffle rows together); run {call}: in a driver that imported hudi_spark, "
        'df.write.format("hudi") runs it (hoodie.spark.write.format.pipeline, on by default)'
    )


@dataclass
class _Written(WriterCommitMessage):
    statuses: bytes


class HudiArrowWriter(DataSourceArrowWriter):
    def __init__(self, options: dict[str, str], schema: Any, overwrite: bool) -> None:
        from hudi_spark.table_ops import forget_new_table, open_or_create

        opts = {k: v for k, v in options.items() if k.lower() != "path"}
        base = options.get("path")
        if not base:
            raise ConfigError('df.write.format("hudi") needs a path: .save("<base path>")')
        given = opts.get("hoodie.datasource.write.operation")
        op = str(given or "upsert").lower()  # Hudi's default
        if overwrite and op in ("delete", "delete_partition"):
            raise ConfigError(f"mode('append') is the only save mode for operation {op!r}, as in Hudi")
        if not given:  # bulk_insert where the table makes up its keys, as Hudi chooses
            op = default_operation(op, given, _write_config(base, opts), arrow_schema(schema).names)
        if op not in _SUPPORTED:
            default = "" if given else " (Hudi's default)"
            raise ConfigError(refusal(f"operation {op!r}{default}", base, op, opts))
        if overwrite and op != "insert_overwrite_table":
            # Hudi's SaveMode.Overwrite: the existing table is deleted and the write creates it
            # anew (insert_overwrite_table replaces every file group instead, keeping the timeline)
            from hudi_core import HudiTable

            if HudiTable.exists(base, options=opts):
                HudiTable.open(base, options=opts).storage.delete_dir(base)
        arrow = arrow_schema(schema)
        table, created = open_or_create(base, opts, arrow)
        try:
            self._start(table, base, opts, op, arrow)
        except BaseException:
            if created:
                forget_new_table(base, opts)
            raise
        self.created = created

    def _start(self, table: Any, base: str, opts: dict[str, str], op: str, arrow: pa.Schema) -> None:
        """Check the write against the table (as ``hudi_spark.write`` does), then start the instant."""
        from hudi_core.client.write_client import check_option_conflicts, check_write_options
        from hudi_core.config.write import IndexOptions, WriteOptions
        from hudi_core.write.bucket_assigner import WorkloadProfile
        from hudi_core.write.commit import check_schema_on_read
        from hudi_core.write.key_encoding import with_table_key_encoding
        from hudi_core.write.records import evolve_schema

        from hudi_spark.commit import SparkCommit
        from hudi_spark.table_ops import required_columns
        from hudi_spark.writer import _write_context

        check_option_conflicts(table, opts)
        cfg = with_table_key_encoding(table, table.write_config(opts))
        check_write_options(cfg)
        # each task writes the rows it is given, with no shuffle: anything that must bring rows
        # together (a bucket's file group, a key's duplicates, a small file's new inserts) cannot
        # be done here
        need = None
        if str(cfg.get_str(IndexOptions.TYPE)).upper() == "BUCKET":
            need = "the BUCKET index (each bucket is one file group, written by one task)"
        elif cfg.get(WriteOptions.COMBINE_BEFORE_INSERT):
            need = "hoodie.combine.before.insert (duplicates of a key meet in one task)"
        elif cfg.get(WriteOptions.INSERT_DROP_DUPLICATES):
            need = "hoodie.datasource.write.insert.drop.duplicates (a key's duplicates meet in one task)"
        elif (
            op == "insert"
            and table.timeline.completed_commits()
            and int(cfg.get(WriteOptions.PARQUET_SMALL_FILE_LIMIT)) > 0
        ):
            need = "an insert into a table with data (new records go to its small files first; "
            need += "hoodie.parquet.small.file.limit=0 turns that off, or use bulk_insert)"
        if need:
            raise ConfigError(refusal(need, base, op, opts))
        required = required_columns(table, cfg, op)
        table_schema = table.schema()
        commit_schema = evolve_schema(
            table_schema, arrow, required=required, config=cfg, table_config=table.config
        )
        check_schema_on_read(table, table_schema, commit_schema)
        job = SparkCommit(table, cfg, op, commit_schema, {})
        # single writer: the lease is taken here and kept (renewed by this driver-side worker)
        # until the commit or abort, which run in another worker and adopt it
        self.lease_path = None
        lease = _take_lease(table, cfg)
        try:
            job.start()
            job.inflight(WorkloadProfile())
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        self.lease_path = lease.mine.path if lease is not None and lease.mine is not None else None
        self.started = job.txn.started
        self.base, self.options, self.op = base, opts, op
        self.instant, self.action = job.instant, job.action
        self.schema_ = commit_schema
        self.ctx = _write_context(table, cfg, job.instant, commit_schema, op)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        import pyarrow.compute as pc
        from hudi_core.config.keygen import KeyGenOptions
        from hudi_core.config.property import HoodieConfig
        from hudi_core.keygen import write_key_generator
        from hudi_core.table.file_names import new_file_id
        from hudi_core.write.bucket_assigner import CREATE, BucketInfo
        from hudi_core.write.handles import write_bucket
        from hudi_core.write.records import PARTITION_PATH, conform_to_schema, prepare

        from hudi_spark.stages import table_of, task_info

        data = table_of(iterator)
        statuses: list[Any] = []
        if data is not None:
            conf = HoodieConfig({**self.ctx.options, KeyGenOptions.AUTO_KEY_INSTANT.key: self.instant})
            keygen = write_key_generator(conf, task=task_info().partition_id)
            records = conform_to_schema(prepare(data, keygen, conf, operation=self.op), self.schema_)
            attempt = task_info().attempt
            for part in pc.unique(records.column(PARTITION_PATH)).to_pylist():
                rows = records.filter(pc.equal(records.column(PARTITION_PATH), part))
                bucket = BucketInfo(0, part, new_file_id(), None, CREATE)
                statuses.extend(write_bucket(self.ctx, bucket, rows, attempt=attempt))
        return _Written(pickle.dumps(statuses))

    def _job(self) -> Any:
        from hudi_core import HudiTable
        from hudi_core.config.property import HoodieConfig
        from hudi_core.timeline.instant import Instant, State

        from hudi_spark.commit import SparkCommit

        table = HudiTable.open(self.base, options=self.options)
        job = SparkCommit(table, HoodieConfig(self.options), self.op, self.schema_, {})
        job.resume(Instant(self.instant, self.action, State.REQUESTED), self.started)
        return job

    def _replaced(self, job: Any, statuses: list[Any]) -> dict[str, list[str]]:
        """insert_overwrite: the file groups of the partitions written (of every partition for
        insert_overwrite_table) as of the last completed commit, replaced by this commit."""
        from hudi_core.client.write_client import file_groups_of
        from hudi_core.fs_view import FileSystemView

        if self.op not in _OVERWRITES or not job.table.timeline.completed_commits():
            return {}
        view = FileSystemView(job.table)
        if self.op == "insert_overwrite_table":
            parts = view.partitions()
        else:
            parts = sorted({s.stat.partition_path or "" for s in statuses})
        return file_groups_of(view, parts)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        from hudi_core.write.transaction import writer_guard

        from hudi_spark.table_ops import run_table_services

        statuses = [s for m in messages if isinstance(m, _Written) for s in pickle.loads(m.statuses)]
        job = self._job()
        with writer_guard(job.table, job.cfg, adopt=self.lease_path):
            job.replaced = self._replaced(job, statuses)
            job.commit(statuses)
            run_table_services(self.base, self.options, action=self.action, timeline=job.txn.committed)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        from hudi_core.write.transaction import writer_guard

        from hudi_spark.table_ops import forget_new_table

        job = self._job()
        with writer_guard(job.table, job.cfg, adopt=self.lease_path):
            job.abort()
        if self.created:
            forget_new_table(self.base, self.options)


def _write_config(base: str, options: dict[str, str]) -> Any:
    """The write's config: the table's properties under ``options``, or ``options`` alone."""
    from hudi_core import HudiTable
    from hudi_core.config.property import HoodieConfig

    if HudiTable.exists(base, options=options):
        return HudiTable.open(base, options=options).write_config(options)
    return HoodieConfig(options)


def _take_lease(table: Any, cfg: Any) -> Any:
    """Single-writer mode: the table's lease, taken (and renewed by this process) until a
    commit or abort adopts and releases it; None under optimistic concurrency control."""
    from hudi_core.config.concurrency import ConcurrencySettings
    from hudi_core.lock.lease import WriterLease

    s = ConcurrencySettings.of(cfg)
    if s.occ:
        return None
    lease = WriterLease(
        table.storage, table.meta_path, interval_s=s.heartbeat_interval_s, expiry_s=s.expiry_s
    )
    lease.acquire()
    return lease
