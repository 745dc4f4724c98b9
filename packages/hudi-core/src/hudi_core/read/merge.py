"""Merging one file slice: base rows and log blocks per payload semantics (spec 8.2-8.4).

Vectorised: the log is folded block by block into a per-key state table (key, is-delete,
ordering value, row index into the concatenated log rows) with Arrow joins and ``if_else``;
the state is then combined with the base rows the same way. No Python work per record.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core import keymatch
from hudi_core.config.payload import Payload, java_order, order_type, ordering_values, stored_wins, untoasted
from hudi_core.errors import StorageError
from hudi_core.fs_view.model import FileSlice
from hudi_core.fs_view.view import CommitSet, VisibleTimeline
from hudi_core.read.align import align_table, decoded, encoded_like, identity, shared_runs
from hudi_core.read.by_id import blocks_by_id, file_columns
from hudi_core.read.files import iter_parquet, parquet_metadata, read_parquet
from hudi_core.read.keys import KEY_COLUMN, delete_keys, record_keys
from hudi_core.read.partial import merge_partial
from hudi_core.schema.avro_schema import META_FIELDS, meta_arrow_fields
from hudi_core.schema.fields import field_type
from hudi_core.schema.internal import SchemaHistory
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "IS_DELETED_FIELD",
    "BlockCounts",
    "CompactedSlice",
    "compact_file_slice",
    "merge_delta",
    "merge_file_slice",
    "merge_file_slice_batches",
    "merge_log_file",
    "slice_schema",
    "tells_delta",
    "valid_log_blocks",
]

log = logging.getLogger(__name__)

IS_DELETED_FIELD = "_hoodie_is_deleted"
_ROLLBACK_COMMAND = "0"
#: the meta columns of a log's rows that hold one value for long runs of rows (a block's
#: commit, the slice's file and partition): the merge holds each value once (``align.shared_runs``)
RUN_FIELDS = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name")


def slice_schema(
    table: MetaClient,
    as_of: str | None = None,
    *,
    timeline: ActiveTimeline | None = None,
    stored: bool = False,
) -> pa.Schema:
    """Meta columns then the table's data columns (as of an instant); ``stored``: the columns
    data files hold (a compaction's or clustering's output), without the partition columns of a
    ``drop.partition.columns`` table, which a query's answer has from the path."""
    data = table.schema(as_of, timeline=timeline)
    meta = meta_arrow_fields()
    names = {f.name for f in meta}
    if stored:
        names |= set(table.config.dropped_columns)
    fields = [f for f in (data or pa.schema([])) if f.name not in names]
    schema = pa.schema(meta + fields)
    return schema if stored else with_path_partition_columns(table, schema)


def with_path_partition_columns(table: MetaClient, schema: pa.Schema) -> pa.Schema:
    """``schema`` with the partition columns a reader takes from the partition path: for a table
    Apache Hudi wrote with ``hoodie.datasource.write.drop.partition.columns`` its writer left them
    out of the schema and the files, and its reader adds them, as strings, after the table's
    columns (the splits fill them in: ``read.splits``)."""
    cfg = table.config
    if not cfg.drops_partition_columns:
        return schema
    missing = [f for f in cfg.partition_fields if f not in schema.names]
    return pa.schema([*schema, *(pa.field(f, pa.string()) for f in missing)])


def merge_file_slice(
    table: MetaClient,
    file_slice: FileSlice,
    *,
    as_of: str | None = None,
    timeline: Timeline | VisibleTimeline | CommitSet | None = None,
    schema: pa.Schema | None = None,
    since: str | None = None,
    history: SchemaHistory | None = None,
) -> pa.Table:
    """The rows of a file slice as of an instant: its base file merged with its log blocks.

    ``since`` (an incremental query over ``(since, as_of]``) merges as Hudi's incremental
    relation does: log blocks of commits inside the range, and the base rows of the row groups
    that Spark's parquet reader does not skip for the range filter Hudi pushes down (see
    :func:`_base_rows_in_range`); the query's range filter then drops what nothing in the range
    changed. So a log record meets the base row of a file a commit of the range wrote (a
    compaction), not one of a file written before the range (it matters for payloads that
    honour ordering values or fill fields, not for OverwriteWithLatest).

    Returns the meta columns then the table's columns (``schema``, default the table's schema
    as of ``as_of``). Compaction merges batch by batch (:func:`compact_file_slice`); the columns
    it filtered as dictionary arrays (:func:`_encodable`) stay dictionaries, the log's rows
    encoded alike, for a parquet writer that stores them as the strings.

    A key stored twice in the base file (``insert`` keeps duplicates) is merged as Java does:
    the log record goes into the first copy and later copies pass through unchanged (Hudi's
    merge-on-read iterator takes each log record once, and Apache Hudi 0.15's compaction gives
    the same rows).

    ``history`` (:meth:`MetaClient.schema_history`): the files hold the columns by id, under
    the names of the schema each was written with (Hudi's schema on read renamed some).
    """
    schema = schema if schema is not None else slice_schema(table, as_of)
    blocks = _slice_blocks(table, file_slice, as_of, timeline, since, history=history)
    encoded = _encodable(table, schema) if blocks else ()
    base = _base_in_range(
        _read_base(table, file_slice, schema, encoded, history=history),
        _base_rows_in_range(table, file_slice, since),
    )
    if not blocks:
        return base
    return _merge(table, base, blocks, schema)


