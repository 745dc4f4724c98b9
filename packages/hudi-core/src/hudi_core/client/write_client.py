"""``WriteClient``: runs the six write stages (docs/architecture.md, "Writing") with an engine.

Everything that can reject the input (keys, schema, options) runs before the instant is
created, so a rejected write leaves the table untouched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.client.services import run_post_commit_services
from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.config.write import IndexOptions, WriteOptions
from hudi_core.errors import ConfigError, SchemaMismatchError, WriteConflictError
from hudi_core.io.bootstrap_index import bootstrap_sources
from hudi_core.keygen import AutoRecordKeys, write_key_generator
from hudi_core.keygen.auto import check_auto_key_options, stamp_instant
from hudi_core.schema.avro_schema import arrow_to_avro
from hudi_core.timeline.instant import Action
from hudi_core.write.bucket_assigner import (
    BucketInfo,
    SmallFile,
    WorkloadProfile,
    assign,
    assign_buckets,
    average_record_size,
    partition_codes,
    profile_of,
    recent_record_sizes,
)
from hudi_core.write.clustering import clustered_file_groups, reject_clustered_updates
from hudi_core.write.commit import OPERATION_TYPES, check_schema_on_read, write_inflight
from hudi_core.write.dedupe import check_ordering_values, combines, deduplicate, ordering_field
from hudi_core.write.handles import WriteContext, WriteStatus, write_bucket, write_in_input_order
from hudi_core.write.handles.context import as_attempt
from hudi_core.write.index import (
    BUCKET_NUM,
    BucketIndex,
    checked_index_type,
    drop_stored_keys,
    index_for,
    tag_locations,
)
from hudi_core.write.key_encoding import with_table_key_encoding
from hudi_core.write.payload import payload_for
from hudi_core.write.records import (
    BASE_INSTANT,
    BUCKET,
    FILE_ID,
    LOCATION_PARTITION,
    PARTITION_PATH,
    RECORD_KEY,
    KeyGen,
    conform_to_schema,
    evolve_schema,
    prepare,
    stored_schema,
)
from hudi_core.write.stream import StreamWriter, chunk_max_bytes, chunks
from hudi_core.write.transaction import WriteTransaction, check_concurrency_options, retrying, writing

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView
    from hudi_core.table.meta_client import MetaClient

__all__ = ["WriteClient", "WriteResult", "file_groups_of", "small_files"]


@dataclass
class WriteResult:
    instant: str
    operation: str
    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    files_written: int = 0
    replaced_file_groups: int = 0
    statuses: list[WriteStatus] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"instant": self.instant, "operation": self.operation, "inserted": self.inserted,
                "updated": self.updated, "deleted": self.deleted, "files_written": self.files_written,
                "replaced_file_groups": self.replaced_file_groups}  # fmt: skip


# option given for a write -> the table property it must agree with
_CONFLICTS = (
    (WriteOptions.RECORDKEY_FIELD, TableOptions.RECORDKEY_FIELDS),
    (WriteOptions.PARTITIONPATH_FIELD, TableOptions.PARTITION_FIELDS),
    (WriteOptions.PRECOMBINE_FIELD, TableOptions.PRECOMBINE_FIELD),
    (WriteOptions.TABLE_TYPE, TableOptions.TYPE),
    (WriteOptions.KEYGEN_CLASS, TableOptions.KEYGEN_CLASS),
)


def check_option_conflicts(table: MetaClient, options: Mapping[str, Any]) -> None:
    """A write option that contradicts the table's config is an error (not silently ignored)."""
    table.config.check_writable()
    given = HoodieConfig(options)
    for opt in (TableOptions.NAME, WriteOptions.TABLE_NAME):
        name = given.raw(opt)
        if name is not None and str(name).strip() != table.config.name:
            raise ConfigError(
                f"{opt.key}={name!r}: a Hudi table named {table.config.name!r} already exists at "
                f"{table.base_uri}; write to it under its name, or choose another path"
            )
    for opt, prop in _CONFLICTS:
        value = given.raw(opt)
        if value is None:
            continue
        current = table.config.get_str(prop)
        if prop is TableOptions.PARTITION_FIELDS:
            value = ",".join(p.split(":", 1)[0] for p in value.split(","))
        if prop is TableOptions.TYPE:
            value = {"COW": "COPY_ON_WRITE", "MOR": "MERGE_ON_READ"}.get(value.upper(), value.upper())
        if prop is TableOptions.KEYGEN_CLASS:
            from hudi_core.config.resolution import keygen_class_name

            value = keygen_class_name(value)
        norm = lambda s: ",".join(p.strip() for p in str(s or "").split(",") if p.strip())  # noqa: E731
        if norm(value) != norm(current):
            raise ConfigError(
                f"{opt.key}={value!r} conflicts with the table's {prop.key}={current!r} in "
                f"{table.base_uri}/.hoodie/hoodie.properties; drop the option or use the table's value"
            )
    drop = given.raw(TableOptions.DROP_PARTITION_COLUMNS)
    if drop is not None and str(drop).strip().lower() != str(table.config.drops_partition_columns).lower():
        raise ConfigError(
            f"{TableOptions.DROP_PARTITION_COLUMNS.key}={drop!r} conflicts with the table's, "
            f"{str(table.config.drops_partition_columns).lower()}, in {table.base_uri}/.hoodie/hoodie.properties: "
            "it is chosen when the table is created; drop the option or use the table's value"
        )


