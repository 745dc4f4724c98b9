"""Record keys of rows: the ``_hoodie_record_key`` column, or computed (virtual keys)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import ConfigError
from hudi_core.table.config import TableConfig

__all__ = ["KEY_COLUMN", "record_keys"]

KEY_COLUMN = "_hoodie_record_key"


def record_keys(data: pa.Table, config: TableConfig) -> pa.ChunkedArray | pa.Array:
    """Keys per row. With meta fields the stored key; without (virtual keys) the key generator's
    (``hudi_core.keygen``), falling back to Hudi's simple/complex key format."""
    if config.populate_meta_fields and KEY_COLUMN in data.column_names:
        return data.column(KEY_COLUMN)
    try:
        from hudi_core.keygen import key_generator_for  # type: ignore[attr-defined]
    except ImportError:
        key_generator_for = None
    if key_generator_for is not None:
        return key_generator_for(config).record_keys(data)
    return _fallback_keys(data, config.record_key_fields)


def _fallback_keys(data: pa.Table, fields: list[str]) -> pa.Array | pa.ChunkedArray:
    if not fields:
        raise ConfigError("the table has no hoodie.table.recordkey.fields: cannot compute record keys")
    missing = [f for f in fields if f not in data.column_names]
    if missing:
        raise ConfigError(f"record key field(s) {missing} are not columns of the data {data.column_names}")
    # Hudi's markers for null and empty key parts (KeyGenUtils).
    strings = [_key_part(data.column(f)) for f in fields]
    if len(fields) == 1:
        return strings[0]
    parts: list[object] = []
    for i, (f, s) in enumerate(zip(fields, strings)):
        parts.extend([("," if i else "") + f + ":", s])
    return pc.binary_join_element_wise(*[p if not isinstance(p, str) else pa.scalar(p) for p in parts], "")


def _key_part(col: pa.ChunkedArray) -> pa.ChunkedArray:
    s = pc.cast(col, pa.string())
    s = pc.if_else(pc.equal(s, ""), pa.scalar("__empty__"), s)
    return pc.fill_null(s, "__null__")