def merge_log_file(
    table: MetaClient,
    rows: pa.Table,
    file_slice: FileSlice,
    log_path: str,
    *,
    as_of: str | None = None,
    history: SchemaHistory | None = None,
) -> pa.Table:
    """``rows``, a file slice's rows before one of its log files (its base merged with the logs
    before it, :func:`merge_file_slice`), with that log file's records merged in as into a base
    file's rows: what Apache Hudi's CDC query takes a log file to have changed (its
    ``HoodieCDCRDD`` folds the log's records by key, then combines each with the image before it
    by the payload). ``file_slice`` holds the log file. A snapshot folds every log's records
    first, then meets the base rows: where the payload orders log records but lets a log record
    replace a base row whatever its ordering value (OverwriteWithLatest), a later log's older
    record changes the CDC answer and not the snapshot (docs/interop.md, Hudi quirks)."""
    blocks = _slice_blocks(table, file_slice, as_of, None, None, history=history)
    blocks = [b for b in blocks if b.file_path == log_path]
    if not blocks:
        return rows
    return _merge(table, rows, blocks, slice_schema(table, as_of))


def compact_file_slice(
    table: MetaClient,
    file_slice: FileSlice,
    *,
    batch_rows: int,
    as_of: str | None = None,
    timeline: Timeline | VisibleTimeline | CommitSet | None = None,
    schema: pa.Schema | None = None,
    history: SchemaHistory | None = None,
) -> CompactedSlice:
    """:func:`merge_file_slice`'s rows as compaction writes them, as a stream of tables
    (:class:`CompactedSlice`): the log is folded first, then the base file is read
    ``batch_rows`` rows at a time, each batch's surviving rows given at once, and the log's rows
    come last, so a compaction holds the log's rows and a batch of the base file, never the
    slice. A log record meets the first base copy of its key only, as in a snapshot read (Apache
    Hudi 0.15's compaction keeps a duplicated key's later copies as they are), and the columns
    the merge only carries stay dictionary arrays where the file encodes them
    (:func:`_encodable`), the log's rows encoded alike."""
    return CompactedSlice(table, file_slice, batch_rows, as_of, timeline, schema, history)


class CompactedSlice:
    """The rows of one compaction operation, iterated once: at least one table (empty when the
    merge leaves no row), the kept base rows in file order, then the log's.

    After the last table, :meth:`added` gives the keys the merge adds to the base file's, in log
    order, when it removed none. The new file then holds the base file's keys and those, and its
    bloom filter is the base file's continued with them
    (``write.handles.parquet_out.GrowingFooter``): the filter Apache Hudi's merge handle builds,
    which writes the base file's rows in place, then the new keys. (The rows here are the kept
    base rows, then the log's; a filter answers the same whatever the order its keys came in.)"""

    def __init__(
        self, table: MetaClient, file_slice: FileSlice, batch_rows: int, as_of: str | None,
        timeline: Timeline | VisibleTimeline | CommitSet | None, schema: pa.Schema | None,
        history: SchemaHistory | None = None,
    ) -> None:  # fmt: skip
        self._args = (table, file_slice, batch_rows, as_of, timeline, schema, history)
        self._tally = _Tally()
        self._rows = 0
        self._done = False

    def __iter__(self) -> Iterator[pa.Table]:
        table, file_slice, batch_rows, as_of, timeline, schema, history = self._args
        for piece in _slice_pieces(table, file_slice, batch_rows=batch_rows, as_of=as_of, timeline=timeline,
                                   schema=schema, since=None, dictionaries=True, tally=self._tally,
                                   history=history):  # fmt: skip
            if piece.num_rows:
                self._rows += piece.num_rows
                yield piece
        if not self._rows:  # a file with no row (every record deleted) is still the new base file
            assert self._tally.schema is not None
            yield self._tally.schema.empty_table()
        self._done = True

    def added(self) -> pa.Array | None:
        """The keys the log adds, in log order; None when a row was left out, and for a
        partial update payload (which fills base rows field by field)."""
        tally = self._finished("added")
        if _is_partial(self._args[0]):
            return None
        added = tally.probe.inserted_keys() if tally.probe is not None else pa.array([], pa.string())
        return added if self._rows == tally.base_rows + len(added) else None

    def block_counts(self) -> BlockCounts:
        """The log blocks the merge read (after its last table): the log files are read once."""
        return self._finished("block_counts").counts

    def base_footer(self) -> dict[bytes, bytes] | None:
        """The base file's footer keys (its bloom filter, min/max keys), as the merge read them
        (after its last table): the footer is read once. None without a base file."""
        footers = self._finished("base_footer").base_footer
        return footers[0].metadata if footers else None

    def _finished(self, what: str) -> _Tally:
        """What the merge met, once it has given its last table."""
        if not self._done:
            raise RuntimeError(f"CompactedSlice.{what}() before its last table")
        return self._tally


class _Tally:
    """What :func:`_slice_pieces` met on its way: base rows read, the probe, the rows' schema,
    the log blocks."""

    def __init__(self) -> None:
        self.counts = BlockCounts()
        self.base_rows = 0
        #: the base file's footer, once the merge opened it
        self.base_footer: list[pq.FileMetaData] = []
        self.probe: _Probe | None = None
        #: the rows' schema (the last base batch's: its dictionary columns), set before any row
        self.schema: pa.Schema | None = None


def merge_file_slice_batches(
    table: MetaClient,
    file_slice: FileSlice,
    *,
    batch_rows: int,
    as_of: str | None = None,
    timeline: Timeline | VisibleTimeline | CommitSet | None = None,
    schema: pa.Schema | None = None,
    since: str | None = None,
    history: SchemaHistory | None = None,
) -> Iterator[pa.Table]:
    """:func:`merge_file_slice`'s rows (a snapshot's: the first copy of a key meets its log
    record), the same rows in the same order, as a stream: the log is folded first, then the base
    file is read ``batch_rows`` rows at a time, each batch's surviving rows yielded at once, and
    the rows the log adds come last. Memory holds the log's rows and one base batch, never the
    slice, besides the record keys of up to 16 batches' base rows, probed against the log's keys
    at once (:class:`_KeyPositions`); a partial update payload, which fills base rows field by
    field, merges the slice whole."""
    for piece in _slice_pieces(table, file_slice, batch_rows=batch_rows, as_of=as_of, timeline=timeline,
                               schema=schema, since=since, dictionaries=False, tally=_Tally(),
                               history=history):  # fmt: skip
        if piece.num_rows:
            yield piece


