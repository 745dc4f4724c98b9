"""Record keys of rows: the ``_hoodie_record_key`` column, or computed (virtual keys)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.table.config import TableConfig

__all__ = ["KEY_COLUMN", "delete_keys", "in_other_encoding", "record_keys", "single_complex_key_field"]

KEY_COLUMN = "_hoodie_record_key"


def record_keys(data: pa.Table, config: TableConfig) -> pa.ChunkedArray | pa.Array:
    """Keys per row: the stored key with meta fields, else (``hoodie.populate.meta.fields=false``)
    the table's key generator applied to the data columns."""
    if config.populate_meta_fields and KEY_COLUMN in data.column_names:
        return data.column(KEY_COLUMN)
    from hudi_core.keygen import key_generator_for

    return key_generator_for(config).record_keys(data)


def single_complex_key_field(config: TableConfig) -> str | None:
    """The key field of a table without meta columns keyed by the complex key generator over one
    field, else None. Such a table stores no key to tell its encoding by: Apache Hudi 0.14.1 and
    0.15.0 compute its keys as the bare value (HUDI-7001), its other releases, and our readers
    unless told otherwise, as ``<field>:<value>``; so the keys their delete blocks hold differ."""
    if config.populate_meta_fields or not (config.keygen_class or "").endswith(".ComplexKeyGenerator"):
        return None
    fields = config.record_key_fields
    return fields[0] if len(fields) == 1 else None


def delete_keys(deletes: pa.Table, config: TableConfig) -> pa.Table:
    """A delete block's keys (:meth:`~hudi_core.log.reader.LogBlock.deletes`) in the encoding
    the table's readers compute its keys in: under :func:`single_complex_key_field`, a key of the
    other encoding is turned into this one (each key once), so a delete written by any Hudi
    release applies."""
    field = single_complex_key_field(config)
    if field is None or deletes.num_rows == 0:
        return deletes
    from hudi_core.keygen import key_generator_for

    prefix = f"{field}:"
    probe = key_generator_for(config).record_keys(pa.table({field: ["v"]}))
    keys = deletes.column(KEY_COLUMN).combine_chunks().cast(pa.string())
    prefixed = pc.starts_with(keys, prefix)
    other_form = prefixed if str(probe[0]) == "v" else pc.invert(prefixed)
    keys = pc.if_else(other_form, in_other_encoding(keys, field), keys)
    out = deletes.set_column(deletes.column_names.index(KEY_COLUMN), KEY_COLUMN, keys)
    rows = pa.table({"key": keys, "row": pa.array(np.arange(len(keys), dtype=np.int64))})
    first = rows.group_by("key", use_threads=False).aggregate([("row", "min")]).column("row_min")
    return out.take(pa.array(np.sort(first.to_numpy())))


def in_other_encoding(keys: pa.Array, field: str) -> pa.Array:
    """Each key of the complex key generator over the one ``field`` in the other encoding
    (:func:`single_complex_key_field`): ``<field>:<value>`` bare, a bare value prefixed."""
    prefix = f"{field}:"
    return pc.if_else(
        pc.starts_with(keys, prefix),
        pc.utf8_slice_codeunits(keys, len(prefix)),
        pc.binary_join_element_wise(prefix, keys, ""),
    )
