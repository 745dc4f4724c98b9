"""Stage 1: incoming Arrow data -> records with their Hudi keys (vectorised).

The working table of the write pipeline is the user's data columns plus a few internal columns
(named below). Every later stage adds or reads these columns; none keeps state elsewhere, so a
distributed engine can ship the table and a small context to its tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteOptions
from hudi_core.errors import InvalidRecordKeyError, SchemaMismatchError
from hudi_core.keygen.auto import AutoRecordKeys
from hudi_core.keygen.base import KeyGenerator
from hudi_core.keygen.partition import check_partition_paths
from hudi_core.schema.avro_schema import META_FIELDS, OPERATION_FIELD, refuse_naive_timestamps
from hudi_core.schema.fields import paired_types
from hudi_core.schema.promotion import NUMBERS, promoted, unchecked_cast
from hudi_core.write.payload import op_deletes

__all__ = [
    "BASE_INSTANT",
    "BUCKET",
    "DELETE_FLAG",
    "FILE_ID",
    "INTERNAL_COLUMNS",
    "IS_DELETED",
    "LOCATION_PARTITION",
    "NATURAL_DELETE",
    "PARTITION_PATH",
    "RECORD_KEY",
    "KeyGen",
    "conform_to_schema",
    "data_columns",
    "evolve_schema",
    "partition_columns_of_writes",
    "prepare",
    "stored_schema",
    "without_columns",
]

RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
#: the user-facing soft-delete field Hudi honours (spec 8.2)
IS_DELETED = "_hoodie_is_deleted"
#: internal: True when the row deletes its key
DELETE_FLAG = "_hoodie_w_delete"
#: stage 3: current location of the key (null for inserts)
FILE_ID = "_hoodie_file_id"
BASE_INSTANT = "_hoodie_base_instant"
#: stage 3: partition the existing record lives in (differs only for global indexes)
LOCATION_PARTITION = "_hoodie_location_partition"
#: stage 4: bucket number within the BucketPlan
BUCKET = "_hoodie_w_bucket"
#: internal: a delete without ordering value (delete operation, partition move), written with
#: Java's natural-order ordering value int 0 so it always wins
NATURAL_DELETE = "_hoodie_w_natural_delete"

INTERNAL_COLUMNS = (
    RECORD_KEY, PARTITION_PATH, DELETE_FLAG, NATURAL_DELETE, FILE_ID, BASE_INSTANT,
    LOCATION_PARTITION, BUCKET,
)  # fmt: skip
_META = (*META_FIELDS, OPERATION_FIELD)


class KeyGen(Protocol):
    def record_keys(self, data: pa.Table) -> pa.Array: ...

    def partition_paths(self, data: pa.Table) -> pa.Array: ...


def data_columns(table: pa.Table) -> list[str]:
    """The user's columns of a working table (no meta, no internal columns)."""
    return [n for n in table.column_names if n not in INTERNAL_COLUMNS and n not in _META]