def _slice_pieces(
    table: MetaClient, file_slice: FileSlice, *, batch_rows: int, as_of: str | None,
    timeline: Timeline | VisibleTimeline | CommitSet | None, schema: pa.Schema | None, since: str | None,
    dictionaries: bool, tally: _Tally, history: SchemaHistory | None,
) -> Iterator[pa.Table]:  # fmt: skip
    """The merged rows of a slice batch by batch (some may be empty), for
    :func:`merge_file_slice_batches` and :class:`CompactedSlice`; ``tally`` learns the base rows
    read, the probe and the rows' schema. ``dictionaries``: the columns read as dictionaries stay
    dictionaries, the log's rows encoded alike (compaction's writer stores them as strings)."""
    schema = tally.schema = schema if schema is not None else slice_schema(table, as_of)
    blocks = _slice_blocks(table, file_slice, as_of, timeline, since, tally.counts, history=history)
    in_range = _base_rows_in_range(table, file_slice, since)
    if blocks and _is_partial(table):
        base = _base_in_range(_read_base(table, file_slice, schema, history=history), in_range)
        yield _merge(table, base, blocks, schema)
        return
    probe, encoded = None, _encodable(table, schema) if blocks or dictionaries else ()
    if blocks:
        ord_field, ord_type = _ordering_field(table.config, schema)
        logs, state = _log_state(table, blocks, schema, ord_field, ord_type)
        probe = tally.probe = _Probe(table, logs, state, ord_field, ord_type)
    if file_slice.base_file is not None:
        keyed = probe is not None and probe.state.num_rows and _stored_keys(table, schema)
        positions: _KeyPositions | None = None
        offset = 0
        path = file_slice.base_file.path
        batches = iter_parquet(table.storage, path, schema.names, batch_rows, as_dictionary=encoded,
                               footer=tally.base_footer, by_id=file_columns(history, file_slice.base_file),
                               source=file_slice.base_file.bootstrap_source)  # fmt: skip
        for raw in batches:
            start, offset = offset, offset + raw.num_rows
            rows = None if in_range is None else in_range[start:offset]
            base = _base_in_range(align_table(raw, schema, encoded=bool(encoded)), rows)
            tally.base_rows += base.num_rows
            tally.schema = base.schema
            if probe is not None:
                pos = None
                # the first batch is probed on its own keys (a base file of one batch: its key
                # column is read once); a file of more is probed many batches at a time
                if keyed and start:
                    if positions is None:
                        positions = _KeyPositions(table, path, probe, batch_rows * _PROBE_BATCHES)
                        positions.take(start)
                    pos = positions.take(raw.num_rows)
                    pos = pos if rows is None else pos[rows]
                base = _kept(base, probe.keep(base, pos))
                base = base if dictionaries else decoded(base)
            yield base
    if probe is not None:
        taken = _without_deleted(probe.taken())
        yield encoded_like(taken, tally.schema) if dictionaries else taken


# -- log block selection (8.4) ---------------------------------------------------------------------


class BlockCounts:
    """The log blocks a scan met (Hudi's compaction write stats: totalLogBlocks,
    totalRollbackBlocks for command blocks, totalCorruptLogBlock), the block it stopped at too."""

    def __init__(self) -> None:
        self.blocks = self.rollbacks = self.corrupt = 0


def valid_log_blocks(
    table: MetaClient, file_slice: FileSlice, *, as_of: str | None, visible: VisibleTimeline | CommitSet,
    counts: BlockCounts | None = None,
) -> list[Any]:  # fmt: skip
    """Data and delete blocks of the slice's logs that count, oldest first (Java's scanner):
    stop at the first block newer than ``as_of``, skip blocks of uncommitted instants,
    let rollback command blocks cancel the blocks of their target instant, drop corrupt ones.
    ``counts`` learns the blocks met on the way."""
    from hudi_core.log.format import DATA_BLOCK_TYPES, BlockType, HeaderKey
    from hudi_core.log.reader import read_log_file

    stack: list[Any] = []
    for lf in file_slice.log_files:
        for block in read_log_file(table.storage, lf.path):
            kind = block.block_type
            if counts is not None:
                counts.blocks += 1
                counts.rollbacks += kind == BlockType.COMMAND
                counts.corrupt += kind == BlockType.CORRUPT
            if kind == BlockType.CORRUPT:
                stack.append(block)
                continue
            instant = block.instant_time or ""
            if as_of is not None and instant > as_of:
                return [b for b in stack if b.block_type != BlockType.CORRUPT]
            if kind == BlockType.COMMAND:
                if block.header.get(HeaderKey.COMMAND_BLOCK_TYPE, _ROLLBACK_COMMAND) == _ROLLBACK_COMMAND:
                    # every earlier block of the target instant goes, wherever it sits in the
                    # slice (Hudi 0.15's removeIf): with concurrent writers another instant's
                    # blocks often come between a failed write's blocks and its rollback block,
                    # and once the failed instant is older than the active timeline nothing but
                    # this block tells it from an archived, committed one
                    target = block.target_instant_time
                    stack = [
                        b for b in stack if b.block_type != BlockType.CORRUPT and b.instant_time != target
                    ]
                continue
            if kind not in DATA_BLOCK_TYPES and kind != BlockType.DELETE:
                log.warning("skipping %s block in %s: not readable here", kind.name, lf.path)
                continue
            if not visible.is_committed(instant):
                continue  # uncommitted block from a failed write
            stack.append(block)
    return [b for b in stack if b.block_type != BlockType.CORRUPT]


