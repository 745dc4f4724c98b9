"""Data skipping: a snapshot or read_optimized query reads a base file only where it may hold a
row its filters pass.

- **By record key**, where the filters pin it (``=`` or ``in`` on ``_hoodie_record_key``, or on
  the table's single key field where the key is that field's text): the footer's min/max record
  keys and bloom filter, then, for a few keys, the key column decide. A slice whose base file
  holds none of the keys keeps its log files, merged alone: the keys' rows there cannot meet a
  base row, so the merge without the base file gives them exactly.
- **By range**, for ``=``, ``<``, ``<=``, ``>``, ``>=`` and ``in`` on an integer, floating,
  string, date, timestamp or decimal column: every row group's min/max statistics, compared by
  Arrow as the row filter compares the rows (a truncated string statistic still bounds its
  values: parquet-mr cuts the min and rounds the max up). A slice whose base file is out of
  range keeps its log files merged alone only where a log record replaces its base row whatever
  either holds (``OverwriteWithLatestAvroPayload``); under other payloads a log record may lose
  to a base row out of range, so the slice is read whole.

A slice left with nothing to read is dropped. Apache Hudi's reader skips files only through its
metadata table's indexes; the bloom filter, the min/max keys and the statistics are in every base
file anyway, so a point look-up or a recent range here costs the footers, not the table.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.errors import HudiError
from hudi_core.fs_view.model import FileSlice
from hudi_core.io.base_file import footer_may_hold, key_span
from hudi_core.read.filters import Filter, to_expression
from hudi_core.read.keys import KEY_COLUMN
from hudi_core.read.parallel import ordered_map, read_parallelism
from hudi_core.schema.internal import FileColumns, SchemaHistory

if TYPE_CHECKING:
    from hudi_core.table.config import TableConfig
    from hudi_core.table.meta_client import MetaClient

__all__ = ["filter_keys", "skip_slices"]

#: key generators whose record key of one field is that field's value as text (Hudi's simple
#: key, which the non-partitioned and timestamp-based ones use too); a complex key of one field
#: is ``field:value`` or the bare value depending on a write setting the table does not record
_BARE_KEYGENS = frozenset({"SimpleKeyGenerator", "SimpleAvroKeyGenerator", "NonpartitionedKeyGenerator",
                           "NonpartitionedAvroKeyGenerator", "TimestampBasedKeyGenerator",
                           "TimestampBasedAvroKeyGenerator"})  # fmt: skip


#: below this many slices the footers are read on the calling thread
_THREADS_FROM = 4
#: up to this many keys, a base file whose footer may hold one has its key column read to know
#: (one column of the file); more keys are likely in most files, which are then read anyway
_KEY_COLUMN_PROBE = 64


def filter_keys(config: TableConfig, schema: pa.Schema, filters: Sequence[Filter]) -> pa.Array | None:
    """The record keys a row must have one of to pass ``filters`` (ANDed): from each ``=`` or
    ``in`` on ``_hoodie_record_key``, or on the single record key field when it is a string
    column whose text is the key, on a table with meta fields; None when the filters allow any
    key."""
    keys: set[str] | None = None
    for column, op, value in filters:
        if op not in ("=", "in") or not _names_the_key(config, schema, column):
            continue
        values = [value] if op == "=" else list(value)
        if not all(v is None or isinstance(v, str) for v in values):
            return None  # a value of another type: the filter decides, row by row
        found = {v for v in values if v is not None}  # (no row's key is null)
        keys = found if keys is None else keys & found
    return None if keys is None else pa.array(sorted(keys), pa.string())


def _names_the_key(config: TableConfig, schema: pa.Schema, column: str) -> bool:
    """Whether ``column`` holds the record key as the base files store it: a table without meta
    fields stores no key column, bloom filter or min/max keys to skip by."""
    if not config.populate_meta_fields:
        return False
    if column == KEY_COLUMN:
        return True
    fields = config.record_key_fields
    keygen = (config.keygen_class or "").rsplit(".", 1)[-1]
    return (
        len(fields) == 1
        and fields[0] == column
        and (keygen in _BARE_KEYGENS or (not keygen and len(config.partition_fields) <= 1))
        and schema.get_field_index(column) >= 0
        and pa.types.is_string(schema.field(column).type)
    )


def skip_slices(
    table: MetaClient,
    slices: list[FileSlice],
    schema: pa.Schema,
    filters: Sequence[Filter],
    *,
    with_logs: bool,
    history: SchemaHistory | None = None,
) -> list[FileSlice]:
    """``slices`` without the base files that hold no row the ``filters`` could pass: none of
    the keys they pin (:func:`filter_keys`), or no value in the range they allow on a column by
    every row group's min/max statistics. A slice left with no file to read is dropped;
    one with log files (``with_logs``: a snapshot) keeps them, merged alone, where that gives its
    rows exactly: always for a key its base file does not hold; for a range only when the log's
    record replaces the base row whatever it holds (``OverwriteWithLatestAvroPayload``), since a
    log record that loses on ordering would otherwise stand in for a base row outside the range.
    The files are asked on ``hoodie.read.parallelism`` threads. ``history``: the files hold the
    columns by id, each under the name of the schema it was written with (Hudi's schema on read
    renamed some): a file's statistics are looked up under its names."""
    keys = filter_keys(table.config, schema, filters)
    # a base file whose keys all lie outside a range of the key holds none of the keys it allows:
    # a log record in range cannot meet a base row, whatever the payload
    key_ranges: list[Filter] = []
    ranges: list[Filter] = []
    for f in filters:
        if _range_filter(schema, f):
            (key_ranges if _names_the_key(table.config, schema, f[0]) else ranges).append(f)
    if keys is None and not ranges and not key_ranges:
        return slices
    wanted, span = key_span(keys) if keys is not None else (None, None)
    if wanted is not None and len(wanted) == 0:
        return []
    storage = table.storage
    log_wins = table.config.payload_class.rsplit(".", 1)[-1] == "OverwriteWithLatestAvroPayload"

    def verdict(fs: FileSlice) -> str:
        if fs.base_file is None:
            return _READ
        path = storage.arrow_path(fs.base_file.path)
        try:
            with pq.ParquetFile(path, filesystem=storage.arrow_filesystem()) as file:
                meta = file.metadata
                names = history.file_columns(fs.base_file.instant) if history is not None else None
                if key_ranges and _rules_out(meta, schema, key_ranges, names):
                    return _NO_KEY
                if ranges and _rules_out(meta, schema, ranges, names):
                    return _NO_ROW
                if wanted is None:
                    return _READ
                # a bloom filter tests a key in ~200 ns: for more keys than the file has rows,
                # reading the file costs less than asking it
                if not footer_may_hold(meta, wanted, span, probe=lambda _chars, n: n <= meta.num_rows):
                    return _NO_KEY
                if len(wanted) > _KEY_COLUMN_PROBE:
                    return _READ
                # Hudi's filter holds 100k keys at most (its dynamic.max.entries): past that it
                # says "maybe" to most keys, so the key column tells for sure
                held = file.read(columns=[KEY_COLUMN], use_threads=False).column(0)
        except (OSError, pa.ArrowException, HudiError):
            return _READ  # the read itself reports a file it cannot open
        return _READ if pc.any(pc.is_in(held, value_set=wanted)).as_py() else _NO_KEY

    workers = 1 if len(slices) < _THREADS_FROM else read_parallelism(table.options)
    kept = []
    for fs, found in zip(slices, ordered_map(verdict, slices, workers), strict=True):
        if found == _READ:
            kept.append(fs)
        elif with_logs and fs.log_files:
            kept.append(dataclasses.replace(fs, base_file=None) if found == _NO_KEY or log_wins else fs)
    return kept


