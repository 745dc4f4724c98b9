"""Queries: snapshot (time travel), read-optimized and incremental (spec 8.1 steps 7-8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_core.config.read import ReaderOptions
from hudi_core.config.table import TableOptions
from hudi_core.engine.pool import arrow_pool
from hudi_core.errors import ConfigError, HudiError
from hudi_core.fs_view.model import FileSlice
from hudi_core.fs_view.partitions import partition_values, path_says
from hudi_core.fs_view.view import FileSystemView
from hudi_core.keygen.partition import DEFAULT_PARTITION_PATH
from hudi_core.read.filters import Filter, normalize_filters, partition_matches, typed_filters
from hudi_core.read.globs import glob_matcher
from hudi_core.read.hollow import USE_TRANSITION_TIME, blocked_at, by_completion, hollow_policy
from hudi_core.read.merge import IS_DELETED_FIELD, slice_schema
from hudi_core.read.parallel import costliest_first, ordered_map, read_parallelism
from hudi_core.read.skipping import skip_slices
from hudi_core.read.splits import COMMIT_TIME, ReadContext, Split, read_split
from hudi_core.schema.avro_schema import META_FIELDS
from hudi_core.schema.internal import SchemaHistory
from hudi_core.timeline.commit_metadata import CommitMetadata
from hudi_core.timeline.instant import format_query_instant, format_range_instant
from hudi_core.timeline.timeline import ActiveTimeline, Timeline

if TYPE_CHECKING:
    from hudi_core.table.config import TableConfig
    from hudi_core.table.meta_client import MetaClient

__all__ = [
    "QUERY_TYPES",
    "QueryError",
    "copied_columns",
    "incremental_schema_instant",
    "iter_batches",
    "path_partition_values",
    "plan_splits",
    "projected_splits",
    "read_table",
    "share_copies",
]

QUERY_TYPES = ("snapshot", "read_optimized", "incremental")
#: ``hoodie.datasource.merge.type``: a snapshot's base rows merged with the log records
#: (payload_combine), or given beside them unmerged (skip_merge, Hudi's REALTIME_SKIP_MERGE)
MERGE_TYPES = ("payload_combine", "skip_merge")


class QueryError(HudiError):
    """A query that cannot run: unknown type, bad instant, unsupported on this table."""


@dataclass
class _Plan:
    table: MetaClient
    query_type: str
    view: FileSystemView
    schema: pa.Schema  # what a slice read yields (meta + data)
    output: pa.Schema  # what the caller gets
    filters: list[Filter]
    as_of: str | None = None
    start: str | None = None
    end: str | None = None
    slices: list[FileSlice] = field(default_factory=list)
    history: SchemaHistory | None = None  # the files' columns by id (Hudi's schema on read renamed some)

    def context(self) -> ReadContext:
        needed = _needed_columns(self.schema, self.output, self.filters, self.query_type)
        return ReadContext(
            query_type=self.query_type, schema=self.schema, output=self.output, needed=tuple(needed),
            merge_schema=_merge_schema(self.table.config, self.schema, needed), filters=tuple(self.filters),
            commits=self.view.visible.commit_set(), as_of=self.as_of, start=self.start, end=self.end,
            path_values=self._path_values(), history=self.history,
        )  # fmt: skip

    def _path_values(self) -> dict[str, dict[str, str]] | None:
        """Per partition of the plan, the partition columns' values its path tells, for a table
        whose base files do not hold them (``drop.partition.columns``); None for every other."""
        cfg = self.table.config
        if not cfg.drops_partition_columns:
            return None
        return {p: path_partition_values(cfg, p) for p in {s.partition_path for s in self.slices}}


def _merge_schema(cfg: TableConfig, schema: pa.Schema, needed: Sequence[str]) -> pa.Schema:
    """The columns a merge must carry: the wanted ones plus keys, ordering and delete flag."""
    want = set(needed) | set(META_FIELDS) | {IS_DELETED_FIELD}
    if cfg.ordering_field:
        want.add(cfg.ordering_field)
    if not cfg.populate_meta_fields:
        want |= {f.split(".")[0] for f in cfg.record_key_fields} | set(cfg.partition_fields)
    return pa.schema([f for f in schema if f.name in want])


def _needed_columns(
    schema: pa.Schema, output: pa.Schema, filters: Sequence[Filter], query_type: str
) -> list[str]:
    """The columns read from files: the output's, the filters' and (incremental) the commit time."""
    want = set(output.names) | {f[0] for f in filters}
    if query_type == "incremental":
        want.add(COMMIT_TIME)
    return [n for n in schema.names if n in want]


def projected_splits(cfg: TableConfig, splits: Sequence[Split], columns: Sequence[str]) -> list[Split]:
    """``splits`` giving only ``columns`` of their output: the same file slices, snapshot and
    filters, with nothing decoded beyond those columns, the filters' and what a merge needs (a
    count's read wants no column at all). ``cfg``: the table's."""
    contexts: dict[int, ReadContext] = {}
    out = []
    for split in splits:
        ctx = split.context
        if id(ctx) not in contexts:
            missing = [c for c in columns if ctx.output.get_field_index(c) < 0]
            if missing:
                raise QueryError(f"columns {missing} are not in the query's output {ctx.output.names}")
            output = pa.schema([ctx.output.field(c) for c in columns], metadata=ctx.output.metadata)
            needed = _needed_columns(ctx.schema, output, ctx.filters, ctx.query_type)
            contexts[id(ctx)] = dataclasses.replace(
                ctx, output=output, needed=tuple(needed), merge_schema=_merge_schema(cfg, ctx.schema, needed)
            )
        out.append(Split(split.file_slice, contexts[id(ctx)]))
    return out


def _check_instant(name: str, value: str | None) -> str | None:
    """``as_of`` in one of Hudi's time-travel forms; ``start``/``end`` as Hudi compares them."""
    if value is None:
        return None
    try:
        if name == "as_of":
            return format_query_instant(value, option=name)
        return format_range_instant(value, option=name)
    except ConfigError as e:
        raise QueryError(str(e)) from None


