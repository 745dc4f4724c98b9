"""Change data capture log files (``hoodie.table.cdc.enabled``, Hudi 0.13+).

A COPY_ON_WRITE write that rewrites a file group's base file writes what changed in it beside
the new base file: one log file ``.<fileId>_<instant>.log.1_<token>.cdc`` of CDC data blocks
(block type 6, encoded as Avro data blocks; header: the instant and the block's schema), listed
in the write stat's ``cdcStats`` (``{path from the base path: size}``). A change is ``i``
(before null), ``u`` or ``d`` (after null); what a record holds beside the operation is the
table's ``hoodie.table.cdc.supplemental.logging.mode``:

- ``OP_KEY_ONLY``: ``op``, ``record_key`` (readers find the images in the file slices);
- ``DATA_BEFORE``: ``op``, ``record_key``, ``before``;
- ``DATA_BEFORE_AFTER`` (the default): ``op``, ``ts_ms`` (the instant), ``before``, ``after``.

Images are the table's records without the meta columns. New file groups, deletes of whole file
groups, MERGE_ON_READ log appends and table services write none: Apache Hudi's CDC query infers
those changes from the files themselves.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from hudi_core.config.table import CDC_LOGGING_MODES
from hudi_core.log.blocks import encode_avro_data_block
from hudi_core.log.format import BlockType, HeaderKey, encode_block

__all__ = [
    "DATA_BEFORE",
    "DATA_BEFORE_AFTER",
    "OP_KEY_ONLY",
    "cdc_avro_schema",
    "encode_cdc_block",
]

OP_KEY_ONLY, DATA_BEFORE, DATA_BEFORE_AFTER = CDC_LOGGING_MODES


def cdc_avro_schema(mode: str, data_schema: dict[str, Any]) -> dict[str, Any]:
    """The Avro schema of a CDC block's records, as Apache Hudi spells it (``HoodieCDCUtils``):
    ``data_schema`` is the table's record schema without meta columns."""
    if mode == OP_KEY_ONLY:
        return {"type": "record", "name": "Record", "fields": [
            {"name": "op", "type": ["string", "null"]}, {"name": "record_key", "type": ["string", "null"]},
        ]}  # fmt: skip

    def optional(name: str, kind: Any) -> dict[str, Any]:
        return {"name": name, "type": ["null", kind], "doc": "", "default": None}

    fields = [optional("op", "string")]
    if mode == DATA_BEFORE:
        fields += [optional("record_key", "string"), optional("before", data_schema)]
    else:
        ns = data_schema.get("namespace")
        ref = f"{ns}.{data_schema['name']}" if ns else data_schema["name"]
        fields += [optional("ts_ms", "string"), optional("before", data_schema), optional("after", ref)]
    schema: dict[str, Any] = {"type": "record", "name": "CDC"}
    if data_schema.get("namespace"):
        schema["namespace"] = data_schema["namespace"]
    schema["fields"] = fields
    return schema


def encode_cdc_block(records: pa.Table, schema: dict[str, Any], instant: str) -> bytes:
    """One CDC data block of ``records`` (the columns of ``schema``'s fields)."""
    header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: json.dumps(schema, separators=(",", ":"))}
    return encode_block(BlockType.CDC_DATA, header, encode_avro_data_block(records, schema))