#: what a base file holds for a query: rows to read, none of its keys, no row in its ranges
_READ, _NO_KEY, _NO_ROW = "read", "no key", "no row"
_RANGE_OPS = frozenset({"=", "<", "<=", ">", ">=", "in"})


def _values_fit(dt: pa.DataType, values: list[Any]) -> bool:
    """Whether ``values`` are of the kind a column of ``dt`` is compared with, so that the row
    filter compares them as statistics are compared here (another kind is for the row filter to
    cast or refuse, file by file). None and NaN pass none of the range operators."""
    if pa.types.is_integer(dt) or pa.types.is_floating(dt):
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) and v == v for v in values)
    if pa.types.is_string(dt) or pa.types.is_large_string(dt):
        return all(isinstance(v, str) for v in values)
    if pa.types.is_date32(dt):
        return all(isinstance(v, datetime.date) and not isinstance(v, datetime.datetime) for v in values)
    if pa.types.is_timestamp(dt):
        return all(isinstance(v, datetime.datetime) for v in values)
    if pa.types.is_decimal(dt):
        numbers = all(isinstance(v, (decimal.Decimal, int)) and not isinstance(v, bool) for v in values)
        return numbers and not any(isinstance(v, decimal.Decimal) and v.is_nan() for v in values)
    return False