def _check_time_travel(table: MetaClient, timeline: ActiveTimeline, as_of: str) -> None:
    """Refuse a time travel Hudi refuses (``TimelineUtils.validateTimestampAsOf``): at or after
    the first write still pending, or before the earliest commit the latest clean retained
    (the files that answered it may be gone)."""
    from hudi_core.timeline.avro_files import CLEAN_METADATA, read_avro_timeline_file
    from hudi_core.timeline.instant import Action

    pending = [
        i for i in timeline.commits().pending() if i.action not in (Action.COMPACTION, "logcompaction")
    ]
    if pending and as_of >= pending[0].timestamp:
        raise QueryError(
            f"Time travel's timestamp '{as_of}' must be earlier than the first incomplete commit "
            f"timestamp '{pending[0].timestamp}'."
        )
    cleans = timeline.filter(actions=[Action.CLEAN]).completed()
    if not len(cleans):
        return
    latest = cleans[-1]
    retained = read_avro_timeline_file(table.storage, timeline.path_of(latest), CLEAN_METADATA).get(
        "earliestCommitToRetain"
    )
    if retained and as_of < retained:
        raise QueryError(
            f"as_of {as_of}: the cleaner (clean {latest.timestamp}) kept only the commits from "
            f"{retained} on; retain more commits (hoodie.cleaner.commits.retained) for time travel "
            "that far back"
        )
    first = timeline.commits().completed().first()
    if not retained and first is not None and as_of < first.timestamp:
        # a clean by file versions names no earliest commit: the active timeline bounds it
        raise QueryError(
            f"as_of {as_of} is before the earliest commit still active and uncleaned ({first.timestamp}); "
            "retain more commits (uncleaned and un-archived) for time travel that far back"
        )


def incremental_schema_instant(
    table: MetaClient, completed: Timeline, start: str | None, end: str | None
) -> str | None:
    """The instant whose schema an incremental query over ``(start, end]`` reads with: the
    table's latest (None), as Hudi's relations read, so a column added after the range is in
    the answer, null; on a COPY_ON_WRITE table with ``hoodie.datasource.read.schema.use.end.instanttime``
    the last completed commit's in the range (the latest where it holds none)."""
    if table.config.is_mor or not table.options.get(ReaderOptions.INCR_SCHEMA_USE_END):
        return None
    inside = completed.after(start or "0") if end is None else completed.between(start or "0", end)
    last = inside.last()
    return last.timestamp if last is not None else None