#: hoodie.bulkinsert.sort.mode values Hudi knows (every bucket already holds one partition's rows,
#: so PARTITION_PATH_REPARTITION is NONE here, and its _AND_SORT twin PARTITION_SORT)
_SORT_MODES = ("NONE", "GLOBAL_SORT", "PARTITION_SORT", "PARTITION_PATH_REPARTITION",
               "PARTITION_PATH_REPARTITION_AND_SORT")  # fmt: skip
_SORTED_PER_FILE_GROUP = ("PARTITION_SORT", "PARTITION_PATH_REPARTITION_AND_SORT")
_BLOCK_FORMATS = ("avro", "parquet")


def check_write_options(config: HoodieConfig) -> None:
    """Options naming a component or format are checked before a write starts, as Hudi does:
    an unknown executor, index, log block format, parquet codec or bulk_insert sort mode is an error
    even for a write that would not have used it (a MOR upsert writes no parquet file)."""
    from hudi_core.config.executor import ExecutorOptions
    from hudi_core.io.base_file import PARQUET_CODECS, parquet_codec
    from hudi_core.plugins.manager import get_plugin_manager

    get_plugin_manager().component("executor", str(config.get_str(ExecutorOptions.TYPE) or "SIMPLE"))
    check_concurrency_options(config)
    checked_index_type(config)
    check_auto_key_options(config)
    checks = (
        (WriteOptions.LOGFILE_DATA_BLOCK_FORMAT, _BLOCK_FORMATS, str.lower),
        (WriteOptions.PARQUET_COMPRESSION, tuple(sorted(PARQUET_CODECS)), str.lower),
        (WriteOptions.BULK_INSERT_SORT_MODE, _SORT_MODES, str.upper),
    )
    for prop, allowed, norm in checks:
        value = config.get_str(prop)
        if value is not None and norm(value.strip()) not in allowed:
            raise ConfigError(f"{prop.key}={value!r} is not one of {', '.join(allowed)}")
    level = config.get_str(WriteOptions.PARQUET_COMPRESSION_LEVEL)
    if level is not None:  # a level the codec takes (ConfigError)
        parquet_codec(str(config.get_str(WriteOptions.PARQUET_COMPRESSION)).strip(), level)


