"""Read splits: one file slice of a planned query, picklable, readable anywhere.

``read.query.plan_splits`` resolves a query once (schema as of the instant, the commit test,
projection, filters) into a :class:`ReadContext` shared by its splits; :func:`read_split`
reads one split without touching the timeline again. ``read_table`` and the Spark reader
both go through these.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.fs_view.model import BaseFile, FileSlice, LogFile
from hudi_core.fs_view.view import CommitSet
from hudi_core.read.align import align_table, decoded
from hudi_core.read.files import RUNS_BYTES_PER_VALUE, iter_parquet, read_parquet
from hudi_core.read.filters import Filter, apply_filters, to_expression
from hudi_core.read.merge import merge_delta, merge_file_slice, merge_file_slice_batches
from hudi_core.schema.internal import SchemaHistory

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "COMMIT_TIME",
    "LOG_BYTE_COST",
    "ReadContext",
    "Split",
    "iter_split",
    "read_split",
    "read_split_delta",
]

COMMIT_TIME = "_hoodie_commit_time"
#: a byte of log files costs about four of a base file to read (Avro decoded, its keys matched
#: with the base file's): on the 1M-row trips table after 5 upserts, a slice of 14 MB of base
#: file and 6 MB of logs read in ~78 ms, one of 20 MB of base file alone in ~39 ms
LOG_BYTE_COST = 4


@dataclass(frozen=True, eq=False)
class ReadContext:
    """What every split of one query shares, resolved once on the planner."""

    query_type: str  # snapshot | read_optimized | incremental
    schema: pa.Schema  # meta columns + the table's columns as of the query instant
    output: pa.Schema  # what the caller gets
    needed: tuple[str, ...]  # columns read from files: output + filter (+ commit time) columns
    merge_schema: pa.Schema  # what a merge carries: needed + keys, ordering, delete flag
    filters: tuple[Filter, ...]
    commits: CommitSet
    as_of: str | None = None  # snapshot / read_optimized instant
    start: str | None = None  # incremental range (start, end]
    end: str | None = None
    #: partition -> {column: text} where the partition columns' values come from the partition
    #: path (a table written with hoodie.datasource.write.drop.partition.columns), else None
    path_values: dict[str, dict[str, str]] | None = None
    #: how the files hold the columns where Hudi's schema on read renamed one (matched by id)
    history: SchemaHistory | None = None

    @property
    def merge_as_of(self) -> str | None:
        return self.end if self.query_type == "incremental" else self.as_of


@dataclass(frozen=True, eq=False)
class Split:
    """One file slice of a query (picklable: send it to a thread, a process or a Spark task)."""

    file_slice: FileSlice
    context: ReadContext

    @property
    def partition_path(self) -> str:
        return self.file_slice.partition_path

    @property
    def file_id(self) -> str:
        return self.file_slice.file_id

    @property
    def base_file(self) -> BaseFile | None:
        return self.file_slice.base_file

    @property
    def log_files(self) -> tuple[LogFile, ...]:
        return () if self.context.query_type == "read_optimized" else self.file_slice.log_files

    @property
    def size(self) -> int:
        """Bytes of the files the split reads (for packing splits into tasks)."""
        base = self.base_file.size if self.base_file is not None else 0
        return int(base or 0) + self._log_bytes

    @property
    def read_cost(self) -> int:
        """:attr:`size` with each byte of the log files counted :data:`LOG_BYTE_COST` times:
        which splits to start reading first."""
        return self.size + (LOG_BYTE_COST - 1) * self._log_bytes

    @property
    def _log_bytes(self) -> int:
        return sum(int(lf.size or 0) for lf in self.log_files)


def read_split(table: MetaClient | str, split: Split, *, options: dict[str, Any] | None = None) -> pa.Table:
    """The rows of one split, exactly ``split.context.output`` (projection and filters applied).

    ``table`` is an open table or its base URI (opened with ``options``)."""
    table = _opened(table, options)
    return next(_finished(split.context, _with_path_values(split, _rows(table, split, None))))


def iter_split(
    table: MetaClient | str, split: Split, *, batch_rows: int, options: dict[str, Any] | None = None
) -> Iterator[pa.Table]:
    """:func:`read_split`'s rows, the same rows in the same order, as a stream of tables: the base
    file is read ``batch_rows`` rows at a time and a merge's added rows come last, so memory holds
    the slice's log and one base batch, never the slice. Empty tables are not yielded."""
    table = _opened(table, options)
    for data in _finished(split.context, _with_path_values(split, _rows(table, split, batch_rows))):
        if data.num_rows:
            yield data


