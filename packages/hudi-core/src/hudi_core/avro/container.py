"""Avro object-container files as Java Hudi writes timeline files (spec 3.3): codec null,
metadata only ``avro.schema``, one block, a random 16-byte sync marker."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable
from typing import Any

import fastavro

from hudi_core.errors import TimelineError

__all__ = ["container_bytes", "java_annotated", "read_container", "write_container"]

_MAGIC = b"Obj\x01"


def _varint(value: int) -> bytes:
    v = (value << 1) ^ (value >> 63)
    out = bytearray()
    while v > 0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def java_annotated(schema: Any) -> Any:
    """``schema`` with Java's ``"avro.java.string": "String"`` on every string and map, as the
    Avro-generated Java classes embed it."""
    if schema == "string":
        return {"type": "string", "avro.java.string": "String"}
    if isinstance(schema, list):
        return [java_annotated(b) for b in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "fields":
            out[key] = [{k: (java_annotated(v) if k == "type" else v) for k, v in f.items()} for f in value]
        elif key in ("items", "values") or (key == "type" and isinstance(value, (dict, list))):
            out[key] = java_annotated(value)
        else:
            out[key] = value
    if schema.get("type") == "string":
        out["avro.java.string"] = "String"
    if schema.get("type") == "map":
        out["avro.java.string"] = "String"
    return out


def write_container(
    schema: dict[str, Any], records: Iterable[dict[str, Any]], *, schema_json: str | None = None
) -> bytes:
    """Container bytes holding ``records``; the embedded schema is ``schema_json`` when given
    (e.g. Java-annotated), else ``schema`` as compact JSON."""
    parsed = fastavro.parse_schema(schema)
    body = io.BytesIO()
    count = 0
    for record in records:
        fastavro.schemaless_writer(body, parsed, record)
        count += 1
    raw_schema = schema_json or json.dumps(schema, separators=(",", ":"))
    return container_bytes(raw_schema, count, body.getvalue())


def container_bytes(schema_json: str, count: int, body: bytes) -> bytes:
    """A container file with ``avro.schema`` = ``schema_json``, codec null and one block of
    ``count`` records already encoded as ``body``."""
    raw_schema = schema_json.encode("utf-8")
    key = b"avro.schema"
    sync = os.urandom(16)
    return b"".join(
        (
            _MAGIC,
            _varint(1),
            _varint(len(key)),
            key,
            _varint(len(raw_schema)),
            raw_schema,
            b"\x00",
            sync,
            _varint(count),
            _varint(len(body)),
            body,
            sync,
        )
    )


def read_container(
    data: bytes, reader_schema: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], str]:
    """(records resolved to ``reader_schema``, the embedded writer schema JSON)."""
    try:
        reader = fastavro.reader(io.BytesIO(data), reader_schema=reader_schema)
        records: list[dict[str, Any]] = [r for r in reader if isinstance(r, dict)]
        return records, str(reader.metadata.get("avro.schema", ""))
    except (ValueError, EOFError, StopIteration, fastavro.read.SchemaResolutionError) as e:
        raise TimelineError(f"not a readable Avro container file ({len(data)} bytes): {e}") from e