def prepare(
    data: pa.Table,
    keygen: KeyGen,
    config: HoodieConfig | None = None,
    *,
    all_deletes: bool = False,
    operation: str | None = None,
) -> pa.Table:
    """Add ``_hoodie_record_key``, ``_hoodie_partition_path`` and the delete flag.

    The flag marks the records a write deletes: every record of the delete operation, a record
    whose ``_hoodie_is_deleted`` is true, and one its payload's change field marks a delete
    (AWSDms: ``Op`` is ``D``; Debezium: ``_change_operation_type`` is ``d``).
    A bulk_insert flags none (Apache Hudi's row writer stores such records as rows) unless
    ``hoodie.datasource.write.row.writer.enable`` is false.

    Meta columns already in ``data`` (e.g. rows read back from a Hudi table) are dropped: the
    keys are always recomputed by the table's key generator, but for a table without record key
    fields, where rows read back keep their ``_hoodie_record_key`` (:mod:`hudi_core.keygen.auto`).
    Raises ``InvalidRecordKeyError`` naming the first null or empty key, ``UnsafePathError`` for a
    partition value that would leave the table.
    """
    if isinstance(data, pa.RecordBatch):  # pragma: no cover - defensive
        data = pa.Table.from_batches([data])
    made = None
    if isinstance(keygen, AutoRecordKeys):  # made-up keys, or the ones read rows carry
        made = keygen.stored_keys(data) if all_deletes else keygen.record_keys(data)
    data = data.drop_columns([c for c in _META if c in data.column_names])
    keys = made if made is not None else _as_string_array(keygen.record_keys(data))
    partitions = _as_string_array(keygen.partition_paths(data))
    _check_keys(keys)
    if getattr(type(keygen), "partition_paths", None) is not KeyGenerator.partition_paths:
        check_partition_paths(partitions)  # a plugin key generator's own paths may be unchecked
    as_rows = operation == "bulk_insert" and (config is None or bool(config.get(WriteOptions.ROW_WRITER)))
    if all_deletes:
        flag = pa.array([True] * data.num_rows, pa.bool_()) if data.num_rows else pa.array([], pa.bool_())
    elif IS_DELETED in data.column_names and not as_rows:
        flag = pc.fill_null(data.column(IS_DELETED).cast(pa.bool_()), False)
    else:
        flag = pa.nulls(data.num_rows, pa.bool_()).fill_null(False)
    marked = None if all_deletes or as_rows or config is None else op_deletes(config, data)
    if marked is not None:
        flag = pc.or_(flag, marked)
    out = data
    natural = pa.array(np.full(data.num_rows, all_deletes, dtype=bool))
    cols = ((RECORD_KEY, keys), (PARTITION_PATH, partitions), (DELETE_FLAG, flag), (NATURAL_DELETE, natural))
    for name, col in cols:
        out = out.append_column(name, col)
    return out


def _as_string_array(arr: Any) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    return arr


def _check_keys(keys: pa.Array) -> None:
    if keys.null_count == 0 and (len(keys) == 0 or pc.min(pc.binary_length(keys)).as_py() > 0):
        return  # (lengths come from the offsets alone: no pass over the strings)
    bad = pc.or_kleene(pc.is_null(keys), pc.equal(pc.utf8_length(keys), 0))
    bad = pc.fill_null(bad, True)
    if pc.any(bad).as_py():
        row = int(pc.index(bad, True).as_py())
        value = keys[row].as_py()
        raise InvalidRecordKeyError(
            f"row {row} has a {'null' if value is None else 'empty'} record key; every row needs "
            "a non-empty value in the record key field(s)"
        )


# -- schemas -------------------------------------------------------------------------------------

_PROMOTIONS: dict[pa.DataType, tuple[pa.DataType, ...]] = {
    pa.int8(): (pa.int16(), pa.int32(), pa.int64(), pa.float32(), pa.float64()),
    pa.int16(): (pa.int32(), pa.int64(), pa.float32(), pa.float64()),
    pa.int32(): (pa.int64(), pa.float32(), pa.float64()),
    pa.int64(): (pa.float32(), pa.float64()),
    pa.float32(): (pa.float64(),),
    pa.large_string(): (pa.string(),),
    pa.string(): (pa.large_string(),),
}


#: timestamp units, coarse to fine
_UNITS = ("s", "ms", "us", "ns")

#: Avro promotes text to bytes and bytes to text. Hudi's writer keeps the table's type where the
#: input's promotes to it, and takes the input's only where the promotion runs one way (int -> long)
_TEXT = (pa.string(), pa.large_string())
_BYTES = (pa.binary(), pa.large_binary())


def _compatible(old: pa.DataType, new: pa.DataType) -> pa.DataType | None:
    """The type a column keeps when ``old`` (table) meets ``new`` (input); None if incompatible."""
    if old.equals(new):
        return old
    if (old in _TEXT and new in _BYTES) or (old in _BYTES and new in _TEXT):
        return old
    if old in NUMBERS and new in _TEXT:
        return new  # Hudi takes a number column to text (the rows before read as Java writes them)
    if old in _TEXT and (new in NUMBERS or pa.types.is_date(new)):
        return old  # and writes numbers and dates into a text column as Java writes them
    if new in _PROMOTIONS.get(old, ()):
        return new  # widening (Avro schema evolution allows int -> long -> float -> double)
    if old in _PROMOTIONS.get(new, ()):
        return old  # narrower input is cast up to the table's type
    if pa.types.is_timestamp(old) and pa.types.is_timestamp(new):
        # millis meeting micros widens to micros (Hudi's writer evolves the column so); the
        # column keeps its zone, and an input finer than micros is cast (Avro stores no nanos)
        if _UNITS.index(new.unit) > _UNITS.index(old.unit) and old.unit in ("s", "ms"):
            return pa.timestamp(min(new.unit, "us", key=_UNITS.index), tz=old.tz)
        return old
    if pa.types.is_decimal(old) and pa.types.is_decimal(new) and old.scale == new.scale:
        return old if old.precision >= new.precision else new
    if pa.types.is_dictionary(new):
        return _compatible(old, new.value_type)
    if pa.types.is_struct(old) and pa.types.is_struct(new):
        return _merged_struct(old, new)
    if pa.types.is_list(old) and pa.types.is_list(new):
        item = _compatible(old.value_type, new.value_type)
        return None if item is None else pa.list_(pa.field(old.value_field.name, item, nullable=True))
    if pa.types.is_map(old) and pa.types.is_map(new) and old.key_type.equals(new.key_type):
        item = _compatible(old.item_type, new.item_type)
        return (
            None
            if item is None
            else pa.map_(old.key_type, pa.field(old.item_field.name, item, nullable=True))
        )
    return None