# -- merging ---------------------------------------------------------------------------------------


def _read_base(
    table: MetaClient, file_slice: FileSlice, schema: pa.Schema, encoded: Collection[str] = (),
    *, history: SchemaHistory | None = None,
) -> pa.Table:  # fmt: skip
    """The base file's rows in ``schema``; the columns of ``encoded`` that the file holds as
    dictionary indices stay dictionary arrays (see :func:`_encodable`)."""
    base_file = file_slice.base_file
    if base_file is None:
        return schema.empty_table()
    raw = read_parquet(table.storage, base_file.path, columns=schema.names, as_dictionary=encoded,
                       by_id=file_columns(history, base_file), source=base_file.bootstrap_source)  # fmt: skip
    return align_table(raw, schema, encoded=bool(encoded))


def _encodable(table: MetaClient, schema: pa.Schema) -> frozenset[str]:
    """The columns a merge only carries (never compares): the base rows it keeps are filtered
    while they are the file's dictionary indices, then decoded (:func:`decoded`): filtering a
    trips-like file's 786k kept rows of 982k took 20% less CPU so (the meta columns' commit
    time, partition path and file name are dictionary-encoded in every base file). Not for a
    partial update payload, whose merge fills base rows field by field."""
    if _is_partial(table):
        return frozenset()
    config = table.config
    position = _position_payload(table)
    compared = {
        KEY_COLUMN,
        IS_DELETED_FIELD,
        config.ordering_field,
        position.position_field if position else None,
    }
    compared |= {f.split(".")[0] for f in config.record_key_fields}
    return frozenset(f.name for f in schema if f.name not in compared)


def _slice_blocks(table: MetaClient, file_slice: FileSlice, as_of: str | None,
                  timeline: Timeline | VisibleTimeline | CommitSet | None, since: str | None,
                  counts: BlockCounts | None = None, *, history: SchemaHistory | None = None,
                  ) -> list[Any]:  # fmt: skip
    """The log blocks a merge of the slice applies (an incremental merge: those after ``since``),
    their records under the query's names (``history``: see :func:`merge_file_slice`)."""
    if not file_slice.log_files:
        return []
    blocks = valid_log_blocks(
        table, file_slice, as_of=as_of, visible=_visible(table, timeline), counts=counts
    )
    blocks = blocks if since is None else [b for b in blocks if (b.instant_time or "") > since]
    return blocks_by_id(blocks, history)


def _base_rows_in_range(table: MetaClient, file_slice: FileSlice, since: str | None) -> np.ndarray | None:
    """Which base rows an incremental merge over ``(since, ...]`` takes (None: every row, as a
    snapshot does). Hudi 0.15's incremental relation hands the range filter on
    ``_hoodie_commit_time`` to Spark's parquet reader as a pushed-down filter, which skips whole
    row groups by their statistics and filters no single row: every row of a row group whose
    greatest commit time is after ``since`` takes part in the merge, none of the others. A base
    file written before the range is skipped whole; one a compaction in the range wrote takes
    part with its rows of older commits (checked against Apache Hudi: tests/interop/
    test_incremental_merges.py)."""
    if since is None or file_slice.base_file is None:
        return None
    meta = parquet_metadata(table.storage, file_slice.base_file.path)
    names = meta.schema.names
    if META_FIELDS[0] not in names:
        return None
    col = names.index(META_FIELDS[0])
    keep = []
    for i in range(meta.num_row_groups):
        stats = meta.row_group(i).column(col).statistics
        known = stats is not None and stats.has_min_max
        top = stats.max if known else None
        keep.append(top is None or (top.decode() if isinstance(top, bytes) else str(top)) > since)
    if all(keep):
        return None
    return np.repeat(np.array(keep), [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])


def _base_in_range(base: pa.Table, rows: np.ndarray | None) -> pa.Table:
    return base if rows is None or not base.num_rows else base.filter(pa.array(rows))


def _payload(table: MetaClient, *, warn: bool = False) -> Payload:
    """The table's payload class; one this package does not know is merged as
    OverwriteWithLatestAvroPayload (``warn``: saying so). A partial update never reaches the
    merges here: :func:`hudi_core.read.partial.merge_partial` merges it."""
    payload = Payload.named(table.config.payload_class)
    if payload is not None:
        return payload
    if warn:
        name = str(table.config.payload_class).rsplit(".", 1)[-1]
        log.warning("payload class %s is merged like OverwriteWithLatestAvroPayload", name)
    return Payload.OVERWRITE_WITH_LATEST


def _position_payload(table: MetaClient) -> Payload | None:
    """The table's payload where a source position, not the ordering value, decides between a
    log record and the base row (Debezium's)."""
    payload = _payload(table)
    return payload if payload.position_field else None


def _java_class(dt: pa.DataType) -> str:
    """The Java class Hudi would hold an ordering value of this Arrow type as (delete rule)."""
    if pa.types.is_integer(dt):
        return "Long" if dt.bit_width == 64 else "Integer"
    if pa.types.is_timestamp(dt):
        return "Long"
    if pa.types.is_date(dt):
        return "Integer"
    if pa.types.is_string(dt) or pa.types.is_large_string(dt):
        return "String"
    return str(dt)


