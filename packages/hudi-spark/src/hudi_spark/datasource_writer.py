"""``df.write.format("hudi")``: bulk_insert and insert through the Data Source API.

``writer()`` runs on the driver side: it opens (or creates) the table and starts the instant.
Each task writes its rows as new file groups (one per partition path) with core's create
handle; ``commit`` completes the instant with every task's statuses, ``abort`` rolls it back.
Operations that need an index lookup or a shuffle (upsert, delete, ...) go through
:func:`hudi_spark.write`, which runs the whole pipeline.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from hudi_core.errors import ConfigError
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

__all__ = ["HudiArrowWriter"]

_SUPPORTED = ("bulk_insert", "insert")


@dataclass
class _Written(WriterCommitMessage):
    statuses: bytes


class HudiArrowWriter(DataSourceArrowWriter):
    def __init__(self, options: dict[str, str], schema: Any, overwrite: bool) -> None:
        from hudi_core.write.records import evolve_schema
        from pyspark.sql.pandas.types import to_arrow_schema

        from hudi_spark.commit import SparkCommit
        from hudi_spark.writer import _write_context, open_or_create

        opts = {k: v for k, v in options.items() if k.lower() != "path"}
        base = options.get("path")
        op = str(opts.get("hoodie.datasource.write.operation", "bulk_insert")).lower()
        if op not in _SUPPORTED or overwrite:
            what = "mode('overwrite')" if overwrite else f"operation {op!r}"
            raise ConfigError(
                f'df.write.format("hudi") supports bulk_insert and insert in append mode, not {what}; '
                "use hudi_spark.write(df, base_uri, operation=..., options=...) for upsert, delete and overwrites"
            )
        if not base:
            raise ConfigError('df.write.format("hudi") needs a path: .save("<base path>")')
        arrow = to_arrow_schema(schema, timezone="UTC")
        table = open_or_create(base, opts, arrow)
        cfg = table.write_config(opts)
        commit_schema = evolve_schema(table.schema(), arrow, required=table.config.record_key_fields)
        job = SparkCommit(table, cfg, op, commit_schema, {})
        job.start()
        from hudi_core.write.bucket_assigner import WorkloadProfile

        job.inflight(WorkloadProfile())
        self.base, self.options, self.op = base, opts, op
        self.instant, self.action = job.instant, job.requested.action  # type: ignore[union-attr]
        self.schema_ = commit_schema
        self.ctx = _write_context(table, cfg, job.instant, commit_schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        import pyarrow.compute as pc
        from hudi_core.config.property import HoodieConfig
        from hudi_core.keygen import key_generator_for
        from hudi_core.table.file_names import new_file_id
        from hudi_core.write.bucket_assigner import CREATE, BucketInfo
        from hudi_core.write.handles import write_bucket
        from hudi_core.write.records import PARTITION_PATH, conform_to_schema, prepare

        from hudi_spark.stages import table_of, task_info

        data = table_of(iterator)
        statuses: list[Any] = []
        if data is not None:
            conf = HoodieConfig(self.ctx.options)
            records = conform_to_schema(prepare(data, key_generator_for(conf), conf), self.schema_)
            attempt = task_info().attempt
            for part in pc.unique(records.column(PARTITION_PATH)).to_pylist():
                rows = records.filter(pc.equal(records.column(PARTITION_PATH), part))
                bucket = BucketInfo(0, part, new_file_id(), None, CREATE)
                statuses.extend(write_bucket(self.ctx, bucket, rows, attempt=attempt))
        return _Written(pickle.dumps(statuses))

    def _job(self) -> Any:
        from hudi_core.config.property import HoodieConfig
        from hudi_core.table import HudiTable
        from hudi_core.timeline.instant import Instant, State

        from hudi_spark.commit import SparkCommit

        table = HudiTable.open(self.base, options=self.options)
        job = SparkCommit(table, HoodieConfig(self.options), self.op, self.schema_, {})
        job.requested = Instant(self.instant, self.action, State.REQUESTED)
        return job

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        statuses = [s for m in messages if isinstance(m, _Written) for s in pickle.loads(m.statuses)]
        self._job().commit(statuses)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self._job().abort()