def _plan(
    table: MetaClient,
    *,
    query_type: str,
    as_of: str | None,
    start: str | None,
    end: str | None,
    columns: Sequence[str] | None,
    filters: Sequence[Sequence[Any]] | None,
    merge_type: str = "payload_combine",
) -> _Plan:
    qt = (query_type or "snapshot").strip().lower().replace("-", "_")
    if merge_type not in MERGE_TYPES:
        raise QueryError(
            f"hoodie.datasource.merge.type={merge_type!r} is not one of {', '.join(MERGE_TYPES)}"
        )
    if qt in ("ro", "read-optimized"):
        qt = "read_optimized"
    if qt not in QUERY_TYPES:
        raise QueryError(f"query type {query_type!r} is not one of {', '.join(QUERY_TYPES)}")
    as_of, start, end = (
        _check_instant("as_of", as_of),
        _check_instant("start", start),
        _check_instant("end", end),
    )
    cfg = table.config
    with_meta = cfg.populate_meta_fields
    if qt == "incremental" and not with_meta:
        raise QueryError(
            f"Incremental queries are not supported when meta fields are disabled "
            f"(hoodie.populate.meta.fields=false) on {table.base_uri}; use a snapshot query with as_of"
        )
    if qt == "incremental" and as_of is not None:
        raise QueryError(
            "as_of applies to snapshot and read_optimized queries; use start/end for incremental"
        )
    view = FileSystemView(table)
    timeline = view.timeline if isinstance(view.timeline, ActiveTimeline) else None
    if as_of is not None and timeline is not None:
        _check_time_travel(table, timeline, as_of)
    commits, by_time = view.visible.completed, False
    if qt == "incremental":
        start, end, commits, by_time = _incremental_range(table, view, start, end)
    if qt == "incremental" and not table.internal_schema(timeline=timeline):
        schema_at = incremental_schema_instant(table, commits, start, end)
    elif qt == "incremental":  # Hudi's schema on read: the table's latest internal schema
        schema_at = None
    else:
        schema_at = as_of
    schema = slice_schema(table, schema_at, timeline=timeline)
    history = table.schema_history(schema_at, timeline=timeline)
    visible_cols = [n for n in schema.names if with_meta or n not in META_FIELDS]
    if columns is not None:
        cols = [c.strip() for c in columns if c and c.strip()]
        unknown = [c for c in cols if c not in visible_cols]
        if unknown:
            raise QueryError(f"column(s) {unknown} are not columns of the table: {', '.join(visible_cols)}")
        visible_cols = cols
    output = pa.schema([schema.field(c) for c in visible_cols])
    flt = typed_filters(
        normalize_filters(filters, [n for n in schema.names if with_meta or n not in META_FIELDS]), schema
    )
    plan = _Plan(table, qt, view, schema, output, flt, as_of=as_of, start=start, end=end, history=history)
    partitions = _pruned_partitions(table, view, flt, schema)
    if qt == "read_optimized":
        bases = view.latest_base_files(as_of=as_of, partitions=partitions)
        plan.slices = [_base_only(table, view, b) for b in bases]
    elif qt == "snapshot":
        plan.slices = view.latest_merged_file_slices(as_of=as_of, partitions=partitions)
        if merge_type == "skip_merge":  # each base file's rows as stored, its logs' merged records beside
            plan.slices = [part for s in plan.slices for part in _unmerged(s)]
    else:
        plan.slices = _incremental_slices(plan, partitions, commits, by_time=by_time)
    # a filter on a partition column of a kind the paths say was decided by them: every row of a
    # kept partition holds what its path says, so the footers could not say more
    pruned = set() if _timestamp_like(table.config) else set(table.config.partition_fields)
    skipping = [f for f in flt if f[0] not in pruned or not _path_decides(f)]
    if skipping and qt != "incremental":
        plan.slices = skip_slices(table, plan.slices, schema, skipping, with_logs=qt == "snapshot",
                                  history=history)  # fmt: skip
    return plan