def _merge(table: MetaClient, base: pa.Table, blocks: list[Any], schema: pa.Schema) -> pa.Table:
    config = table.config
    ord_field, ord_type = _ordering_field(config, schema)
    if _is_partial(table):
        return merge_partial(table, base, blocks, schema, ord_field=ord_field, ord_type=ord_type,
                             apply_deletes=_apply_deletes, drop_deleted=_without_deleted)  # fmt: skip
    logs, state = _log_state(table, blocks, schema, ord_field, ord_type)
    keep_base, taken = _combine_with_base(table, base, logs, state, ord_field, ord_type)
    kept = decoded(_kept(base, keep_base))
    taken = shared_runs(_without_deleted(taken), (*RUN_FIELDS, *config.partition_fields))
    parts = [p for p in (kept, taken) if p.num_rows]
    return pa.concat_tables(parts) if parts else kept.schema.empty_table()


def _visible(
    table: MetaClient, timeline: Timeline | VisibleTimeline | CommitSet | None
) -> VisibleTimeline | CommitSet:
    if isinstance(timeline, (VisibleTimeline, CommitSet)):
        return timeline
    return VisibleTimeline(timeline if timeline is not None else table.timeline)


def _ordering_field(config: Any, schema: pa.Schema) -> tuple[str | None, pa.DataType]:
    """The ordering field and its type in ``schema`` (int32 when the table has none)."""
    field = config.ordering_field
    return field, field_type(schema, field) or pa.int32()


def tells_delta(table: MetaClient) -> bool:
    """Whether :func:`merge_delta` tells this table's merges: not where the log's rows take
    values from the base rows they replace (partial updates, OverwriteNonDefaults, Postgres
    Debezium's TOASTed fields)."""
    payload = _payload(table)
    return not (payload.fills_nulls or payload.keeps_toasted)


def _is_partial(table: MetaClient) -> bool:
    return Payload.named(table.config.payload_class) is Payload.PARTIAL_UPDATE


def _kept(base: pa.Table, keep: np.ndarray) -> pa.Table:
    """The rows of ``base`` where ``keep``; a column whose arrays another column shares (a base
    file's ``uuid`` and ``_hoodie_record_key``, see ``read.files.same_columns``) is filtered once
    and stays shared."""
    if keep.all():
        return base
    mask = pa.array(keep)
    done: dict[tuple[Any, ...], pa.ChunkedArray] = {}
    out = []
    for column in base.columns:
        same = identity(column)
        if same not in done:
            done[same] = column.filter(mask)
        out.append(done[same])
    return pa.Table.from_arrays(out, schema=base.schema)


def _log_state(
    table: MetaClient, blocks: list[Any], schema: pa.Schema, ord_field: str | None, ord_type: pa.DataType
) -> tuple[pa.Table, pa.Table]:
    """The log folded into the rows it holds (``schema``) and one state row per key (key,
    deleted, ordering value, row into those rows)."""
    from hudi_core.log.format import BlockType

    config = table.config
    first = _payload(table).ties_keep_first
    # Decode every block once, in log order; data blocks become (key, ordering, log row) events.
    events: list[tuple[bool, pa.Table]] = []  # (is_delete, events)
    log_tables: list[pa.Table] = []
    n_log = 0
    for block in blocks:
        if block.block_type == BlockType.DELETE:
            events.append((True, delete_keys(block.deletes(), config)))
            continue
        records = align_table(block.records(), schema)
        if records.num_rows == 0:
            continue
        rows = _arange(n_log, n_log + records.num_rows)
        n_log += records.num_rows
        log_tables.append(records)
        keys = pc.cast(record_keys(records, config), pa.string())
        events.append(
            (
                False,
                pa.table(
                    {"key": keys, "w_ord": ordering_values(records, ord_field, ord_type), "w_row": rows}
                ),
            )
        )
    logs = pa.concat_tables(log_tables) if log_tables else schema.empty_table()
    if _single_pass(events):
        # Without deletes, and with ordering values all set (or all absent), folding block by
        # block equals one "greatest (ordering, arrival) per key" over all log records.
        batch = _last_per_key(pa.concat_tables([e for _, e in events]), first=first)
        state = pa.table({
            "key": batch.column("key"),
            "s_del": pa.repeat(pa.scalar(False), batch.num_rows),
            "s_ord": batch.column("w_ord"),
            "s_row": batch.column("w_row"),
        })  # fmt: skip
    else:
        state = _empty_state(ord_type)
        for is_delete, ev in events:
            state = (
                _apply_deletes(state, ev, ord_type)
                if is_delete
                else _apply_data(state, _last_per_key(ev, first=first), first=first)
            )
    return logs, state


def merge_delta(
    table: MetaClient,
    file_slice: FileSlice,
    *,
    as_of: str | None = None,
    timeline: Timeline | VisibleTimeline | CommitSet | None = None,
    schema: pa.Schema | None = None,
    history: SchemaHistory | None = None,
) -> tuple[np.ndarray, pa.Table] | None:
    """A snapshot merge of a file slice told as what it changes in the base file: the positions
    of the base rows it drops (replaced or deleted by a log record) and the rows the log adds.
    The base rows left, in file order, then the log rows are exactly :func:`merge_file_slice`'s
    rows; only the key and ordering columns of the base file are read. ``None`` where the merge
    is not told this way (:func:`tells_delta`)."""
    if not tells_delta(table):
        return None
    schema = schema if schema is not None else slice_schema(table, as_of)
    visible = _visible(table, timeline)
    config = table.config
    ord_field, ord_type = _ordering_field(config, schema)
    position = _position_payload(table)
    narrow = {KEY_COLUMN, ord_field or KEY_COLUMN, position.position_field if position else KEY_COLUMN}
    if not config.populate_meta_fields:
        narrow |= {f.split(".")[0] for f in config.record_key_fields} | set(config.partition_fields)
    base = _read_base(table, file_slice, pa.schema([f for f in schema if f.name in narrow]), history=history)
    blocks = blocks_by_id(valid_log_blocks(table, file_slice, as_of=as_of, visible=visible), history)
    keep_base = np.ones(base.num_rows, dtype=bool)
    taken = schema.empty_table()
    if blocks:
        logs, state = _log_state(table, blocks, schema, ord_field, ord_type)
        keep_base, taken = _combine_with_base(table, base, logs, state, ord_field, ord_type)
        taken = _without_deleted(taken)
    return np.flatnonzero(~keep_base), taken