def _merged_struct(old: pa.StructType, new: pa.StructType) -> pa.DataType | None:
    """Schema-on-write inside a record, as at the top level: the table's fields (widened where
    the input widens them, kept where the input lacks them), then the input's new fields, all
    nullable; None when a shared field's types are incompatible."""
    given = {new.field(i).name: new.field(i).type for i in range(new.num_fields)}
    fields = []
    for i in range(old.num_fields):
        f = old.field(i)
        t = _compatible(f.type, given[f.name]) if f.name in given else f.type
        if t is None:
            return None
        fields.append(pa.field(f.name, t, nullable=True))
    known = {f.name for f in fields}
    fields += [pa.field(n, t, nullable=True) for n, t in given.items() if n not in known]
    return pa.struct(fields)


def evolve_schema(
    table_schema: pa.Schema | None,
    input_schema: pa.Schema,
    *,
    required: Sequence[str] = (),
    config: HoodieConfig | None = None,
    table_config: Any = None,
) -> pa.Schema:
    """The writer schema of a commit: the table's fields (types widened where the input widens
    them), then new input fields; with the table's ``table_config``, a ``drop.partition.columns``
    table's partition columns as :func:`partition_columns_of_writes` says (left out, though the
    input must still hold them: keys come from them; or, where the table has none of that name
    yet, as strings). Raises
    ``SchemaMismatchError`` for a missing required field (record key, partition, ordering), an
    incompatible type change, or a table column the input lacks, or a field of one of its
    structs (as Hudi's writer refuses both, unless the write's ``config`` sets
    ``hoodie.write.set.null.for.missing.columns``); with the write's ``config`` (a delete, which
    writes no columns, has none), timestamps without a zone where the table has none, as Hudi's
    writer refuses them (unless ``hoodie.write.timestamp.ntz.enabled``)."""
    missing = [f for f in required if f and f.split(".")[0] not in input_schema.names]
    dropped, text = partition_columns_of_writes(table_config) if table_config is not None else ([], [])
    input_schema = without_columns(input_schema, dropped)
    table_schema = without_columns(table_schema, dropped)
    cols = [n for n in input_schema.names if n not in INTERNAL_COLUMNS and n not in _META]
    if missing:
        raise SchemaMismatchError(
            f"input data has no column(s) {missing} (needed for keys / ordering); its columns are {cols}"
        )
    if config is not None and not config.get(WriteOptions.TIMESTAMP_NTZ):
        refuse_naive_timestamps(pa.schema([input_schema.field(n) for n in cols]), table_schema)

    def new_field(name: str) -> pa.Field:
        return pa.field(name, pa.string()) if name in text else input_schema.field(name).with_nullable(True)

    if table_schema is None:
        return pa.schema([new_field(n) for n in cols])
    given = {f.name: f.type for f in input_schema}
    lacking = [  # a table column, or a field of one, that the input has not (Hudi's element/value paths)
        path
        for f in table_schema
        if f.name not in _META
        for path, old, new in paired_types(f.type, given.get(f.name), f.name)
        if old is not None and new is None
    ]
    if lacking and not (config is not None and config.get(WriteOptions.SET_NULL_FOR_MISSING_COLUMNS)):
        raise SchemaMismatchError(
            f"the input has no column(s) or field(s) {lacking} of the table: a write would leave them null in "
            "every row it writes; give them, or set hoodie.write.set.null.for.missing.columns=true to write nulls"
        )
    fields: list[pa.Field] = []
    for f in table_schema:
        if f.name in _META:
            continue
        if f.name in input_schema.names:
            new = input_schema.field(f.name).type
            t = _compatible(f.type, new)
            if t is None:
                raise SchemaMismatchError(
                    f"column {f.name!r} has type {new} in the input but {f.type} in the table; "
                    "cast it to a compatible type"
                )
            fields.append(pa.field(f.name, t, nullable=True))
        else:
            fields.append(f.with_nullable(True))
    known = set(table_schema.names)
    fields.extend(new_field(n) for n in cols if n not in known)
    return pa.schema(fields)


