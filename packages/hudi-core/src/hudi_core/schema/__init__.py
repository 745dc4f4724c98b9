"""Schemas: Avro <-> Arrow conversion and the Hudi meta fields."""

from __future__ import annotations

from hudi_core.schema.avro_schema import (
    META_FIELDS,
    OPERATION_FIELD,
    add_meta_fields,
    arrow_to_avro,
    avro_to_arrow,
    meta_arrow_fields,
    parse_avro_schema,
    strip_meta_fields,
    to_create_schema_json,
)

__all__ = [
    "META_FIELDS",
    "OPERATION_FIELD",
    "add_meta_fields",
    "arrow_to_avro",
    "avro_to_arrow",
    "meta_arrow_fields",
    "parse_avro_schema",
    "strip_meta_fields",
    "to_create_schema_json",
]