def _path_decides(f: Filter) -> bool:
    values = f[2] if f[1] in ("in", "not in") else [f[2]]
    return all(path_says(v) for v in values)


def _unmerged(s: FileSlice) -> list[FileSlice]:
    """A slice as skip_merge reads it: its base file alone, and its log files as a slice of
    their own (their records merged with each other, deletes dropped, as Hudi's log scanner gives them)."""
    if s.base_file is None or not s.log_files:
        return [s]
    base = FileSlice(s.partition_path, s.file_id, s.base_instant, s.base_file)
    return [base, FileSlice(s.partition_path, s.file_id, s.base_instant, None).with_logs(s.log_files)]


def _base_only(table: MetaClient, view: FileSystemView, base: Any) -> FileSlice:
    return FileSlice(_partition_of(table, base.path), base.file_id, base.instant, base)


def _partition_of(table: MetaClient, path: str) -> str:
    parent = path.rsplit("/", 1)[0]
    base = table.base_uri.rstrip("/")
    return parent[len(base) + 1 :] if parent.startswith(base + "/") else ""


def _timestamp_like(cfg: TableConfig) -> bool:
    """Partition paths hold formatted values (time-based key generators): never prune on those."""
    raw_fields = cfg.get_list(TableOptions.PARTITION_FIELDS)
    return "timestamp" in (cfg.keygen_class or "").lower() or any(
        ":timestamp" in f.lower() for f in raw_fields
    )


#: partition path values that stand for a null (or empty) value: Hudi's, and older Hudi's
_NULL_PARTITIONS = frozenset({DEFAULT_PARTITION_PATH, "default", ""})
#: Hudi's key generators whose partition path is the partition columns' values as text
_VALUE_KEYGENS = frozenset({"SimpleKeyGenerator", "ComplexKeyGenerator", "CustomKeyGenerator",
                            "SimpleAvroKeyGenerator", "ComplexAvroKeyGenerator", "CustomAvroKeyGenerator"})  # fmt: skip


def path_partition_values(cfg: TableConfig, partition: str) -> dict[str, str]:
    """``{field: value}`` that every row of ``partition`` holds in a top-level partition column,
    as its path tells it (the text a key generator wrote from the column's value). Empty where
    the path cannot tell: time-based key generators (formatted values), paths that do not map one
    segment per field, the partition of null values, key generators other than Hudi's simple,
    complex and custom ones; a nested field is left out."""
    fields = cfg.partition_fields
    keygen = (cfg.keygen_class or "").rsplit(".", 1)[-1]
    if not fields or _timestamp_like(cfg) or (keygen and keygen not in _VALUE_KEYGENS):
        return {}
    values = partition_values(partition, fields, hive_style=cfg.hive_style, url_encoded=cfg.url_encode)
    if values is None:
        return {}
    return {f: v for f, v in values.items() if f in fields and "." not in f and v not in _NULL_PARTITIONS}


def _pruned_partitions(
    table: MetaClient, view: FileSystemView, filters: list[Filter], schema: pa.Schema | None = None
) -> list[str]:
    parts = view.partitions()
    cfg = table.config
    fields = cfg.partition_fields
    if not filters or not fields or _timestamp_like(cfg):
        return parts
    out = []
    for p in parts:
        values = partition_values(p, fields, hive_style=cfg.hive_style, url_encoded=cfg.url_encode)
        if partition_matches(values, filters, schema):
            out.append(p)
    return out


def _incremental_range(
    table: MetaClient, view: FileSystemView, start: str | None, end: str | None
) -> tuple[str | None, str | None, Timeline, bool]:
    """An incremental query's range and the completed commits it reads, under the table's
    ``hoodie.read.timeline.holes.resolution.policy`` (:mod:`hudi_core.read.hollow`): all of
    them, those before a hollow commit (BLOCK), or (USE_TRANSITION_TIME) those that completed
    in the range, which then runs from the first of them to the last by instant time, as Hudi
    reads it. The last item says the commits were chosen by completion time."""
    completed = view.visible.completed
    policy = hollow_policy(table.options)
    if policy == USE_TRANSITION_TIME:
        chosen = by_completion(view.timeline, completed, start or "0", end)
        first, last = chosen.first(), chosen.last()
        if first is None or last is None:
            return "0", "0", chosen, True  # nothing completed in the range: no rows
        # (no end given: the latest schema, as a range by instant time reads with)
        return _just_before(first.timestamp), last.timestamp if end else None, chosen, True
    # Hudi checks a copy-on-write table against its completed commits, a merge-on-read one
    # against every commit and compaction instant, pending ones too
    later = view.timeline.commits() if table.config.is_mor else completed
    bound = blocked_at(view.timeline, later, policy)
    return start, end, completed if bound is None else completed.before(bound), False