def _without_deleted(merged: pa.Table) -> pa.Table:
    """The log's rows without those flagged ``_hoodie_is_deleted`` (combineAndGetUpdateValue and
    getInsertValue give nothing for them). A base row keeps its flag as stored: Apache Hudi's
    row writer stores flagged records from a bulk_insert, and its readers return them until a
    log record of their key replaces them."""
    if IS_DELETED_FIELD in merged.column_names:
        merged = merged.filter(pc.invert(pc.fill_null(merged.column(IS_DELETED_FIELD), False)))
    return merged


def _single_pass(events: list[tuple[bool, pa.Table]]) -> bool:
    if not events or any(is_delete for is_delete, _ in events):
        return False
    nulls = sum(e.column("w_ord").null_count for _, e in events)
    return nulls == 0 or nulls == sum(e.num_rows for _, e in events)


def _arange(start: int, stop: int) -> pa.Array:
    return pa.array(np.arange(start, stop, dtype=np.int64))


def _empty_state(ord_type: pa.DataType) -> pa.Table:
    return pa.table({
        "key": pa.array([], pa.string()),
        "s_del": pa.array([], pa.bool_()),
        "s_ord": pa.array([], order_type(ord_type)),
        "s_row": pa.array([], pa.int64()),
    })  # fmt: skip


def _last_per_key(batch: pa.Table, *, first: bool = False) -> pa.Table:
    """Per key the row with the greatest (ordering, arrival), or with ``first`` the earliest of
    the greatest ordering (FirstValueAvroPayload): preCombine within one block. The
    rows of keys met once stay as they are (in order); only the others are sorted (a slice's log
    mostly holds each key once: five upserts of the 10M-row trips table, ~250k records)."""
    if batch.num_rows <= 1:
        return batch
    ids = keymatch.group_ids(batch.column("key"))
    repeated = np.bincount(ids, minlength=len(ids))[ids] > 1
    if not repeated.any():  # every key once
        return batch
    rows = np.flatnonzero(repeated)
    # Grouping needs equal keys together, not string order: sort on group ids (integers).
    repeats = pa.table(
        {"k": ids[rows], "o": batch.column("w_ord").take(rows), "r": batch.column("w_row").take(rows)}
    )
    arrival = "descending" if first else "ascending"
    order = pc.sort_indices(
        repeats, sort_keys=[("k", "ascending"), ("o", "ascending", "at_start"), ("r", arrival)]
    ).to_numpy()
    sorted_ids = ids[rows[order]]
    last = np.append(sorted_ids[:-1] != sorted_ids[1:], True)
    return batch.take(np.concatenate([np.flatnonzero(~repeated), rows[order[last]]]))


def _gt(a: Any, b: Any) -> Any:
    """a > b, false where either side is null (null ordering never wins a comparison)."""
    return pc.fill_null(pc.greater(a, b), False)


def _ge(a: Any, b: Any) -> Any:
    """a >= b, false where either side is null."""
    return pc.fill_null(pc.greater_equal(a, b), False)


def _ge_or_unordered(a: Any, b: Any) -> Any:
    """a >= b, true where neither side has an ordering value (a table without ordering field:
    every pair ties, as :func:`_last_per_key` takes it)."""
    return pc.or_(_ge(a, b), pc.and_(pc.is_null(a), pc.is_null(b)))


def _apply_data(state: pa.Table, block: pa.Table, *, first: bool = False) -> pa.Table:
    """preCombine(state, record): after a delete the record wins; else greater ordering, tie ->
    later (``first``: tie -> the state's, FirstValueAvroPayload)."""
    j = state.join(block, keys="key", join_type="full outer")
    has_s = pc.is_valid(j.column("s_del"))
    has_w = pc.is_valid(j.column("w_row"))
    s_del = pc.fill_null(j.column("s_del"), False)
    older_wins = _ge_or_unordered if first else _gt
    keep_s = pc.and_(has_s, pc.and_(pc.invert(s_del), older_wins(j.column("s_ord"), j.column("w_ord"))))
    take_w = pc.and_(has_w, pc.invert(keep_s))
    return pa.table({
        "key": j.column("key"),
        "s_del": pc.if_else(take_w, False, j.column("s_del")),
        "s_ord": pc.if_else(take_w, j.column("w_ord"), j.column("s_ord")),
        "s_row": pc.if_else(take_w, j.column("w_row"), j.column("s_row")),
    })  # fmt: skip


