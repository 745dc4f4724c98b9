"""Fields by dotted name (``a.b`` reaches into a struct, as Hudi's key and ordering fields do),
and two versions of a column's type walked side by side through structs, lists and maps."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["field_type", "field_values", "paired_types"]


def field_type(schema: pa.Schema, field: str | None) -> pa.DataType | None:
    """The type of ``field`` in ``schema``, None where there is no such field."""
    if not field:
        return None
    head, *rest = field.split(".")
    if head not in schema.names:
        return None
    dtype = schema.field(head).type
    for name in rest:
        if not pa.types.is_struct(dtype) or dtype.get_field_index(name) < 0:
            return None
        dtype = dtype.field(name).type
    return dtype


def field_values(data: pa.Table | pa.RecordBatch, field: str | None) -> pa.ChunkedArray | pa.Array | None:
    """The values of ``field`` in ``data`` (null where a struct on the way is), None where
    ``data`` has no such field."""
    if field is None or field_type(data.schema, field) is None:
        return None
    head, *rest = field.split(".")
    values = data.column(head)
    for name in rest:
        values = pc.struct_field(values, name)
    return values


def paired_types(
    old: pa.DataType | None, new: pa.DataType | None, path: str
) -> Iterator[tuple[str, pa.DataType | None, pa.DataType | None]]:
    """(dotted path, ``old``'s type there, ``new``'s type there) for ``path`` and every field
    below it that ``new`` has, through structs (by field name), list items (``element``) and map
    values (``value``); None where one side has no such field. A field ``new`` lacks is given,
    not walked into."""
    if new is not None and pa.types.is_dictionary(new):
        new = new.value_type
    yield path, old, new
    if new is None:
        return
    if pa.types.is_struct(new):
        known = old if old is not None and pa.types.is_struct(old) else pa.struct([])
        names = [known.field(i).name for i in range(known.num_fields)]
        names += [
            new.field(i).name for i in range(new.num_fields) if known.get_field_index(new.field(i).name) < 0
        ]
        for name in names:
            i, j = known.get_field_index(name), new.get_field_index(name)
            before = known.field(i).type if i >= 0 else None
            yield from paired_types(before, new.field(j).type if j >= 0 else None, f"{path}.{name}")
    elif pa.types.is_list(new) or pa.types.is_large_list(new):
        before = old.value_type if old is not None and pa.types.is_list(old) else None
        yield from paired_types(before, new.value_type, f"{path}.element")
    elif pa.types.is_map(new):
        before = old.item_type if old is not None and pa.types.is_map(old) else None
        yield from paired_types(before, new.item_type, f"{path}.value")