def partition_columns_of_writes(table_config: Any) -> tuple[list[str], list[str]]:
    """What a write does with a ``drop.partition.columns`` table's partition columns: those it
    leaves out of its data files and commit schema, and those it writes as text. COPY_ON_WRITE
    leaves them out. MERGE_ON_READ keeps them, as text: Apache Hudi's upserts there keep them
    (its writer turns the option off for them, and its readers answer a log record with the
    values the record holds), typed as Hudi's ``TableSchemaResolver`` types them for its writers,
    as strings. Compaction and clustering, which write base files, leave them out on either type
    (``slice_schema(stored=True)``). Every other table: neither."""
    columns = list(table_config.dropped_columns)
    return ([], columns) if table_config.is_mor else (columns, [])


def stored_schema(table_config: Any, table_schema: pa.Schema | None) -> pa.Schema | None:
    """The table's schema as a write that adds no column (a delete) commits it: without the
    partition columns :func:`partition_columns_of_writes` leaves out."""
    return without_columns(table_schema, partition_columns_of_writes(table_config)[0])


def without_columns(schema: pa.Schema | None, names: Sequence[str]) -> pa.Schema | None:
    """``schema`` but its top-level fields named in ``names``."""
    if schema is None or not names:
        return schema
    gone = set(names)
    return pa.schema([f for f in schema if f.name not in gone], metadata=schema.metadata)


def _cast(column: pa.Array | pa.ChunkedArray, field: pa.Field) -> pa.Array | pa.ChunkedArray:
    """``column`` as ``field``'s type (numbers to text and floats to doubles as Hudi converts
    them, ``schema.promotion``); bytes that are not UTF-8 text, cast to a text column, are
    refused with the column and row."""
    if isinstance(column, pa.ChunkedArray):
        chunks = [_cast(c, field) for c in column.chunks]
        return pa.chunked_array(chunks, type=field.type)
    converted = promoted(column, field.type)
    if converted is not None:
        return converted
    try:
        return column.cast(field.type, safe=not unchecked_cast(column.type, field.type))
    except pa.ArrowInvalid:
        if field.type not in _TEXT or column.type not in _BYTES:
            raise
        for row, value in enumerate(column.to_pylist()):  # only once the cast failed
            if value is None:
                continue
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                raise SchemaMismatchError(
                    f"column {field.name!r} holds text in the table, and row {row} of the input's bytes "
                    f"is not UTF-8 text ({value[:16]!r}...): text is stored as UTF-8"
                ) from None
        raise


def conform_to_schema(data: pa.Table, schema: pa.Schema, *, keep_dictionaries: bool = False) -> pa.Table:
    """``data``'s user columns cast/filled to ``schema`` (missing -> nulls), internal columns
    kept after them; with ``keep_dictionaries`` a dictionary column of the field's type stays
    one (a base file's rows on their way to another base file)."""
    arrays = []
    for f in schema:
        if f.name in data.column_names:
            col = data.column(f.name)
            if keep_dictionaries and pa.types.is_dictionary(col.type) and col.type.value_type.equals(f.type):
                arrays.append(col)
                continue
            if pa.types.is_dictionary(col.type):
                col = col.cast(col.type.value_type)
            arrays.append(col if col.type.equals(f.type) else _cast(col, f))
        else:
            arrays.append(pa.nulls(data.num_rows, f.type))
    names = list(schema.names)
    for n in INTERNAL_COLUMNS:
        if n in data.column_names:
            arrays.append(data.column(n))
            names.append(n)
    return pa.Table.from_arrays(arrays, names=names)