def _with_path_values(split: Split, parts: Iterator[pa.Table]) -> Iterator[pa.Table]:
    """``parts`` with the partition columns set from the split's partition path, where the base
    files do not hold them (Hudi's ``drop.partition.columns``; its reader does the same). A row a
    log record gave keeps the value the record holds, as Hudi's merge-on-read reader answers it
    (writers keep the columns in log records); a value the path cannot give as the column's type
    stays as read."""
    values = (split.context.path_values or {}).get(split.partition_path)
    if not values:
        yield from parts
        return
    merged = split.context.query_type != "read_optimized" and bool(split.file_slice.log_files)
    for data in parts:
        logged = _from_logs(data) if merged else None
        for name, text in values.items():
            if name not in data.column_names:
                continue
            i = data.schema.get_field_index(name)
            try:
                value = pa.array([text], pa.string()).cast(data.schema.field(i).type)[0]
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
            column: Any = pa.repeat(value, data.num_rows)
            if logged is not None:
                own = data.column(i)
                if pa.types.is_dictionary(own.type):
                    own = own.cast(own.type.value_type)
                column = pc.if_else(pc.and_(logged, pc.is_valid(own)), own, column)
            data = data.set_column(i, data.schema.field(i), column)
        yield data


def _from_logs(data: pa.Table) -> pa.ChunkedArray | None:
    """Which rows of a merged slice came from log records: their ``_hoodie_file_name`` is the
    file id (a base file's rows carry its file name); None where the column is not read."""
    if "_hoodie_file_name" not in data.column_names:
        return None
    names = data.column("_hoodie_file_name")
    if pa.types.is_dictionary(names.type):
        names = names.cast(names.type.value_type)
    return pc.fill_null(pc.invert(pc.ends_with(names, ".parquet")), False)


def _opened(table: MetaClient | str, options: dict[str, Any] | None) -> MetaClient:
    if isinstance(table, str):
        from hudi_core.table.meta_client import MetaClient

        return MetaClient.open(table, options=options)
    return table


def _rows(table: MetaClient, split: Split, batch_rows: int | None) -> Iterator[pa.Table]:
    """The split's rows before projection and filters: one table (``batch_rows`` None) or a stream."""
    ctx, fs = split.context, split.file_slice
    if ctx.query_type == "read_optimized" or not fs.log_files:
        # No log to merge: the base file's columns as they are, no key work at all.
        schema = pa.schema([ctx.schema.field(c) for c in ctx.needed])
        if fs.base_file is None:
            yield schema.empty_table()
            return
        by_id = ctx.history.file_columns(fs.base_file.instant) if ctx.history is not None else None
        if batch_rows is None:  # columns in long runs of a value read as their runs (align.decode)
            raw = read_parquet(table.storage, fs.base_file.path, columns=ctx.needed, as_dictionary=ctx.needed,
                               bytes_per_value=RUNS_BYTES_PER_VALUE, by_id=by_id,
                               source=fs.base_file.bootstrap_source)  # fmt: skip
            yield decoded(align_table(raw, schema, encoded=True))
            return
        source = fs.base_file.bootstrap_source
        for raw in iter_parquet(
            table.storage, fs.base_file.path, ctx.needed, batch_rows, by_id=by_id, source=source
        ):
            yield align_table(raw, schema)
        return
    since = (ctx.start or "") if ctx.query_type == "incremental" else None
    merge = dict(as_of=ctx.merge_as_of, timeline=ctx.commits, schema=ctx.merge_schema, since=since,
                 history=ctx.history)  # fmt: skip
    if batch_rows is None:
        yield merge_file_slice(table, fs, **merge)
    else:
        yield from merge_file_slice_batches(table, fs, batch_rows=batch_rows, **merge)


def _finished(ctx: ReadContext, parts: Iterator[pa.Table]) -> Iterator[pa.Table]:
    """Each part with the query's range, filters and projection applied."""
    expr = to_expression(ctx.filters)
    for data in parts:
        if ctx.query_type == "incremental":
            ct = data.column(COMMIT_TIME)
            mask = pc.and_(pc.greater(ct, ctx.start or ""), pc.less_equal(ct, ctx.end or ""))
            data = data.filter(pc.fill_null(mask, False))
        data = apply_filters(data, expr)
        yield _projected(data, ctx.output)


def _projected(data: pa.Table, output: pa.Schema) -> pa.Table:
    """``data``'s columns of ``output``, as its types. No column at all keeps the row count (a
    count's read): pyarrow's cast to an empty schema would drop the rows."""
    data = data.select(output.names)
    return data.cast(output) if output.names else data


def read_split_delta(
    table: MetaClient | str, split: Split, *, options: dict[str, Any] | None = None
) -> tuple[np.ndarray, pa.Table] | None:
    """A snapshot split with log files as what its merge changes in the base file (see
    :func:`hudi_core.read.merge.merge_delta`): the positions of the base rows dropped, and the
    rows added, exactly ``split.context.output`` and filtered by the query's filters. The base
    rows left (filtered by the caller), then the rows added, are :func:`read_split`'s rows.
    ``None`` where the merge is not told this way."""
    table = _opened(table, options)
    ctx = split.context
    if ctx.query_type != "snapshot":
        return None
    delta = merge_delta(
        table,
        split.file_slice,
        as_of=ctx.merge_as_of,
        timeline=ctx.commits,
        schema=ctx.merge_schema,
        history=ctx.history,
    )
    if delta is None:
        return None
    dropped, added = delta
    added = apply_filters(added, to_expression(ctx.filters))  # base rows: the caller filters them
    return dropped, _projected(added, ctx.output)
