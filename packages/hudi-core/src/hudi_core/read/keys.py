"""Record keys of rows: the ``_hoodie_record_key`` column, or computed (virtual keys)."""

from __future__ import annotations

import pyarrow as pa

from hudi_core.table.config import TableConfig

__all__ = ["KEY_COLUMN", "record_keys"]

KEY_COLUMN = "_hoodie_record_key"


def record_keys(data: pa.Table, config: TableConfig) -> pa.ChunkedArray | pa.Array:
    """Keys per row: the stored key with meta fields, else (``hoodie.populate.meta.fields=false``)
    the table's key generator applied to the data columns."""
    if config.populate_meta_fields and KEY_COLUMN in data.column_names:
        return data.column(KEY_COLUMN)
    from hudi_core.keygen import key_generator_for

    return key_generator_for(config).record_keys(data)