def _apply_deletes(state: pa.Table, deletes: pa.Table, ord_type: pa.DataType) -> pa.Table:
    """Delete records in arrival order; a key deleted twice in one block is applied in rounds."""
    if deletes.num_rows == 0:
        return state
    d_ord = deletes.column("_ordering_val")
    comparable = _java_class(d_ord.type) == _java_class(ord_type) and not pa.types.is_null(d_ord.type)
    d_ord = (
        java_order(pc.cast(d_ord, ord_type))
        if comparable
        else pa.nulls(deletes.num_rows, order_type(ord_type))
    )
    natural = pc.fill_null(deletes.column("_ordering_natural"), False)
    events = pa.table({
        "key": pc.cast(deletes.column("_hoodie_record_key"), pa.string()),
        "d_ord": d_ord,
        "d_nat": natural,
        "d_seq": _arange(0, deletes.num_rows),
    })  # fmt: skip
    while events.num_rows:
        order = pc.sort_indices(events, sort_keys=[("key", "ascending"), ("d_seq", "ascending")])
        events = events.take(order)
        keys = events.column("key").combine_chunks()
        first = pa.concat_arrays(
            [pa.array([True]), pc.not_equal(keys.slice(1), keys.slice(0, len(keys) - 1))]
        )
        state = _apply_delete_round(state, events.filter(first))
        events = events.filter(pc.invert(first))
    return state


_STATE = ("key", "s_del", "s_ord", "s_row")


def _apply_delete_round(state: pa.Table, round_: pa.Table) -> pa.Table:
    j = state.join(round_, keys="key", join_type="full outer")
    has_s = pc.is_valid(j.column("s_del"))
    has_d = pc.is_valid(j.column("d_seq"))
    # Java keeps the previous record only for a non-natural delete with a smaller ordering value.
    choose_prev = pc.and_(
        has_s,
        pc.and_(pc.invert(pc.fill_null(j.column("d_nat"), False)), _gt(j.column("s_ord"), j.column("d_ord"))),
    )
    take_d = pc.and_(has_d, pc.invert(choose_prev))
    carried = {n: j.column(n) for n in state.column_names if n not in _STATE}  # a richer state's columns
    return pa.table({
        "key": j.column("key"),
        "s_del": pc.if_else(take_d, True, j.column("s_del")),
        "s_ord": pc.if_else(take_d, j.column("d_ord"), j.column("s_ord")),
        "s_row": pc.if_else(take_d, pa.scalar(None, pa.int64()), j.column("s_row")),
        **carried,
    })  # fmt: skip


def _combine_with_base(
    table: MetaClient,
    base: pa.Table,
    logs: pa.Table,
    state: pa.Table,
    ord_field: str | None,
    ord_type: pa.DataType,
) -> tuple[np.ndarray, pa.Table]:
    """combineAndGetUpdateValue(base, log) per key; log-only keys are inserts: which base rows
    stay (a mask) and the log rows taken, in log order (:class:`_Probe` over one batch)."""
    probe = _Probe(table, logs, state, ord_field, ord_type)
    keep = probe.keep(base)
    return keep, probe.taken()