def _just_before(ts: str) -> str:
    return str(int(ts) - 1).zfill(len(ts))


def _incremental_slices(
    plan: _Plan, partitions: list[str], completed: Timeline, *, by_time: bool
) -> list[FileSlice]:
    view = plan.view
    last = completed.last()
    if last is None:
        return []
    plan.start = plan.start or "0"
    plan.end = plan.end or last.timestamp
    # Nothing committed in the range (start at or after end, e.g. an incremental pull that
    # finds nothing new): Hudi returns no rows, not an error.
    instants = completed.between(plan.start, plan.end)
    if len(instants) == 0:
        return []
    first = completed.first()
    mor = plan.table.config.is_mor
    fallback = bool(plan.table.options.get(ReaderOptions.INCR_FALLBACK_FULL_TABLE_SCAN))
    if not by_time and first is not None and plan.start < first.timestamp and not mor and not fallback:
        # The start is before the active timeline (older commits archived). Hudi 0.15's COW
        # incremental relation returns what the active timeline's commits in the range wrote,
        # unless asked for the full table scan; its MOR relation returns every record committed
        # after the start either way (both seen through the Apache Hudi tier).
        plan.start = _just_before(first.timestamp)
    slices = view.latest_merged_file_slices(as_of=plan.end, partitions=partitions)
    # Commits older than the active timeline are archived: only then is a full scan needed.
    inside = by_time or _start_inside(completed, plan.start)
    if inside:
        touched: set[tuple[str, str]] = set()
        for inst in instants:
            meta = CommitMetadata.from_json(view.timeline.read_details(inst))  # type: ignore[attr-defined]
            touched |= meta.file_ids()
        slices = [s for s in slices if (s.partition_path, s.file_id) in touched]
    glob = str(plan.table.options.get(ReaderOptions.INCR_PATH_GLOB) or "")
    # Hudi's relations match "*" + the glob against a slice's base file, else its latest log
    # file; its COW full table scan takes no glob
    if glob and (inside or mor or not fallback):
        matches = glob_matcher("*" + glob)
        written = set(instants.timestamps()) if inside and mor else None
        slices = [s for s in slices if matches(_slice_path(s, written))]
    return slices


def _slice_path(s: FileSlice, written: set[str] | None) -> str:
    """The path Hudi matches a slice's glob with: its base file's, else its latest log file's.
    Hudi's merge-on-read relation knows only the files the range's commits wrote (``written``),
    so a base file written before the range counts as none there."""
    base = s.base_file
    if base is not None and (not s.log_files or written is None or base.instant in written):
        return base.path
    return s.log_files[-1].path


def _start_inside(completed: Any, start: str) -> bool:
    first = completed.first()
    return first is not None and start >= first.timestamp


def plan_splits(
    table: MetaClient,
    query_type: str = "snapshot",
    as_of: str | None = None,
    *,
    start: str | None = None,
    end: str | None = None,
    columns: Sequence[str] | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    merge_type: str = "payload_combine",
) -> list[Split]:
    """The splits of a query, one per file slice, in plan order; read each with
    :func:`hudi_core.read.read_split` (anywhere: splits pickle). The timeline is read once
    here: snapshot slices already merge across a pending compaction."""
    plan = _plan(table, query_type=query_type, as_of=as_of, start=start, end=end, columns=columns,
                 filters=filters, merge_type=merge_type)  # fmt: skip
    ctx = plan.context()
    return [Split(s, ctx) for s in plan.slices]


