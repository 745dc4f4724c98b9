"""Stage 6 and the commit protocol around it (spec 13): publish the workload profile, complete
the commit with write stats, clean up markers. Instants start (and commits are checked against
other writers) in :mod:`hudi_core.write.transaction`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from hudi_core.config.table import TableOptions
from hudi_core.errors import SchemaMismatchError
from hudi_core.schema.avro_schema import META_FIELDS, OPERATION_FIELD
from hudi_core.schema.internal import LATEST_SCHEMA
from hudi_core.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_core.timeline.instant import Action, Instant, State
from hudi_core.write.bucket_assigner import WorkloadProfile
from hudi_core.write.handles.context import WriteStatus
from hudi_core.write.markers import MarkerFiles, reconcile_against_markers

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "OPERATION_TYPES",
    "action_for",
    "carry_internal_schema",
    "check_schema_on_read",
    "commit",
    "remove_stale_metadata_table",
    "write_inflight",
]

#: operation name -> Java WriteOperationType
OPERATION_TYPES = {
    "insert": "INSERT",
    "upsert": "UPSERT",
    "bulk_insert": "BULK_INSERT",
    "delete": "DELETE",
    "insert_overwrite": "INSERT_OVERWRITE",
    "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
    "delete_partition": "DELETE_PARTITION",
}
REPLACE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")


def action_for(table: MetaClient, operation: str) -> str:
    if operation in REPLACE_OPERATIONS:
        return Action.REPLACE_COMMIT
    return Action.DELTA_COMMIT if table.config.is_mor else Action.COMMIT


def remove_stale_metadata_table(table: MetaClient) -> None:
    """This writer does not maintain the metadata table: drop it so Java readers list files
    (spec 1.2)."""
    mdt = f"{table.meta_path}/metadata"
    keys = (TableOptions.METADATA_PARTITIONS.key, TableOptions.METADATA_PARTITIONS_INFLIGHT.key)
    if table.storage.is_dir(mdt):  # (a folder: on S3 one listing, where exists() costs two requests)
        table.storage.delete_dir(mdt)
    if any(k in table.config for k in keys):
        table.config = table.config.update(table.storage, {k: None for k in keys})


def workload_metadata(profile: WorkloadProfile, operation: str) -> CommitMetadata:
    """The inflight "workload profile" JSON (spec 3.4)."""
    meta = CommitMetadata(operation_type=OPERATION_TYPES[operation])
    parts = set(profile.inserts) | {p for p, _, _ in profile.updates}
    for part in sorted(parts):
        stats = meta.partition_to_write_stats.setdefault(part, [])
        stats.append(
            WriteStat(file_id="", path=None, partition_path=None, num_inserts=profile.inserts.get(part, 0))
        )
        for (p, fid, base), (upd, _dels) in sorted(profile.updates.items()):
            if p == part:
                stats.append(WriteStat(file_id=fid, path=None, partition_path=None, prev_commit=base,
                                       num_update_writes=upd))  # fmt: skip
    return meta


def carry_internal_schema(table: MetaClient, meta: CommitMetadata, timeline: Any) -> None:
    """Put the table's internal schema (Hudi's schema on read, :mod:`hudi_core.schema.internal`)
    into ``meta``'s extra metadata, where the table has one: every commit of Hudi's writers,
    compactions and clusterings carries it on, and Hudi's reads and ``ALTER TABLE`` need it."""
    internal = table.internal_schema(timeline=timeline)
    if internal:
        meta.extra_metadata[LATEST_SCHEMA] = internal


def check_schema_on_read(table: MetaClient, table_schema: pa.Schema | None, schema: pa.Schema | None) -> None:
    """A write to a table whose schema Hudi's schema on read keeps (an internal schema, with ids)
    must not change that schema: our commits carry the table's internal schema on as Hudi's do,
    and a column it does not know would stay invisible to Hudi. SchemaMismatchError before the
    write starts, naming the change."""
    if table_schema is None or schema is None:
        return
    meta = {*META_FIELDS, OPERATION_FIELD}  # (Hudi's ALTER TABLE commits store them in the schema)
    before = {f.name: f.type for f in table_schema if f.name not in meta}
    after = {f.name: f.type for f in schema if f.name not in meta}
    if before == after or not table.internal_schema():
        return
    changed = sorted(n for n in after if before.get(n) != after[n]) + sorted(
        f"-{n}" for n in before if n not in after
    )
    raise SchemaMismatchError(
        f"the table at {table.base_uri} keeps its schema through Hudi's schema on read "
        f"(hoodie.schema.on.read.enable) and this write changes it ({', '.join(changed)}): change the "
        "table's schema with ALTER TABLE in Spark first, then write"
    )


def write_inflight(
    table: MetaClient, requested: Instant, profile: WorkloadProfile, operation: str
) -> Instant:
    meta = workload_metadata(profile, operation)
    return table.timeline.transition_to_inflight(requested, meta.to_bytes())


def commit(
    table: MetaClient,
    instant: Instant,
    statuses: Iterable[WriteStatus],
    *,
    operation: str,
    schema: Mapping[str, Any],
    replaced: Mapping[str, Sequence[str]] | None = None,
    extra_metadata: Mapping[str, str] | None = None,
    reconcile: bool = True,
) -> CommitMetadata:
    """Complete ``instant`` with the write stats of ``statuses``; delete its markers.
    ``extra_metadata`` is added to the commit's extra metadata (e.g. a streaming checkpoint).
    ``reconcile`` first deletes files of failed task attempts (``reconcile_against_markers``);
    pass False when the engine already did."""
    statuses = list(statuses)
    if reconcile:
        reconcile_against_markers(table, instant.timestamp, statuses)
    meta = CommitMetadata(operation_type=OPERATION_TYPES[operation])
    # log appends first: where a streamed write wrote a file group's base file and then logs on
    # it, Apache Hudi's CDC query takes the slice a log file changed from the group's first
    # write stat (HoodieCommitMetadata.getFileSliceForFileGroupFromDeltaCommit), and only a log
    # append's stat names one (baseFile, logFiles): a base file's failed it
    for s in sorted(statuses, key=lambda s: s.stat.log_version is None):
        meta.add_write_stat(s.stat)
    meta.extra_metadata["schema"] = json.dumps(schema, separators=(",", ":"))
    tl = table.timeline
    carry_internal_schema(table, meta, tl)  # (the write kept the table's schema: check_schema_on_read)
    meta.extra_metadata.update(extra_metadata or {})
    if instant.action == Action.REPLACE_COMMIT:
        meta.partition_to_replace_file_ids = {p: list(ids) for p, ids in (replaced or {}).items()}
    tl.complete(instant.with_state(State.INFLIGHT), meta.to_bytes())
    MarkerFiles(table.storage, table.meta_path, instant.timestamp).delete_all()
    return meta