class _Probe:
    """combineAndGetUpdateValue(base, log) per key, base batch by base batch, in file order:
    :meth:`keep` tells which rows of a batch stay, :meth:`taken` (after the last batch) the log
    rows taken, in log order; log-only keys are inserts.

    Only keys present in the log are merged: base rows are probed against the (small) log
    state with a hash look-up, untouched base rows pass through by a boolean mask. A key's
    later copies in the base (in this batch or a later one) pass through untouched."""

    def __init__(self, table: MetaClient, logs: pa.Table, state: pa.Table, ord_field: str | None,
                 ord_type: pa.DataType) -> None:  # fmt: skip
        self.config = table.config
        self.logs, self.state = logs, state
        self.ord_field, self.ord_type = ord_field, ord_type
        payload = _payload(table, warn=True)
        #: the ordering value decides against the base row (combineAndGetUpdateValue)
        self.event_time = payload.honours_ordering_on_update
        #: the base row keeps a tie of ordering values (FirstValueAvroPayload)
        self.base_wins = _ge if payload.ties_keep_first else _gt
        #: Debezium's: the base row and the log record compare source positions
        self.position = payload if payload.position_field else None
        n_state = state.num_rows
        self.s_keys = state.column("key").combine_chunks()
        self.s_del = pc.fill_null(state.column("s_del"), False).to_numpy(zero_copy_only=False)
        self.has_base = np.zeros(n_state, dtype=bool)  # the key met a base row
        self.log_wins = np.zeros(n_state, dtype=bool)  # over the base row of the key (its first copy)
        #: OverwriteNonDefaults: the base rows log rows replace, with those log rows' numbers
        self.fills = payload.fills_nulls
        #: PostgresDebezium: a log row's TOASTed placeholders take the values of the base row it replaces
        self.toasted = payload.keeps_toasted
        self._replaced: list[tuple[np.ndarray, pa.Table]] = []

    def positions(self, base: pa.Table) -> np.ndarray:
        """Each base row's row in the log state, -1 where the log has no record of its key."""
        return keymatch.index_in(pc.cast(record_keys(base, self.config), pa.string()), self.s_keys)

    def keep(self, base: pa.Table, pos: np.ndarray | None = None) -> np.ndarray:
        """Which rows of ``base`` stay; ``pos``: their :meth:`positions`, when already known."""
        keep_base = np.ones(base.num_rows, dtype=bool)
        if not base.num_rows or not self.state.num_rows:
            return keep_base
        pos = self.positions(base) if pos is None else pos
        matched = pos >= 0
        if matched.any():
            # only the first base copy of a key meets its log record (duplicates are rare)
            rows = np.flatnonzero(matched)
            met = pos[rows]
            # a count per log key tells the common case (no key twice, none met before) without
            # the sort np.unique does
            if self.has_base[met].any() or np.bincount(met, minlength=len(self.has_base)).max() > 1:
                _, first = np.unique(met, return_index=True)
                first = first[~self.has_base[met[first]]]  # not met in an earlier batch
                if len(first) < len(rows):
                    matched = np.zeros_like(matched)
                    matched[rows[first]] = True
        if not matched.any():
            return keep_base
        m_pos = pos[matched]
        over = np.zeros(len(m_pos), dtype=bool)
        if self.event_time:
            b_ord = pc.filter(ordering_values(base, self.ord_field, self.ord_type), pa.array(matched))
            s_ord = pc.take(self.state.column("s_ord"), pa.array(m_pos))
            gt = self.base_wins(b_ord, s_ord)
            over = ~self.s_del[m_pos] & np.asarray(gt.to_numpy(zero_copy_only=False), dtype=bool)
        if self.position is not None:
            over = ~self.s_del[m_pos] & self._base_position_wins(base, matched, m_pos)
        keep_base[matched] = over
        self.has_base[m_pos] = True
        self.log_wins[m_pos[~over]] = True
        if self.fills or self.toasted:
            filled = ~over & ~self.s_del[m_pos]
            if filled.any():
                log_rows = pc.take(self.state.column("s_row"), pa.array(m_pos[filled]))
                base_rows = np.flatnonzero(matched)[filled]
                self._replaced.append((log_rows.to_numpy(), decoded(base.take(pa.array(base_rows)))))
        return keep_base

    def _base_position_wins(self, base: pa.Table, matched: np.ndarray, m_pos: np.ndarray) -> np.ndarray:
        """Per matched base row, whether its source position beats its key's log record's
        (``shouldPickCurrentRecord``); a base row without one loses."""
        assert self.position is not None
        field = self.position.position_field
        if field not in base.column_names or field not in self.logs.column_names:
            return np.zeros(len(m_pos), dtype=bool)
        b_pos = base.column(field).combine_chunks().filter(pa.array(matched))
        rows = pc.take(self.state.column("s_row"), pa.array(m_pos))  # null for a delete
        l_pos = self.logs.column(field).combine_chunks().take(rows)
        return np.asarray(stored_wins(self.position, b_pos, l_pos).to_numpy(zero_copy_only=False), dtype=bool)

    def inserted_keys(self) -> pa.Array:
        """After the last :meth:`keep`: the keys the log adds (no base row), in log order."""
        new = ~self.s_del & ~self.has_base
        if not new.any():
            return pa.array([], pa.string())
        rows = pc.filter(self.state.column("s_row"), pa.array(new))
        keys = pc.filter(self.state.column("key"), pa.array(new))
        return pc.take(keys, pc.sort_indices(rows)).combine_chunks().cast(pa.string())

    def taken(self) -> pa.Table:
        take_log = ~self.s_del & (~self.has_base | self.log_wins)
        if not take_log.any():
            return self.logs.schema.empty_table()
        rows = pc.filter(self.state.column("s_row"), pa.array(take_log)).to_numpy(zero_copy_only=False)
        # each log row once, in log order: a filter (or nothing) where a take gathered row by row
        keep = np.zeros(self.logs.num_rows, dtype=bool)
        keep[rows] = True
        taken = self.logs if keep.all() else self.logs.filter(pa.array(keep))
        return self._filled(taken, keep) if self._replaced else taken

    def _filled(self, taken: pa.Table, keep: np.ndarray) -> pa.Table:
        """``taken`` (the log rows ``keep`` marks) with each null field of a row that replaced a
        base row set to that row's value, as OverwriteNonDefaultsWithLatestAvroPayload's
        combineAndGetUpdateValue does for every field of the schema (PostgresDebezium: each
        TOASTed text or bytes field)."""
        replaced = pa.concat_tables([rows for _, rows in self._replaced])
        at = np.full(self.logs.num_rows, -1, dtype=np.int64)
        at[np.concatenate([log_rows for log_rows, _ in self._replaced])] = np.arange(replaced.num_rows)
        at = at[keep]
        source = pa.array(at, mask=at < 0)
        if self.toasted:
            names = [n for n in taken.column_names if n in replaced.column_names and n not in META_FIELDS]
            return untoasted(taken, replaced.take(source), pa.array(at >= 0), names).cast(taken.schema)
        columns = []
        for name, column in zip(taken.column_names, taken.columns, strict=True):
            if name in replaced.column_names:
                column = pc.coalesce(column, replaced.column(name).take(source).cast(column.type))
            columns.append(column)
        return pa.Table.from_arrays(columns, schema=taken.schema)


#: base rows probed against the log's keys at once, in :func:`merge_file_slice_batches`'s batches:
#: pyarrow builds the hash table of the value set on every ``index_in`` call (70k uuid keys: ~8 ms,
#: against ~3 ms to probe 65,536), so the key column is probed 16 batches' rows at a time
_PROBE_BATCHES = 16


def _stored_keys(table: MetaClient, schema: pa.Schema) -> bool:
    """The base file's rows carry their record key in ``_hoodie_record_key``."""
    return bool(table.config.populate_meta_fields) and KEY_COLUMN in schema.names


class _KeyPositions:
    """:meth:`_Probe.positions` of a base file's rows in file order, handed out ``take(n)`` at a
    time: its key column is read and probed ``rows`` keys at a time (one hash table each), while
    the merge reads the whole rows in smaller batches. Holds one chunk's keys and positions."""

    def __init__(self, table: MetaClient, path: str, probe: _Probe, rows: int) -> None:
        self._path = path
        self._chunks = iter_parquet(table.storage, path, [KEY_COLUMN], rows)
        self._probe = probe
        self._left = np.empty(0, dtype=np.int64)

    def take(self, n: int) -> np.ndarray:
        parts = []
        while n:
            if not len(self._left):
                chunk = next(self._chunks, None)
                if chunk is None:  # the same file read twice: only if it changed under the read
                    raise StorageError(f"{self._path}: fewer record keys than rows")
                self._left = self._probe.positions(chunk)
            part, self._left = self._left[:n], self._left[n:]
            parts.append(part)
            n -= len(part)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
