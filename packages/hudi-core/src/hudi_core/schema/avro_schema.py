"""Avro <-> Arrow schema conversion, in the shapes Hudi Spark writes (spec 3.4, 2.3)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hudi_core.errors import SchemaMismatchError
from hudi_core.schema.fields import paired_types

__all__ = [
    "META_FIELDS",
    "add_meta_fields",
    "arrow_to_avro",
    "avro_to_arrow",
    "meta_arrow_fields",
    "parse_avro_schema",
    "refuse_naive_timestamps",
    "strip_meta_fields",
    "without_fields",
]

META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
OPERATION_FIELD = "_hoodie_operation"


def parse_avro_schema(schema: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema, dict):
        return schema
    try:
        parsed = json.loads(schema)
    except json.JSONDecodeError as e:
        raise SchemaMismatchError(f"not an Avro schema (invalid JSON): {e}") from e
    if not isinstance(parsed, dict) or parsed.get("type") != "record":
        raise SchemaMismatchError("an Avro table schema must be a record")
    return parsed


# -- Avro -> Arrow ---------------------------------------------------------------------------------


def _avro_type_to_arrow(t: Any, named: dict[str, pa.DataType]) -> tuple[pa.DataType, bool]:
    """(arrow type, nullable)."""
    if isinstance(t, list):
        non_null = [b for b in t if b != "null"]
        nullable = len(non_null) < len(t)
        if len(non_null) == 1:
            dt, _ = _avro_type_to_arrow(non_null[0], named)
            return dt, nullable
        if not non_null:
            return pa.null(), True
        raise SchemaMismatchError(f"Avro unions of several types are not supported: {t}")
    if isinstance(t, str):
        prim = {
            "null": pa.null(),
            "boolean": pa.bool_(),
            "int": pa.int32(),
            "long": pa.int64(),
            "float": pa.float32(),
            "double": pa.float64(),
            "bytes": pa.binary(),
            "string": pa.string(),
        }
        if t in prim:
            return prim[t], False
        if t in named:
            return named[t], False
        short = t.rsplit(".", 1)[-1]
        for k, v in named.items():
            if k.rsplit(".", 1)[-1] == short:
                return v, False
        raise SchemaMismatchError(f"unknown Avro type {t!r}")
    kind = t.get("type")
    logical = t.get("logicalType")
    if logical == "decimal":
        return pa.decimal128(int(t["precision"]), int(t.get("scale", 0))), False
    if logical == "date":
        return pa.date32(), False
    if logical == "timestamp-micros":
        return pa.timestamp("us", tz="UTC"), False
    if logical == "timestamp-millis":
        return pa.timestamp("ms", tz="UTC"), False
    if logical == "local-timestamp-micros":
        return pa.timestamp("us"), False
    if logical == "local-timestamp-millis":
        return pa.timestamp("ms"), False
    if logical == "time-micros":
        return pa.time64("us"), False
    if logical == "time-millis":
        return pa.time32("ms"), False
    if logical == "uuid":
        return pa.string(), False
    if kind == "record":
        fields = []
        for f in t.get("fields", []):
            dt, nullable = _avro_type_to_arrow(f["type"], named)
            fields.append(pa.field(f["name"], dt, nullable=nullable))
        st = pa.struct(fields)
        name = t.get("name", "")
        ns = t.get("namespace")
        named[f"{ns}.{name}" if ns else name] = st
        return st, False
    if kind == "array":
        item, nullable = _avro_type_to_arrow(t["items"], named)
        return pa.list_(pa.field("element", item, nullable=nullable)), False
    if kind == "map":
        val, nullable = _avro_type_to_arrow(t["values"], named)
        return pa.map_(pa.string(), pa.field("value", val, nullable=nullable)), False
    if kind == "enum":
        return pa.string(), False
    if kind == "fixed":
        dt = pa.binary(int(t["size"]))
        named[t.get("name", "")] = dt
        return dt, False
    if isinstance(kind, (str, list, dict)):
        return _avro_type_to_arrow(kind, named)
    raise SchemaMismatchError(f"unsupported Avro type {t!r}")


def avro_to_arrow(schema: str | dict[str, Any]) -> pa.Schema:
    """Arrow schema of an Avro record schema (top-level fields become columns)."""
    record = parse_avro_schema(schema)
    st, _ = _avro_type_to_arrow(record, {})
    return pa.schema(list(st))  # type: ignore[arg-type]


# -- Arrow -> Avro ---------------------------------------------------------------------------------


def _arrow_type_to_avro(dt: pa.DataType, name: str, namespace: str) -> Any:
    if pa.types.is_boolean(dt):
        return "boolean"
    if pa.types.is_int8(dt) or pa.types.is_int16(dt) or pa.types.is_int32(dt):
        return "int"
    if pa.types.is_uint8(dt) or pa.types.is_uint16(dt):
        return "int"
    if pa.types.is_int64(dt) or pa.types.is_uint32(dt):
        return "long"
    if pa.types.is_float16(dt) or pa.types.is_float32(dt):
        return "float"
    if pa.types.is_float64(dt):
        return "double"
    if pa.types.is_string(dt) or pa.types.is_large_string(dt) or pa.types.is_string_view(dt):
        return "string"
    if pa.types.is_binary(dt) or pa.types.is_large_binary(dt) or pa.types.is_binary_view(dt):
        return "bytes"
    if pa.types.is_fixed_size_binary(dt):
        return {"type": "fixed", "name": name, "namespace": namespace, "size": dt.byte_width}
    if pa.types.is_decimal(dt):
        size = _decimal_fixed_size(dt.precision)
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": size,
            "logicalType": "decimal",
            "precision": dt.precision,
            "scale": dt.scale,
        }
    if pa.types.is_date(dt):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(dt):
        local = dt.tz is None
        unit = "millis" if dt.unit in ("s", "ms") else "micros"
        return {"type": "long", "logicalType": f"{'local-' if local else ''}timestamp-{unit}"}
    if pa.types.is_time32(dt):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_time64(dt):
        return {"type": "long", "logicalType": "time-micros"}
    if pa.types.is_list(dt) or pa.types.is_large_list(dt) or pa.types.is_fixed_size_list(dt):
        item = _arrow_type_to_avro(dt.value_type, name, namespace)
        return {"type": "array", "items": ["null", item] if dt.value_field.nullable else item}
    if pa.types.is_map(dt):
        item = _arrow_type_to_avro(dt.item_type, name, namespace)
        return {"type": "map", "values": ["null", item] if dt.item_field.nullable else item}
    if pa.types.is_struct(dt):
        return _record(list(dt), name, namespace)
    if pa.types.is_dictionary(dt):
        return _arrow_type_to_avro(dt.value_type, name, namespace)
    if pa.types.is_null(dt):
        return "null"
    raise SchemaMismatchError(f"column {name!r} has type {dt}, which Hudi cannot store")


def _decimal_fixed_size(precision: int) -> int:
    # Smallest byte count whose signed range holds 10^precision - 1 (Spark/Avro convention).
    size = 1
    while 2 ** (8 * size - 1) - 1 < 10**precision - 1:
        size += 1
    return size


def _record(fields: list[pa.Field], name: str, namespace: str) -> dict[str, Any]:
    child_ns = f"{namespace}.{name}"
    out = []
    for f in fields:
        t = _arrow_type_to_avro(f.type, f.name, child_ns)
        if f.nullable:
            out.append({"name": f.name, "type": ["null", t], "default": None})
        else:
            out.append({"name": f.name, "type": t})
    return {"type": "record", "name": name, "namespace": namespace, "fields": out}


def arrow_to_avro(schema: pa.Schema, table_name: str, *, nullable: bool = True) -> dict[str, Any]:
    """Avro record schema of an Arrow schema, named like Hudi Spark names it
    (``<table>_record`` in namespace ``hoodie.<table>``). With ``nullable`` every top-level
    field becomes ``["null", T]`` with default null, as Spark writes the commit schema."""
    fields = [f.with_nullable(True) if nullable else f for f in schema]
    return _record(fields, f"{table_name}_record", f"hoodie.{table_name}")


def to_create_schema_json(avro: dict[str, Any]) -> str:
    """The ``hoodie.table.create.schema`` form: unions as ``[T, "null"]`` without defaults."""

    def flip(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                if k == "default" and v is None:
                    continue
                out[k] = flip(v)
            return out
        if isinstance(node, list):
            items = [flip(x) for x in node]
            if len(items) == 2 and items[0] == "null":
                return [items[1], "null"]
            return items
        return node

    return json.dumps(flip(avro), separators=(",", ":"))


def meta_arrow_fields(*, with_operation: bool = False) -> list[pa.Field]:
    names = META_FIELDS + ((OPERATION_FIELD,) if with_operation else ())
    return [pa.field(n, pa.string(), nullable=True) for n in names]


def add_meta_fields(avro: dict[str, Any], *, with_operation: bool = False) -> dict[str, Any]:
    """The writer schema of base files and log blocks: the meta fields first."""
    names = META_FIELDS + ((OPERATION_FIELD,) if with_operation else ())
    meta = [{"name": n, "type": ["null", "string"], "doc": "", "default": None} for n in names]
    rest = [f for f in avro["fields"] if f["name"] not in names]
    return {**avro, "fields": meta + rest}


def strip_meta_fields(avro: dict[str, Any]) -> dict[str, Any]:
    return without_fields(avro, (*META_FIELDS, OPERATION_FIELD))


def without_fields(avro: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """A record schema but its top-level fields named in ``names``."""
    return {**avro, "fields": [f for f in avro["fields"] if f["name"] not in names]}


def refuse_naive_timestamps(schema: pa.Schema, known: pa.Schema | None) -> None:
    """Raise ``SchemaMismatchError`` where ``schema`` holds timestamps without a time zone (Avro's
    ``local-timestamp-*``, Spark's ``TIMESTAMP_NTZ``) that ``known`` (the table's schema so far)
    does not: Apache Hudi 0.15's writer refuses them and its reader fails on a table with one.
    The writers ask before they write, unless ``hoodie.write.timestamp.ntz.enabled``."""
    before = {} if known is None else {f.name: f.type for f in known}
    naive = [
        path
        for f in schema
        for path, old, new in paired_types(before.get(f.name), f.type, f.name)
        if _naive(new) and not _naive(old)
    ]
    if naive:
        raise SchemaMismatchError(
            f"the column(s) or field(s) {naive} hold timestamps without a time zone, which Apache Hudi 0.15 "
            "cannot read (Spark's TIMESTAMP_NTZ); give them a zone (Spark: cast them to TIMESTAMP; Arrow: "
            "pyarrow.compute.assume_timezone, or a cast to timestamp('us', tz='UTC')), or set "
            "hoodie.write.timestamp.ntz.enabled=true to store them as local timestamps"
        )


def _naive(dtype: pa.DataType | None) -> bool:
    return dtype is not None and pa.types.is_timestamp(dtype) and dtype.tz is None
