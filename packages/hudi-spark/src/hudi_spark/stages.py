"""The functions Spark tasks run: each wraps one of core's write stages over Arrow batches.

Every function here is a module-level callable taking only picklable arguments, so it ships to
executors (``local-cluster`` and real clusters) without any driver state.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

__all__ = [
    "INPUT_SEQ",
    "TaskContextInfo",
    "assign_task",
    "by_group",
    "chain",
    "chunks",
    "dedupe_task",
    "drop_columns_task",
    "empty_like",
    "file_group_ids",
    "hash_buckets",
    "prepare_task",
    "table_of",
    "tag_task",
    "task_info",
]


@dataclass(frozen=True)
class TaskContextInfo:
    """Where a task runs: gives the write token ``partitionId-stageId-attemptId``."""

    partition_id: int
    stage_id: int
    attempt_id: int
    attempt_number: int = 0

    @property
    def attempt(self) -> Any:
        """Core's ``TaskAttempt`` with Spark's ids (write tokens, record seqnos)."""
        from hudi_core.write.handles import TaskAttempt

        return TaskAttempt(self.partition_id, self.stage_id, self.attempt_id)

    @property
    def write_token(self) -> str:
        return str(self.attempt.token)


def task_info() -> TaskContextInfo:
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:  # run outside Spark (unit use): a fixed token
        return TaskContextInfo(0, 0, 0)
    return TaskContextInfo(ctx.partitionId(), ctx.stageId(), ctx.taskAttemptId(), ctx.attemptNumber())


def chain(
    batches: Iterator[pa.RecordBatch], *, steps: Sequence[Callable[..., Iterator[pa.RecordBatch]]]
) -> Iterator[pa.RecordBatch]:
    """Run task functions one after the other in one task (one JVM<->Python hop for all)."""
    out: Iterator[pa.RecordBatch] = batches
    for step in steps:
        out = step(out)
    return out


def table_of(batches: Iterable[pa.RecordBatch]) -> pa.Table | None:
    """A task's non-empty batches as one table; None when it has no rows."""
    batches = [b for b in batches if b.num_rows]
    if not batches:
        return None  # pa.Table.from_batches([]) needs a schema: empty partitions happen after hashing
    return pa.Table.from_batches(batches)