def drops_duplicates(config: HoodieConfig, op: str) -> bool:
    """Whether ``op`` drops the incoming records whose key the table holds
    (``hoodie.datasource.write.insert.drop.duplicates``: an insert or upsert, as Apache Hudi's
    Spark writer does; its overwrites and deletes ignore the option). Refused, before anything is
    written, where it cannot be kept: bulk_insert (Hudi refuses it too) and the BUCKET index."""
    if not config.get(WriteOptions.INSERT_DROP_DUPLICATES):
        return False
    key = WriteOptions.INSERT_DROP_DUPLICATES.key
    if op == "bulk_insert":
        raise ConfigError(f"{key}=true does not work with bulk_insert (nor in Apache Hudi's); use insert")
    if op not in ("insert", "upsert"):
        return False
    if str(config.get_str(IndexOptions.TYPE)).upper() == "BUCKET":
        raise ConfigError(
            f"{key}=true does not work with hoodie.index.type=BUCKET: that index knows a record's file "
            "group, not whether its key is stored (Apache Hudi 0.15 drops every record whose bucket "
            "has a file group, new keys too); use upsert, or a SIMPLE or BLOOM index"
        )
    return True


class WriteClient:
    """Writes Arrow data into a table.

    >>> WriteClient(MetaClient.open("/tmp/trips")).write(data, operation="upsert")  # doctest: +SKIP
    """

    def __init__(
        self,
        table: MetaClient,
        options: Mapping[str, Any] | None = None,
        *,
        engine: Any = None,
        progress: Callable[[int], Callable[[], None]] | None = None,
    ) -> None:
        check_option_conflicts(table, options or {})
        self.options = dict(options or {})
        self.table = table
        self.config = with_table_key_encoding(table, table.write_config(options))
        check_write_options(self.config)
        self._engine = engine
        #: ``progress(total_buckets)`` returns a callback called as each bucket is written
        self._progress = progress

    @property
    def engine(self) -> Any:
        if self._engine is None:
            from hudi_core.engine import engine_for

            self._engine = engine_for(self.config)
        return self._engine

    # -- public operations -----------------------------------------------------------------------

    def write(
        self, data: pa.Table | pa.RecordBatch | Iterable[pa.RecordBatch | pa.Table], operation: str = "upsert"
    ) -> WriteResult:
        """Write a table (one pass of the stages) or a stream of batches (chunked, buffered,
        bounded memory; see :mod:`hudi_core.write.stream`) as one instant."""
        op = operation.lower()
        if op not in OPERATION_TYPES or op == "delete_partition":
            raise ConfigError(f"operation {operation!r} is not one of {', '.join(sorted(OPERATION_TYPES))}")
        drops_duplicates(self.config, op)  # refused combinations fail before anything starts
        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        with writing(self.table, self.config):
            if isinstance(data, pa.Table):
                return retrying(lambda: self._run(data, op), self.config)
            if op in ("insert_overwrite", "insert_overwrite_table", "bulk_insert"):
                # these need the whole input (partitions replaced / global sort): one table
                whole = list(chunks(data, 1 << 62))
                return self._run(whole[0], op) if whole else WriteResult("", op)
            return self._run_stream(iter(data), op)

    def delete(self, keys: pa.Table | pa.RecordBatch | Iterable[pa.RecordBatch | pa.Table]) -> WriteResult:
        """Delete the records whose key (record key fields + partition fields) is in ``keys``: a
        table, or a stream of batches as :meth:`write` takes them."""
        return self.write(keys, "delete")

    def delete_partitions(self, partitions: Sequence[str]) -> WriteResult:
        """Replace every file group of ``partitions`` (the data disappears; files stay until cleaned)."""
        from hudi_core.fs_view import FileSystemView

        table = self.table
        with writing(self.table, self.config):
            schema = table.avro_schema() or {}
            with WriteTransaction(table, self.config) as txn:
                requested = txn.start("delete_partition")
                view = FileSystemView(table)
                replaced = _file_groups_of(view, list(partitions))
                write_inflight(table, requested, WorkloadProfile(), "delete_partition")
                txn.commit(requested, [], operation="delete_partition", schema=schema, replaced=replaced)
            run_post_commit_services(table, self.options, delta_commit=False, timeline=txn.committed)
        return WriteResult(requested.timestamp, "delete_partition",
                           replaced_file_groups=sum(len(v) for v in replaced.values()))  # fmt: skip

    # -- the pipeline ----------------------------------------------------------------------------

    def _required(self, data: pa.Table, op: str) -> list[str]:
        table, cfg = self.table, self.config
        order = ordering_field(cfg)
        key_fields = table.config.record_key_fields
        part_fields = table.config.partition_fields if table.config.is_partitioned else []
        required = [*key_fields, *part_fields]
        if order and op != "delete" and data.num_rows and table.config.ordering_field:
            required.append(order)
        return required

    def _schema_for(self, data: pa.Table, op: str, table_schema: pa.Schema | None) -> pa.Schema | None:
        """The commit's writer schema for ``data`` over ``table_schema``, the table's as the
        write read it once (None: a delete on a table without data)."""
        required = self._required(data, op)
        if op == "delete":
            evolve_schema(None, data.schema, required=required)  # keys must be there
            return stored_schema(self.table.config, table_schema)
        schema = evolve_schema(
            table_schema, data.schema, required=required, config=self.config, table_config=self.table.config
        )
        check_schema_on_read(self.table, table_schema, schema)
        return schema

    def _prepare(self, data: pa.Table, op: str, schema: pa.Schema, keygen: KeyGen) -> pa.Table:
        """Stages 1-2: keys, schema conformance, dedupe (and bulk_insert's sort)."""
        cfg = self.config
        is_delete = op == "delete"
        payload_for(cfg)
        records = prepare(data, keygen, cfg, all_deletes=is_delete, operation=op)
        check_ordering_values(records, cfg, op)
        if not is_delete:
            records = conform_to_schema(records, schema)
        if self._combine(op):
            records = deduplicate(records, cfg)
        return records

    def _combine(self, op: str) -> bool:
        return combines(self.config, op)

    def _run(self, data: pa.Table, op: str) -> WriteResult:
        from hudi_core.fs_view import FileSystemView

        table, cfg = self.table, self.config
        is_delete = op == "delete"
        order = ordering_field(cfg)
        key_fields = table.config.record_key_fields
        # one look before the instant: the table's schema, and failed writes to roll back
        seen = table.timeline
        schema = self._schema_for(data, op, table.schema(timeline=seen))
        if schema is None:
            return WriteResult("", op)
        keygen = write_key_generator(cfg)
        records = self._prepare(data, op, schema, keygen)
        index = index_for(cfg, key_fields)
        avro = arrow_to_avro(schema, table.config.name)

        # -- the instant starts here: from now on a failure leaves a pending instant --------------
        with WriteTransaction(table, cfg) as txn:
            requested = txn.start(op, seen=seen)
            t = requested.timestamp
            records = _stamped(records, keygen, t)
            # the planning reads the load of the timeline that the instant was created on (other
            # writers' commits since are the conflict check's to find): no listing of .hoodie,
            # a request on S3, for any of its looks
            with table.pinned_timeline(txn.timeline):
                view = FileSystemView(table)
                has_data = bool(table.timeline.completed_commits())
                if drops_duplicates(cfg, op) and has_data:
                    records = drop_stored_keys(records, index, view)
                replaced: dict[str, list[str]] = {}
                if op in ("insert_overwrite", "insert_overwrite_table"):
                    parts = (
                        view.partitions()
                        if op == "insert_overwrite_table"
                        else pc.unique(records.column(PARTITION_PATH)).to_pylist()
                    )
                    replaced = _file_groups_of(view, parts) if has_data else {}
                    tagged = tag_locations(records, index, None)
                elif op == "upsert" or is_delete or isinstance(index, BucketIndex):
                    tagged = tag_locations(records, index, view if has_data else None)
                else:  # insert / bulk_insert: no lookup, every record is new
                    tagged = tag_locations(records, index, None)
                sort_mode = str(cfg.get_str(WriteOptions.BULK_INSERT_SORT_MODE) or "NONE").upper()
                if op == "bulk_insert" and sort_mode == "GLOBAL_SORT":
                    # sorted before the rows are dealt to file groups in order: each file holds one
                    # run of keys, disjoint from its neighbours' (sort_indices is stable)
                    tagged = tagged.take(
                        pc.sort_indices(tagged, [(PARTITION_PATH, "ascending"), (RECORD_KEY, "ascending")])
                    )
                # Hudi's bulk_insert rolls its files over at hoodie.parquet.max.file.size of bytes
                # written, in input order: one rolling writer per thread over its share of the rows
                rolling = (
                    op == "bulk_insert" and sort_mode == "NONE" and not isinstance(index, BucketIndex)
                    and getattr(self.engine, "name", "") == "local"
                )  # fmt: skip
                if rolling:
                    inflight = write_inflight(table, requested, WorkloadProfile(), op)
            ctx = WriteContext(
                base_uri=table.base_uri, instant=t, is_mor=table.config.is_mor, avro_schema=avro, schema=schema,
                options=dict(cfg.to_dict()), ordering_field=order, payload=payload_for(cfg).value, operation=op,
                history=table.schema_history(timeline=txn.timeline), bootstrap_sources=bootstrap_sources(table),
            )  # fmt: skip
            if rolling:
                statuses = self._write_rolling(
                    ctx, tagged.drop_columns([c for c in _LOCATION_COLUMNS if c in tagged.column_names])
                )
            else:
                with table.pinned_timeline(txn.timeline):
                    partitions = partition_codes(tagged)
                    profile = profile_of(tagged, partitions)
                    reject_clustered_updates(profile, clustered_file_groups(view if has_data else None, cfg))
                    small: list[SmallFile] = []
                    pack = op in ("insert", "upsert") and not isinstance(index, BucketIndex)
                    if pack and profile.inserts and has_data:
                        small = _small_files(view, list(profile.inserts), cfg, is_mor=table.config.is_mor)
                    avg = average_record_size(recent_record_sizes(table.timeline), cfg)
                    plan = assign(
                        profile,
                        small,
                        cfg,
                        is_mor=table.config.is_mor,
                        avg_record_size=avg,
                        pack_small_files=pack,
                    )
                    inflight = write_inflight(table, requested, profile, op)

                labelled = assign_buckets(tagged, plan, partitions)
                ctx.take_listings(view)
                # hoodie.bulkinsert.sort.mode: NONE (Hudi's default since 0.12) writes each file group's
                # rows in input order; GLOBAL_SORT sorted them all above; the PARTITION_SORT modes sort
                # each file group's rows by key (a bucket is one partition's file group). On the local
                # engine each task gathers (and sorts) its own rows, so those copies run on the pool's
                # threads instead of one serial take of the whole input before the writes start.
                by_key = op == "bulk_insert" and sort_mode in _SORTED_PER_FILE_GROUP
                if getattr(self.engine, "name", "") == "local":
                    rows = _rows_by_bucket(labelled)
                    # the handles never read the location columns: do not copy them into every task
                    payload = labelled.drop_columns(
                        [c for c in _LOCATION_COLUMNS if c in labelled.column_names]
                    )
                    results = self._map_buckets(
                        [(ctx, plan.buckets[i], _BucketRows(payload, pos, by_key)) for i, pos in rows]
                    )
                else:
                    order = None
                    if by_key:
                        order = pc.sort_indices(
                            labelled, [(PARTITION_PATH, "ascending"), (RECORD_KEY, "ascending")]
                        )
                    tasks = _split_by_bucket(labelled, plan.buckets, order)
                    results = self._map_buckets([(ctx, b, recs) for b, recs in tasks])
                statuses = [s for r in results for s in r]
            txn.commit(inflight, statuses, operation=op, schema=avro, replaced=replaced)
        run_post_commit_services(
            table, self.options, delta_commit=inflight.action == Action.DELTA_COMMIT, timeline=txn.committed
        )
        return WriteResult(
            t, op,
            inserted=sum(s.inserted for s in statuses), updated=sum(s.updated for s in statuses),
            deleted=sum(s.deleted for s in statuses), files_written=len(statuses),
            replaced_file_groups=sum(len(v) for v in replaced.values()), statuses=statuses,
        )  # fmt: skip

    def _write_rolling(self, ctx: WriteContext, records: pa.Table) -> list[WriteStatus]:
        """bulk_insert's rows in input order, a contiguous share per engine thread, each written
        by core's :class:`BulkInsertWriter` (a file per partition, rolled at the size limit)."""
        n = max(1, min(int(self.engine.parallelism), -(-records.num_rows // _MIN_ROLLING_ROWS)))
        step = -(-records.num_rows // n)
        shares = [(ctx, i, records.slice(i * step, step)) for i in range(n) if i * step < records.num_rows]
        return [s for r in self._map_ticking(_write_share, shares) for s in r]

    def _run_stream(self, source: Iterator[pa.RecordBatch | pa.Table], op: str) -> WriteResult:
        from hudi_core.fs_view import FileSystemView

        table, cfg = self.table, self.config
        parts = chunks(source, chunk_max_bytes(cfg))
        first = next(parts, None)
        if first is None:
            return WriteResult("", op)
        # read once: every chunk must evolve the table's schema as the first did (re-reading it
        # per chunk cost a listing of .hoodie and a commit's metadata, two requests on S3)
        seen = table.timeline  # also where the transaction looks for failed writes
        table_schema = table.schema(timeline=seen)
        schema = self._schema_for(first, op, table_schema)
        if schema is None:
            return WriteResult("", op)
        keygen = write_key_generator(cfg)  # one for every chunk: made-up keys number on
        records = self._prepare(first, op, schema, keygen)  # the first chunk is checked before the instant
        index = index_for(cfg, table.config.record_key_fields)
        avro = arrow_to_avro(schema, table.config.name)
        txn = WriteTransaction(table, cfg)
        requested = txn.start(op, seen=seen)
        records = _stamped(records, keygen, requested.timestamp)
        try:
            with table.pinned_timeline(txn.timeline):  # the setup's looks: the instant's load
                inflight = write_inflight(table, requested, WorkloadProfile(), op)
                has_data = bool(table.timeline.completed_commits())
                view = FileSystemView(table) if has_data else None
                # new records go into small files first, as in _run (listed per partition on demand)
                pack = view is not None and op in ("insert", "upsert") and not isinstance(index, BucketIndex)
                avg = average_record_size(recent_record_sizes(table.timeline), cfg) if pack else 0
            ctx = WriteContext(
                base_uri=table.base_uri, instant=requested.timestamp, is_mor=table.config.is_mor,
                avro_schema=avro, schema=schema, options=dict(cfg.to_dict()), ordering_field=ordering_field(cfg),
                payload=payload_for(cfg).value, clustered=clustered_file_groups(view, cfg), operation=op,
                history=table.schema_history(timeline=txn.timeline), bootstrap_sources=bootstrap_sources(table),
            )  # fmt: skip
            lookup = has_data and (op in ("upsert", "delete") or isinstance(index, BucketIndex))
            is_mor = table.config.is_mor
            smalls = (lambda p: _small_files(view, [p], cfg, is_mor=is_mor)) if pack else None  # type: ignore[arg-type]
            writer = StreamWriter(ctx, cfg, index, view, lookup=lookup, dedupe=self._combine(op), small_files=smalls,
                                  avg_record_size=avg)  # fmt: skip
            # each chunk's records whose key the table held before the write are dropped
            drop = drops_duplicates(cfg, op) and view is not None
            writer.add(drop_stored_keys(records, index, view) if drop else records)
            del records, first
            for n, chunk in enumerate(parts, start=2):
                if op != "delete" and self._schema_for(chunk, op, table_schema) != schema:
                    raise SchemaMismatchError(
                        f"streamed chunk {n} has columns/types {chunk.schema} that change the write's "
                        f"schema {schema}; give every batch of one write the same schema"
                    )
                prepared = self._prepare(chunk, op, schema, keygen)
                writer.add(drop_stored_keys(prepared, index, view) if drop else prepared)
            statuses = writer.finish()
        except BaseException as e:
            if txn.abort() and isinstance(e, Exception) and not isinstance(e, WriteConflictError):
                raise WriteConflictError(txn.rolled_back_message()) from e
            raise
        txn.commit(inflight, statuses, operation=op, schema=avro)
        run_post_commit_services(
            table, self.options, delta_commit=inflight.action == Action.DELTA_COMMIT, timeline=txn.committed
        )
        return WriteResult(
            requested.timestamp, op,
            inserted=sum(s.inserted for s in statuses), updated=sum(s.updated for s in statuses),
            deleted=sum(s.deleted for s in statuses), files_written=len(statuses), statuses=statuses,
        )  # fmt: skip

    def _map_buckets(
        self, work: list[tuple[WriteContext, BucketInfo, pa.Table | _BucketRows]]
    ) -> list[list[WriteStatus]]:
        return self._map_ticking(_write_task, work)

    def _map_ticking(
        self, fn: Callable[[Any], list[WriteStatus]], work: list[Any]
    ) -> list[list[WriteStatus]]:
        """``fn`` over ``work`` on the engine, the progress callback ticked once per task."""
        if self._progress is None:
            return list(self.engine.map(fn, work))
        tick = self._progress(len(work))
        if getattr(self.engine, "name", "") != "local":
            results = list(self.engine.map(fn, work))  # remote tasks: count on return
            for _ in results:
                tick()
            return results

        def task(args: Any) -> list[WriteStatus]:
            out = fn(args)
            tick()
            return out

        return list(self.engine.map(task, work))


#: rows below which a share of a rolling bulk_insert is not split off for another thread
_MIN_ROLLING_ROWS = 65536


def _stamped(records: pa.Table, keygen: KeyGen, instant: str) -> pa.Table:
    """``records`` whose made-up keys carry ``instant`` (they were made before it existed); the
    keygen's later keys carry it from the start."""
    if not isinstance(keygen, AutoRecordKeys):
        return records
    keygen.instant = instant
    at = records.schema.get_field_index(RECORD_KEY)
    return records.set_column(at, RECORD_KEY, stamp_instant(records.column(RECORD_KEY), instant))


def _write_share(args: tuple[WriteContext, int, pa.Table]) -> list[WriteStatus]:
    ctx, i, rows = args
    return write_in_input_order(ctx, rows, attempt=as_attempt(i))


def _write_task(args: tuple[WriteContext, BucketInfo, pa.Table | _BucketRows]) -> list[WriteStatus]:
    """One engine task: a top-level function over picklable values."""
    ctx, bucket, records = args
    if isinstance(records, _BucketRows):
        records = records.gather()
    return write_bucket(ctx, bucket, records)


@dataclass(frozen=True)
class _BucketRows:
    """A local task's rows: positions into the labelled input (input order), gathered on the
    task's thread; ``by_key``: sorted by record key (stable, as bulk_insert's sort)."""

    labelled: pa.Table
    positions: np.ndarray
    by_key: bool

    def gather(self) -> pa.Table:
        rows = _take_ascending(self.labelled, self.positions)
        if self.by_key:
            rows = rows.take(pc.sort_indices(rows.column(RECORD_KEY)))  # sort_indices is stable
        return rows


def _take_ascending(table: pa.Table, positions: np.ndarray) -> pa.Table:
    """``table.take(positions)`` for ascending ``positions``, batch by batch: Arrow's take from a
    table of several chunks first joins every chunk of every column, so each file group of a 10M-row
    input (10 chunks) copied the whole input (0.31 s a take, 85 takes; 0.03 s batch by batch).
    The rows stay in one chunk per input batch they came from: the parquet writer takes chunked
    columns as they are, and joining them would copy every row once more (5% of a bulk load)."""
    batches = table.to_batches()
    if len(batches) <= 1:
        return table.take(pa.array(positions))
    ends = np.cumsum([b.num_rows for b in batches])
    cuts = np.searchsorted(positions, ends)  # positions before cuts[k] lie in batches 0..k
    pieces = []
    lo = 0
    for batch, hi, end in zip(batches, cuts, ends, strict=True):
        if hi > lo:
            pieces.append(batch.take(pa.array(positions[lo:hi] - (end - batch.num_rows))))
        lo = hi
    return pa.Table.from_batches(pieces, schema=table.schema)


def _rows_by_bucket(labelled: pa.Table) -> list[tuple[int, np.ndarray]]:
    """(bucket number, row positions in input order) per bucket with rows, by bucket number."""
    if labelled.num_rows == 0:
        return []
    b = labelled.column(BUCKET).to_numpy()
    # a stable sort of small integers: numpy radix-sorts 16-bit keys (linear, ~5x faster)
    order = np.argsort(b.astype(np.int16) if len(b) and int(b.max()) < 1 << 15 else b, kind="stable")
    sb = b[order]
    bounds = np.flatnonzero(np.diff(sb)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(sb)]])
    return [(int(sb[s]), order[s:e]) for s, e in zip(starts, ends, strict=True)]


def _split_by_bucket(
    labelled: pa.Table, buckets: list[BucketInfo], pre_order: pa.Array | None = None
) -> list[tuple[BucketInfo, pa.Table]]:
    """One table per bucket (rows in input order, or in ``pre_order`` within each bucket)."""
    if labelled.num_rows == 0:
        return []
    b = labelled.column(BUCKET).to_numpy()
    if pre_order is None:
        order = np.argsort(b, kind="stable")
    else:
        pre = pre_order.to_numpy(zero_copy_only=False)
        order = pre[np.argsort(b[pre], kind="stable")]
    sorted_tbl = labelled.take(pa.array(order))
    sb = b[order]
    bounds = np.flatnonzero(np.diff(sb)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(sb)]])
    return [
        (buckets[int(sb[s])], sorted_tbl.slice(int(s), int(e - s))) for s, e in zip(starts, ends, strict=True)
    ]