def _range_filter(schema: pa.Schema, f: Filter) -> bool:
    """A filter that passes only values in a range (or a set) of an integer, floating, string,
    date, timestamp or decimal column: what row group statistics can rule out."""
    column, op, value = f
    if op not in _RANGE_OPS or schema.get_field_index(column) < 0:
        return False
    values = list(value) if op == "in" else [value]
    return bool(values) and _values_fit(schema.field(column).type, values)


def _rules_out(
    meta: pq.FileMetaData, schema: pa.Schema, ranges: list[Filter], names: FileColumns | None = None
) -> bool:
    """True when one of ``ranges`` holds for no row of the file: every row group's min/max of
    its column, as the query's type, lies outside it (a file without the column, or a group
    without statistics, may hold any value). The bounds are compared by Arrow, as the row filter
    compares the rows; what Arrow cannot compare rules nothing out. ``names``: the file holds the
    query's columns under these names (a column it does not hold is null there, which no range
    passes)."""
    leaves = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
    for column, op, value in ranges:
        if names is not None:
            held = names.names([column])
            if not held:
                return True
            i = leaves.get(held[0])
        else:
            i = leaves.get(column)
        if i is None:
            continue
        stats = [meta.row_group(g).column(i).statistics for g in range(meta.num_row_groups)]
        if not stats or not all(s is not None and s.has_min_max for s in stats):
            continue
        try:
            dt = schema.field(column).type
            lows, highs = pa.array([s.min for s in stats], dt), pa.array([s.max for s in stats], dt)
            if not _reached(op, value, lows, highs):
                return True
        except (pa.ArrowException, TypeError, ValueError, OverflowError, decimal.InvalidOperation):
            continue
    return False


def _reached(op: str, value: Any, lows: pa.Array, highs: pa.Array) -> bool:
    """Whether a row group of bounds [lows[g], highs[g]] may hold a value passing ``op value``
    (``in``: a value of the set between a group's bounds, the set compared whole per group)."""
    if op == "in":
        values = pa.array(list(value))
        return any(
            pc.any(pc.and_(pc.greater_equal(values, lo), pc.less_equal(values, hi))).as_py()
            for lo, hi in zip(lows, highs, strict=True)
        )
    # the row filter's own comparisons, of the bounds: lo for an upper limit, hi for a lower one
    if op in ("<", "<="):
        reach = [("lo", op, value)]
    elif op in (">", ">="):
        reach = [("hi", op, value)]
    else:
        reach = [("lo", "<=", value), ("hi", ">=", value)]
    return pa.table({"lo": lows, "hi": highs}).filter(to_expression(reach)).num_rows > 0
