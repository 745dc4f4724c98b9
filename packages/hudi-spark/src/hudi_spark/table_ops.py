"""The table around a Spark write: created from Hudi Spark's options on the first write (and
forgotten again when that write fails), delete_partition, and Hudi's services after a commit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pyarrow as pa
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError

from hudi_spark import compat

if TYPE_CHECKING:
    from hudi_core import HudiTable
    from hudi_core.timeline.timeline import ActiveTimeline
    from pyspark.sql import DataFrame

    from hudi_spark.commit import SparkWriteResult

__all__ = [
    "delete_partitions",
    "forget_new_table",
    "open_or_create",
    "required_columns",
    "run_table_services",
]


def _opt(options: Mapping[str, str], *keys: str) -> str | None:
    for k in keys:
        if options.get(k):
            return str(options[k])
    return None


def open_or_create(base_uri: str, options: Mapping[str, str], schema: pa.Schema) -> tuple[HudiTable, bool]:
    """Open the table, or create it from Hudi Spark's write options on the first write; the
    flag says it was created (a failed first write then forgets it, :func:`forget_new_table`)."""
    from hudi_core import HudiTable
    from hudi_core.config.resolution import resolve_table_options

    if HudiTable.exists(base_uri, options=options):
        return HudiTable.open(base_uri, options=options), False
    name = _opt(options, "hoodie.table.name", WriteOptions.TABLE_NAME.key)
    keys = _opt(options, WriteOptions.RECORDKEY_FIELD.key, "hoodie.table.recordkey.fields")
    if not name:  # (without record key fields the table's writes make the keys up, as Hudi's do)
        raise ConfigError(f"no Hudi table at {base_uri!r}: to create it pass hoodie.table.name")
    parts = _opt(options, WriteOptions.PARTITIONPATH_FIELD.key, "hoodie.table.partition.fields")
    if not _opt(
        options,
        WriteOptions.KEYGEN_CLASS.key,
        "hoodie.table.keygenerator.class",
        WriteOptions.KEYGEN_TYPE.key,
    ):
        # Hudi's Spark datasource infers the key generator from the field counts alone (Simple,
        # Complex or Nonpartitioned); a date or timestamp partition field gets the Simple one
        # too, not Flink's TimestampBased (core's inference when given the schema)
        inferred = resolve_table_options(record_key_fields=keys, partition_fields=parts, ordering_field=None,
                                         options=options)  # fmt: skip
        options = {**options, WriteOptions.KEYGEN_CLASS.key: str(inferred.get_str(WriteOptions.KEYGEN_CLASS))}
    created = HudiTable.create(
        base_uri, name=name,
        table_type=_opt(options, WriteOptions.TABLE_TYPE.key, "hoodie.table.type") or "COPY_ON_WRITE",
        record_key_fields=keys, partition_fields=parts,
        ordering_field=_opt(options, WriteOptions.PRECOMBINE_FIELD.key, "hoodie.table.precombine.field"),
        options=options, schema=schema,
    )  # fmt: skip
    return created, True


def required_columns(table: HudiTable, cfg: HoodieConfig, op: str) -> list[str]:
    """The input columns a write needs: record key and partition fields, and the ordering
    field unless the write deletes (as core's write client requires them)."""
    from hudi_core.write.dedupe import ordering_field

    required = [
        *table.config.record_key_fields,
        *(table.config.partition_fields if table.config.is_partitioned else []),
    ]
    order = ordering_field(cfg)
    if order and op != "delete" and table.config.ordering_field:
        required.append(order)
    return required


def forget_new_table(base_uri: str, options: Mapping[str, str]) -> None:
    """Undo the creation of a table whose first write failed: with no commit (and no other
    writer's instant) on its timeline, its ``.hoodie`` folder goes, so a corrected retry starts
    from the options it gives rather than the rejected ones."""
    from hudi_core import HudiTable
    from hudi_core.table import META_FOLDER

    try:
        table = HudiTable.open(base_uri, options=options)
        timeline = table.timeline
        writes = [i for i in timeline if i.action not in ("rollback", "clean")]
        if timeline.completed_commits() or writes:
            return
        table.storage.delete_dir(f"{table.base_uri.rstrip('/')}/{META_FOLDER}")
    except Exception:  # the write's own error is the one to report
        pass


def run_table_services(
    base_uri: str, options: Mapping[str, str], *, action: str, timeline: ActiveTimeline | None = None
) -> None:
    """Hudi's post-commit services after a Spark write: inline compaction after a deltacommit
    (``hoodie.compact.inline``; the compaction runs as a Spark job), then the automatic clean,
    then archival. ``timeline``: the load the commit was made on (core's
    ``run_post_commit_services``)."""
    from hudi_core import HudiTable
    from hudi_core.client.services import run_post_commit_services

    table = HudiTable.open(base_uri, options=options)
    run_post_commit_services(
        table, {**options, "hoodie.engine": "spark"}, delta_commit=action == "deltacommit", timeline=timeline
    )


def delete_partitions(df: DataFrame, table: HudiTable, cfg: HoodieConfig) -> SparkWriteResult:
    """delete_partition: the partitions of ``hoodie.datasource.write.partitions.to.delete``
    (comma-separated paths; ``*`` and ``?`` match within the table's partitions), else those
    of the rows of ``df`` (their partition columns through the table's key generator)."""
    import fnmatch

    from hudi_core.client.write_client import WriteClient
    from hudi_core.fs_view import FileSystemView
    from hudi_core.keygen import key_generator_for

    from hudi_spark.commit import SparkWriteResult

    given = [p.strip() for p in str(cfg.raw(WriteOptions.PARTITIONS_TO_DELETE) or "").split(",") if p.strip()]
    if given:
        existing = FileSystemView(table).partitions()
        partitions = sorted({e for p in given for e in existing if fnmatch.fnmatchcase(e, p)} | {
            p for p in given if not any(c in p for c in "*?[")
        })  # fmt: skip
    else:
        if not table.config.is_partitioned:
            raise ConfigError(f"delete_partition on the non-partitioned table {table.base_uri}")
        columns = list(dict.fromkeys(f.split(".")[0] for f in table.config.partition_fields))
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise ConfigError(
                f"delete_partition needs {WriteOptions.PARTITIONS_TO_DELETE.key} or the partition column(s) {missing} in the input"
            )
        values = compat.to_arrow(df.select(*columns).distinct())
        partitions = sorted(set(key_generator_for(cfg).partition_paths(values).to_pylist()))
    if not partitions:
        return SparkWriteResult(None, "delete_partition")
    result = WriteClient(table, cfg.to_dict()).delete_partitions(partitions)
    return SparkWriteResult(result.instant, "delete_partition")