def empty_like(schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    return iter(())


def _out(table: pa.Table, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    yield from conform(table, schema).to_batches()


#: the input position of a row (input partition, row index), carried through the key shuffle so
#: precombine breaks ordering ties as core does: the later input row wins
INPUT_SEQ = "_hoodie_w_input_seq"
_SEQ_SHIFT = 40  # up to 2^40 rows per input partition, 2^23 partitions


def prepare_task(
    batches: Iterator[pa.RecordBatch],
    *,
    config: Mapping[str, str],
    out_schema: pa.Schema,
    all_deletes: bool,
    schema: pa.Schema | None,
    operation: str,
) -> Iterator[pa.RecordBatch]:
    """Stage 1 (keys): core's ``records.prepare`` with the table's key generator, its check of
    the ordering values ``operation`` needs, then the records cast to the commit schema
    (``conform_to_schema``; not for deletes). When ``out_schema`` has :data:`INPUT_SEQ`, each
    row gets its input position."""
    import numpy as np
    from hudi_core.config.property import HoodieConfig
    from hudi_core.keygen import write_key_generator
    from hudi_core.write.dedupe import check_ordering_values
    from hudi_core.write.records import conform_to_schema, prepare

    conf = HoodieConfig(config)
    keygen = write_key_generator(conf, task=task_info().partition_id)
    with_seq = INPUT_SEQ in out_schema.names
    row = task_info().partition_id << _SEQ_SHIFT
    for batch in batches:
        if batch.num_rows == 0:
            continue
        data = pa.Table.from_batches([batch])
        # internal columns computed before a shuffle: the input position is kept, the rest redone
        given_seq = data.column(INPUT_SEQ) if INPUT_SEQ in data.column_names else None
        data = data.drop_columns([c for c in data.column_names if c.startswith("_hoodie_w_")])
        records = prepare(data, keygen, conf, all_deletes=all_deletes, operation=operation)
        check_ordering_values(records, conf, operation)
        if schema is not None:
            records = conform_to_schema(records, schema)
        if with_seq:
            seq = (
                given_seq
                if given_seq is not None
                else pa.array(np.arange(row, row + batch.num_rows, dtype=np.int64))
            )
            records = records.append_column(INPUT_SEQ, seq)
            row += batch.num_rows
        yield from _out(records, out_schema)


def hash_buckets(columns: pa.Array, *, config: Mapping[str, str], record_key_fields: list[str]) -> pa.Array:
    """The BUCKET index's hash bucket of each row (an Arrow UDF over a struct of the key and
    partition columns): core's key generator and bucket index, so Spark can shuffle by it while
    the other columns stay in the JVM."""
    data = pa.Table.from_struct_array(columns)
    _, buckets = _paths_and_buckets(data, config, record_key_fields)
    return pa.array(buckets, pa.int32())


def add_bucket_task(
    batches: Iterator[pa.RecordBatch],
    *,
    config: Mapping[str, str],
    record_key_fields: list[str],
    keys: Sequence[str],
    out_schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """:func:`hash_buckets` as a task over whole rows, for PySpark without scalar Arrow UDFs
    (3.5): each batch gets the hash bucket of its ``keys`` columns as a last column."""
    for batch in batches:
        columns = pa.StructArray.from_arrays([batch.column(k) for k in keys], names=list(keys))
        bucket = hash_buckets(columns, config=config, record_key_fields=record_key_fields)
        yield pa.RecordBatch.from_arrays([*batch.columns, bucket], schema=out_schema)


def file_group_ids(batch: pa.RecordBatch, *, config: Mapping[str, str], record_key_fields: list[str]) -> Any:
    """A BUCKET index file group id for each input row (numpy int64): a hash of core's partition
    path and hash bucket, the same in every task and batch. A collision only puts two file
    groups in one run of :func:`by_group`, which writes them together as any run's groups."""
    import numpy as np
    import pandas as pd

    data = pa.Table.from_batches([batch])
    data = data.drop_columns([c for c in data.column_names if c.startswith("_hoodie_w_")])
    paths, buckets = _paths_and_buckets(data, config, record_key_fields)
    hashes = pd.util.hash_array(np.asarray(paths.to_numpy(zero_copy_only=False), dtype=object))
    with np.errstate(over="ignore"):
        return (hashes * np.uint64(31) + buckets.astype(np.uint64)).view(np.int64)


def _paths_and_buckets(
    data: pa.Table, config: Mapping[str, str], record_key_fields: list[str]
) -> tuple[pa.ChunkedArray, Any]:
    """Core's partition path and hash bucket of every row of ``data``, one for each row (rows
    flagged deleted included: tagging would drop those it finds nothing to delete for)."""
    from hudi_core.config.property import HoodieConfig
    from hudi_core.keygen import key_generator_for
    from hudi_core.write.index import BucketIndex, index_for
    from hudi_core.write.records import PARTITION_PATH, RECORD_KEY, prepare

    conf = HoodieConfig(config)
    records = prepare(data, key_generator_for(conf), conf)
    index = index_for(conf, record_key_fields)
    assert isinstance(index, BucketIndex)  # only the BUCKET index's writes hash in tasks
    return records.column(PARTITION_PATH), index.bucket_ids(records.column(RECORD_KEY))


def dedupe_task(
    batches: Iterator[pa.RecordBatch], *, config: Mapping[str, str], out_schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """Stage 2 (precombine): the input is hash-partitioned by key, so every duplicate of a key is
    in this task and core's ``dedupe.deduplicate`` over the task's rows is exact. The shuffle
    reorders rows: they are put back in input order first, so ties go to the later input row."""
    from hudi_core.config.property import HoodieConfig
    from hudi_core.write.dedupe import deduplicate

    table = table_of(batches)
    if table is None:
        return
    if INPUT_SEQ in table.column_names:
        table = table.sort_by(INPUT_SEQ).drop_columns([INPUT_SEQ])
    yield from _out(deduplicate(table, HoodieConfig(config)), out_schema)


def tag_task(
    batches: Iterator[pa.RecordBatch],
    *,
    base_uri: str,
    config: Mapping[str, str],
    record_key_fields: list[str],
    out_schema: pa.Schema,
    has_commits: bool,
    view_key: str | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stage 3 in a task: core's ``tag_locations`` against a file-system view built in the task
    (BUCKET: the file group of each hash bucket; SIMPLE / GLOBAL_SIMPLE looked up in the task:
    the footer-pruned key columns of the base files). With ``view_key`` (the write's instant) a
    Python worker builds that view once per write, however many groups it tags."""
    from hudi_core.config.property import HoodieConfig
    from hudi_core.write.index import index_for, tag_locations

    if not has_commits:  # nothing to look up: batch by batch, so the next step streams them too
        index = index_for(HoodieConfig(config), record_key_fields)
        for batch in batches:
            if batch.num_rows:
                yield from _out(tag_locations(pa.Table.from_batches([batch]), index, None), out_schema)
        return
    yield from _against_view(
        tag_locations, batches, base_uri, config, record_key_fields, out_schema, view_key
    )


def drop_stored_task(
    batches: Iterator[pa.RecordBatch],
    *,
    base_uri: str,
    config: Mapping[str, str],
    record_key_fields: list[str],
    out_schema: pa.Schema,
    view_key: str,
) -> Iterator[pa.RecordBatch]:
    """``hoodie.datasource.write.insert.drop.duplicates`` in a task: the records whose key the
    table holds dropped (core's ``drop_stored_keys``, against the write's view in this worker)."""
    from hudi_core.write.index import drop_stored_keys

    yield from _against_view(
        drop_stored_keys, batches, base_uri, config, record_key_fields, out_schema, view_key
    )


def _against_view(
    step: Callable[[pa.Table, Any, Any], pa.Table], batches: Iterator[pa.RecordBatch], base_uri: str,
    config: Mapping[str, str], record_key_fields: list[str], out_schema: pa.Schema, view_key: str | None,
) -> Iterator[pa.RecordBatch]:  # fmt: skip
    """Core's ``step(rows, index, view)`` over a chunk of the task's rows at a time (a look-up
    reads the candidate key columns per chunk), against the table's view, built once per write
    per Python worker: a task that writes its groups one by one (by_group) looks each group up
    against the same listing."""
    from hudi_core.config.property import HoodieConfig
    from hudi_core.write.index import index_for

    from hudi_spark.options import SparkOptions

    conf = HoodieConfig(config)
    view = _view(base_uri, config, view_key)
    index = index_for(conf, record_key_fields)
    for table in chunks(batches, int(conf.get(SparkOptions.TASK_MAX_BYTES))):
        yield from _out(step(table, index, view), out_schema)


_VIEW_CACHE: dict[str, Any] = {}


def _view(base_uri: str, config: Mapping[str, str], view_key: str | None) -> Any:
    """The table's file-system view, built once per ``view_key`` (a write's instant) in this
    Python worker; without a key, every call lists the table anew."""
    from hudi_core import HudiTable
    from hudi_core.fs_view import FileSystemView

    key = (base_uri, view_key)
    if view_key is None or _VIEW_CACHE.get("key") != key:
        _VIEW_CACHE.clear()
        _VIEW_CACHE.update(key=key, view=FileSystemView(HudiTable.open(base_uri, options=config)))
    return _VIEW_CACHE["view"]


def drop_columns_task(*names: str) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A step that removes ``names`` from every batch (helper columns of a shuffle)."""
    return functools.partial(_drop_columns, names=names)


def _drop_columns(batches: Iterator[pa.RecordBatch], *, names: Sequence[str]) -> Iterator[pa.RecordBatch]:
    for b in batches:
        yield b.drop_columns([n for n in names if n in b.schema.names])


def chunks(batches: Iterable[pa.RecordBatch], max_bytes: int) -> Iterator[pa.Table]:
    """The rows of ``batches`` as tables of at most about ``max_bytes`` (Arrow bytes; a single
    larger batch makes a table of its own), so a task holds one chunk at a time."""
    held: list[pa.RecordBatch] = []
    size = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        if held and size + batch.nbytes > max_bytes:
            yield pa.Table.from_batches(held)
            held, size = [], 0
        held.append(batch)
        size += batch.nbytes
    if held:
        yield pa.Table.from_batches(held)


def by_group(
    batches: Iterator[pa.RecordBatch],
    *,
    column: str | Callable[[pa.RecordBatch], Any],
    steps: Sequence[Callable[..., Iterator[pa.RecordBatch]]],
    max_bytes: int,
) -> Iterator[pa.RecordBatch]:
    """Run ``steps`` over the task's rows, holding about ``max_bytes`` of them at most.

    While the rows fit (Arrow bytes), ``steps`` run once over all of them. Past that, every row
    is spilled to the worker's local disk (one Arrow IPC file, its batches indexed by the row's
    group: a file group, or a key group) and ``steps`` run once per run of whole groups of at
    most ``max_bytes`` together (one group alone if it is larger), reading back only those rows.
    So the memory of a Python worker is bounded by ``max_bytes`` plus one group, whatever
    Spark's estimate of the input size was. ``column`` names an integer column holding the
    group, or is a function giving a batch's groups (numpy integers), computed only on a spill."""
    held: list[pa.RecordBatch] = []
    size = 0
    rest = iter(batches)
    for batch in rest:
        if batch.num_rows:
            held.append(batch)
            size += batch.nbytes
            if size > max_bytes:
                break
    else:
        yield from chain(iter(held), steps=steps)
        return
    spill = _Spill(column)
    try:
        for batch in held:
            spill.add(batch)
        held.clear()
        for batch in rest:
            spill.add(batch)
        for groups in spill.groups(max_bytes):
            yield from chain(groups, steps=steps)
    finally:
        spill.remove()


class _Spill:
    """Rows of one task on local disk, readable back by whole groups: each batch is cut by
    its groups (an integer ``column``, or a function of the batch) and its pieces appended to
    one Arrow IPC file; an index maps every group to its pieces. Files go to Spark's local
    directories (``SPARK_LOCAL_DIRS``)."""

    def __init__(self, column: str | Callable[[pa.RecordBatch], Any]) -> None:
        import os
        import tempfile

        local = [d for d in os.environ.get("SPARK_LOCAL_DIRS", "").split(",") if d]
        self.column = column
        self.dir = tempfile.mkdtemp(prefix="hudi-spark-spill-", dir=local[0] if local else None)
        self.path = os.path.join(self.dir, "rows.arrow")
        self.sink: Any = None
        self.writer: Any = None
        self.index: dict[int, list[int]] = {}
        self.sizes: dict[int, int] = {}
        self.pieces = 0

    def add(self, batch: pa.RecordBatch) -> None:
        import numpy as np

        if batch.num_rows == 0:
            return
        if self.writer is None:
            self.sink = pa.OSFile(self.path, "wb")
            self.writer = pa.ipc.new_file(self.sink, batch.schema)
        if callable(self.column):
            g = np.asarray(self.column(batch))
            if len(g) != batch.num_rows:  # a grouping that lost rows would misplace the rest
                raise ValueError(f"{self.column!r} gave {len(g)} groups for {batch.num_rows} rows")
        else:
            g = batch.column(self.column).to_numpy(zero_copy_only=False)
        order = np.argsort(g, kind="stable")
        g = g[order]
        rows = batch.take(pa.array(order))
        cuts = np.flatnonzero(g[1:] != g[:-1]) + 1
        for lo, hi in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(g)]]), strict=True):
            piece = rows.slice(int(lo), int(hi - lo))
            self.writer.write_batch(piece)
            self.index.setdefault(int(g[lo]), []).append(self.pieces)
            self.sizes[int(g[lo])] = self.sizes.get(int(g[lo]), 0) + piece.nbytes
            self.pieces += 1

    def groups(self, max_bytes: int) -> Iterator[Iterator[pa.RecordBatch]]:
        """The spilled rows, whole groups at a time, as many as fit in ``max_bytes`` together."""
        if self.writer is None:
            return
        self.writer.close()
        self.sink.close()
        runs: list[list[int]] = [[]]
        size = 0
        for group in sorted(self.index):
            if runs[-1] and size + self.sizes[group] > max_bytes:
                runs.append([])
                size = 0
            runs[-1].append(group)
            size += self.sizes[group]
        with pa.OSFile(self.path) as f:  # read on demand: a run's pieces only, copied in
            reader = pa.ipc.open_file(f)
            for run in runs:
                yield (reader.get_batch(i) for group in run for i in self.index[group])

    def remove(self) -> None:
        import shutil

        if self.writer is not None and not self.sink.closed:
            self.sink.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def join_task(
    records: pa.Table,
    existing: pa.Table,
    *,
    config: Mapping[str, str],
    record_key_fields: list[str],
    out_schema: pa.Schema,
    base_uri: str | None = None,
    view_key: str | None = None,
) -> pa.Table:
    """Stage 3 for SIMPLE / GLOBAL_SIMPLE: one co-group (records and existing key locations that
    hash to the same group) tagged by core's ``tag_with_locations``. A global index reads the
    table at ``base_uri``: on a MOR table it first drops the stale copies of moved keys (core's
    ``live_locations``: every location of a key is in its co-group), and a key that changes
    partition is merged with its stored record before it moves (``split_partition_changes``)."""
    from hudi_core.config.property import HoodieConfig
    from hudi_core.write.index import SimpleIndex, index_for, tag_with_locations

    if records.num_rows == 0:
        return out_schema.empty_table()
    index = index_for(HoodieConfig(config), record_key_fields)
    assert isinstance(index, SimpleIndex)  # only SIMPLE / GLOBAL_SIMPLE co-group key locations
    existing = existing.drop_columns([c for c in ("_g",) if c in existing.column_names])
    view = (
        _view(base_uri, config, view_key)
        if index.is_global and base_uri is not None and existing.num_rows
        else None
    )
    return conform(tag_with_locations(records.drop_columns(["_g"]), existing, index, view), out_schema)


def locations_task(
    batches: Iterator[pa.RecordBatch], *, base_uri: str, config: Mapping[str, str], out_schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """Existing key locations of the table partitions named in the input (one per row)."""
    from hudi_core import HudiTable
    from hudi_core.fs_view import FileSystemView
    from hudi_core.write.index.simple import existing_key_locations

    parts = [p for b in batches for p in b.column(0).to_pylist()]
    if not parts:
        return
    view = FileSystemView(HudiTable.open(base_uri, options=config))
    yield from _out(existing_key_locations(view, parts), out_schema)


def assign_task(
    batches: Iterator[pa.RecordBatch],
    *,
    plan: Any,
    offsets: Mapping[tuple[int, str], int],
    out_schema: pa.Schema,
) -> Iterator[pa.RecordBatch]:
    """Stage 4, per record: core's ``assign_buckets``. It packs new records positionally into
    the plan's insert ranges; this task's records start at its offset within each partition
    path (counted on the driver), so the capacities are shifted by that offset, and by the new
    records of the task's earlier batches (one batch at a time)."""
    import numpy as np
    import pyarrow.compute as pc
    from hudi_core.write.bucket_assigner import assign_buckets
    from hudi_core.write.records import FILE_ID, PARTITION_PATH

    pid = task_info().partition_id
    seen: dict[str, int] = {}
    for batch in batches:
        if batch.num_rows == 0:
            continue
        table = pa.Table.from_batches([batch])
        ranges = {}
        for part, (caps, nums) in plan.insert_ranges.items():
            off = offsets.get((pid, part), 0) + seen.get(part, 0)
            ranges[part] = ([c - off for c in caps], nums)
        yield from _out(assign_buckets(table, replace(plan, insert_ranges=ranges)), out_schema)
        new = pc.value_counts(
            table.filter(pc.is_null(table.column(FILE_ID))).column(PARTITION_PATH).combine_chunks()
        )
        for part, n in zip(
            new.field("values").to_pylist(), np.asarray(new.field("counts")).tolist(), strict=True
        ):
            seen[part] = seen.get(part, 0) + n


def conform(data: pa.Table, target: pa.Schema) -> pa.Table:
    """Select and cast ``data`` to exactly ``target`` (names, types, nullability). No column at
    all keeps the row count (a count's read): pyarrow builds no rows from no column."""
    if not target.names:
        return data.select([])
    columns = []
    for f in target:
        if f.name in data.column_names:
            columns.append(data.column(f.name).cast(f.type))
        else:  # a column added by schema evolution after this file slice was written
            columns.append(pa.nulls(data.num_rows, f.type))
    return pa.Table.from_arrays(columns, schema=target)