def _file_groups_of(view: FileSystemView, partitions: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for g in view.all_file_groups(partitions=partitions):  # (lists only these: see file_group_locations)
        out.setdefault(g.partition_path, []).append(g.file_id)
    return out


def _small_files(
    view: FileSystemView, partitions: list[str], cfg: HoodieConfig, *, is_mor: bool
) -> list[SmallFile]:
    limit = int(cfg.get(WriteOptions.PARQUET_SMALL_FILE_LIMIT))
    if limit <= 0:
        return []
    # file groups a pending compaction or clustering plan holds take no new records (Hudi)
    pending = {op.file_id for op in view.pending_compaction_operations()}
    clustered = view.pending_clustering_file_groups()
    out = []
    for s in view.latest_file_slices(partitions=partitions):  # (lists only these partitions)
        if s.base_file is None or s.file_id in pending or s.base_file.size >= limit:
            continue
        if (s.partition_path, s.file_id) in clustered:
            continue
        if is_mor and s.log_files:
            continue
        out.append(SmallFile(s.partition_path, s.file_id, s.base_instant, s.base_file.size))
    return out


#: stage 3's location columns: the bucket label (BUCKET) carries what the handles need
_LOCATION_COLUMNS = (FILE_ID, BASE_INSTANT, LOCATION_PARTITION, BUCKET_NUM, BUCKET)

#: public names for other engines (hudi_spark); the underscored names are kept as aliases
file_groups_of = _file_groups_of
small_files = _small_files