def iter_batches(
    table: MetaClient,
    *,
    query_type: str = "snapshot",
    as_of: str | None = None,
    start: str | None = None,
    end: str | None = None,
    columns: Sequence[str] | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    parallelism: int | None = None,
    merge_type: str = "payload_combine",
) -> Iterator[pa.RecordBatch]:
    """Record batches of a query, file slice by file slice, in plan order. Memory stays bounded:
    ``parallelism`` (default ``hoodie.read.parallelism``) slices are read ahead on threads,
    besides the one being yielded; ``parallelism=1`` reads one slice at a time."""
    splits = plan_splits(table, query_type, as_of, start=start, end=end, columns=columns, filters=filters,
                         merge_type=merge_type)  # fmt: skip
    workers = read_parallelism(table.options, parallelism, total_bytes=sum(s.size for s in splits))
    copies = copied_columns(table.config, splits[0].context.output) if splits else []
    for data in ordered_map(lambda s: share_copies(read_split(table, s), copies), splits, workers):
        yield from data.to_batches()


def read_table(
    table: MetaClient,
    *,
    query_type: str = "snapshot",
    as_of: str | None = None,
    start: str | None = None,
    end: str | None = None,
    columns: Sequence[str] | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    parallelism: int | None = None,
    merge_type: str = "payload_combine",
) -> pa.Table:
    """A query's result as one ``pyarrow.Table``, meta columns first (when the table has them).

    File slices are read on ``parallelism`` threads (default ``hoodie.read.parallelism``), those
    with the most bytes to read (log bytes weighted) started first, and concatenated in plan
    order. Each slice is read whole: the result holds its rows anyway, and
    pyarrow decodes a whole file faster than in batches (``iter_split`` streams a slice where
    memory must stay bounded, as in a Spark task)."""
    plan = _plan(table, query_type=query_type, as_of=as_of, start=start, end=end, columns=columns,
                 filters=filters, merge_type=merge_type)  # fmt: skip
    ctx = plan.context()
    splits = [Split(s, ctx) for s in plan.slices]
    workers = read_parallelism(table.options, parallelism, total_bytes=sum(s.size for s in splits))
    copies = copied_columns(table.config, plan.output)
    with arrow_pool():  # every decoded buffer is kept: fresh memory, see engine.pool
        read = costliest_first(
            lambda s: share_copies(read_split(table, s), copies), splits, workers, cost=lambda s: s.read_cost
        )
        parts = [p for p in read if p.num_rows]
    if not parts:
        return plan.output.empty_table()
    if not plan.output.names:  # no column: the rows counted (pyarrow concatenates them to none)
        return pa.table({"": pa.nulls(sum(p.num_rows for p in parts))}).select([])
    return pa.concat_tables(parts)


def copied_columns(cfg: TableConfig, output: pa.Schema) -> list[tuple[str, str]]:
    """The meta columns of ``output`` that Hudi fills with a copy of one data column of it, each
    with that column: ``_hoodie_record_key`` of a single record key field, and
    ``_hoodie_partition_path`` of a single partition field (when the path is the value: not
    hive-style, not URL-encoded, not a timestamp format; :func:`share_copies` checks the values)."""
    pairs = []
    if len(cfg.record_key_fields) == 1:
        pairs.append(("_hoodie_record_key", cfg.record_key_fields[0]))
    if len(cfg.partition_fields) == 1:
        pairs.append(("_hoodie_partition_path", cfg.partition_fields[0]))
    names = set(output.names)
    return [
        (meta, column) for meta, column in pairs
        if meta in names and column in names and output.field(meta).type == output.field(column).type
    ]  # fmt: skip


def share_copies(data: pa.Table, copies: Sequence[tuple[str, str]]) -> pa.Table:
    """``data`` with each meta column of ``copies`` that equals its data column, value for value,
    made that column: the same values, held once where nothing shared them while decoding (base
    files on fsspec storages such as S3 and HDFS, the rows a merge takes from the logs; the record
    key alone is 500 MB of a 10M-row answer). A column that differs anywhere is kept as read."""
    for meta, column in copies:
        i = data.schema.get_field_index(meta)
        source = data.column(column)
        if data.column(i).equals(source):
            data = data.set_column(i, data.schema.field(i), source)
    return data
