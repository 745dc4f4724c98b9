"""Apache Hudi's internal schemas (``hoodie.schema.on.read.enable``): each field carries an id,
so ``ALTER TABLE ... RENAME COLUMN`` changes a name while the files written before keep the old
one, and Hudi's readers match columns by id. The versions live in the commits' ``latest_schema``
and in ``.hoodie/.schema/<instant>.schemacommit`` (``{"schemas": [newest first]}``).

A table whose history gives one id two names (a rename), or one name two ids (a column dropped
and added again), is read as Hudi reads it (:class:`SchemaHistory`): a file written at an instant
holds the columns of the internal schema of that instant (the ``latest_schema`` of its commit,
else the newest version up to it), and each of the query's columns is the file's column of the
same id, under the query's name; a column whose id the file does not hold is null, whatever the
file holds under its name. Tables without such a history are matched by name, as before (adds,
drops for good, moves and type changes read right so).

>>> history.file_columns("20240101000000000").to_query(raw)  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

__all__ = ["LATEST_SCHEMA", "FileColumns", "SchemaHistory", "renamed_fields", "versions"]

#: the commit metadata key of the internal schema a commit was written with
LATEST_SCHEMA = "latest_schema"


def versions(history: str) -> list[dict[str, Any]]:
    """The schema versions of a ``.schemacommit`` file's text."""
    parsed = json.loads(history)
    return list(parsed.get("schemas") or []) if isinstance(parsed, dict) else []


def _fields(record: dict[str, Any], prefix: str = "") -> Iterator[tuple[int, str]]:
    """(id, dotted name) of every named field, nested records' fields included."""
    for f in record.get("fields") or []:
        name = f"{prefix}{f.get('name')}"
        yield int(f["id"]), name
        yield from _nested(f.get("type"), name)


def _nested(kind: Any, name: str) -> Iterator[tuple[int, str]]:
    if not isinstance(kind, dict):
        return
    if kind.get("type") == "record":
        yield from _fields(kind, f"{name}.")
    elif kind.get("type") == "array":
        yield from _nested(kind.get("element"), f"{name}.element")
    elif kind.get("type") == "map":
        yield from _nested(kind.get("value"), f"{name}.value")


def renamed_fields(schemas: Iterable[dict[str, Any]]) -> list[str]:
    """What makes matching by name wrong across ``schemas``: ``"old -> new"`` for a field id
    with two names, ``"name (dropped, then added)"`` for a name with two ids."""
    names: dict[int, str] = {}
    ids: dict[str, int] = {}
    found: list[str] = []
    for schema in sorted(schemas, key=_version):
        for field_id, name in _fields(schema):
            before = names.setdefault(field_id, name)
            if before != name:
                found.append(f"{before} -> {name}")
                names[field_id] = name
            if ids.setdefault(name, field_id) != field_id:
                found.append(f"{name} (dropped, then added)")
                ids[name] = field_id
    return list(dict.fromkeys(found))


def _version(schema: Mapping[str, Any]) -> int:
    return int(schema.get("version_id") or 0)


class SchemaHistory:
    """The internal schemas a table's files were written under, and the query's: what each
    file calls the query's columns (picklable: a read's splits carry it to their tasks).

    ``commits`` maps a completed commit's instant to the ``latest_schema`` it stores,
    ``history`` holds the ``.schemacommit`` versions; a file of instant ``t`` was written under
    its commit's schema, else under the newest version whose ``version_id`` is at most ``t``
    (Hudi's ``InternalSchemaCache.getInternalSchemaByVersionId``), else (written before the
    table had internal schemas) under names the query matches as they are."""

    def __init__(
        self, query: dict[str, Any], commits: Mapping[str, dict[str, Any]], history: Sequence[dict[str, Any]]
    ) -> None:
        self.query = query
        self._commits = dict(commits)
        self._history = sorted(history, key=_version)
        self._columns: dict[int, FileColumns | None] = {}

    def file_columns(self, instant: str | None) -> FileColumns | None:
        """How a file written at ``instant`` holds the query's columns; None where it holds
        them under the query's names (nothing to map)."""
        written = self.written(instant)
        if written is None:
            return None
        version = _version(written)
        if version not in self._columns:
            columns = FileColumns(written, self.query)
            self._columns[version] = None if columns.identity else columns
        return self._columns[version]

    def written(self, instant: str | None) -> dict[str, Any] | None:
        """The internal schema a file of ``instant`` was written under (None: unknown)."""
        if not instant:
            return None
        if instant in self._commits:
            return self._commits[instant]
        if not instant.isdigit():
            return None
        found = None
        for schema in self._history:
            if _version(schema) > int(instant):
                break
            found = schema
        return found


class FileColumns:
    """The query's columns in files written under another internal schema, matched by id: the
    columns to read (:meth:`names`) and the rows read renamed to the query's names, nested
    fields included (:meth:`to_query`). Types are left as the file holds them (alignment with
    the table's schema casts them after)."""

    def __init__(self, written: dict[str, Any], query: dict[str, Any]) -> None:
        self._plan: dict[str, tuple[str, Any, Any]] = {}  # query name -> (file name, file type, query type)
        file_fields = _record_fields(written)
        claimed: set[str] = set()
        identity = True
        query_names = set()
        for field_id, (name, kind) in _record_fields(query).items():
            query_names.add(name)
            if field_id not in file_fields:
                continue
            file_name, file_kind = file_fields[field_id]
            self._plan[name] = (file_name, file_kind, kind)
            claimed.add(file_name)
            identity = identity and file_name == name and _same(file_kind, kind)
        #: names the file holds for ids the query does not have (dropped): never read as a
        #: query column of that name
        self._held = {name for name, _ in file_fields.values()}
        self._stale = self._held - claimed
        self.identity = identity and not (self._stale & query_names)

    def names(self, columns: Sequence[str] | None) -> list[str] | None:
        """The file's names of the query's ``columns`` it holds (None: every column)."""
        if columns is None:
            return None
        out = []
        for c in columns:
            if c in self._plan:
                out.append(self._plan[c][0])
            elif c not in self._held:
                out.append(c)  # not a column of the file's internal schema
        return out

    def to_query(self, table: pa.Table) -> pa.Table:
        """``table`` (read from such a file) as the query's columns: the file's column of each
        query column's id under the query's name, nested fields likewise; what the file holds
        under names of other ids is left out."""
        present = {name: i for i, name in enumerate(table.column_names)}
        cols, fields = [], []
        taken = set()
        for name, (file_name, file_kind, kind) in self._plan.items():
            i = present.get(file_name)
            if i is None:
                continue
            taken.add(file_name)
            column = table.column(i)
            if not _same(file_kind, kind):
                column = pa.chunked_array(
                    [_converted(c, file_kind, kind) for c in column.chunks],
                    _converted_type(column.type, file_kind, kind),
                )
            cols.append(column)
            fields.append(table.schema.field(i).with_name(name).with_type(column.type))
        for i, name in enumerate(table.column_names):
            if name not in taken and name not in self._stale:
                cols.append(table.column(i))
                fields.append(table.schema.field(i))
        if not fields:
            return table.select([])
        return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=table.schema.metadata))


def _record_fields(record: Mapping[str, Any]) -> dict[int, tuple[str, Any]]:
    return {int(f["id"]): (str(f.get("name")), f.get("type")) for f in record.get("fields") or []}


def _kind(kind: Any) -> str | None:
    return kind.get("type") if isinstance(kind, dict) else None


def _same(file_kind: Any, kind: Any) -> bool:
    """Whether values of ``file_kind`` carry ``kind``'s names at every level (nothing to map)."""
    what = _kind(kind)
    if what != _kind(file_kind) or what is None:
        return True  # a primitive, or a change of kind alignment reports
    if what == "record":
        theirs, ours = _record_fields(file_kind), _record_fields(kind)
        same = all(
            theirs[i][0] == name and _same(theirs[i][1], k) for i, (name, k) in ours.items() if i in theirs
        )
        stale = {n for i, (n, _) in theirs.items() if i not in ours}
        return same and not (stale & {n for n, _ in ours.values()})
    if what == "array":
        return _same(file_kind.get("element"), kind.get("element"))
    if what == "map":
        return _same(file_kind.get("key"), kind.get("key")) and _same(
            file_kind.get("value"), kind.get("value")
        )
    return True


def _converted_type(dt: pa.DataType, file_kind: Any, kind: Any) -> pa.DataType:
    """The Arrow type :func:`_converted` gives an array of ``dt``."""
    return _converted(pa.array([], dt), file_kind, kind).type


def _converted(arr: pa.Array, file_kind: Any, kind: Any) -> pa.Array:
    """``arr`` (values of ``file_kind``) with ``kind``'s names: a struct's children matched by
    id, renamed, those of other ids left out; list elements and map entries likewise."""
    if _same(file_kind, kind):
        return arr
    what = _kind(kind)
    dt = arr.type
    if arr.offset and what in ("array", "map"):  # a slice's offsets, rebuilt from zero
        arr = pa.concat_arrays([arr])
    if what == "record" and pa.types.is_struct(dt):
        theirs = _record_fields(file_kind)
        children, names = [], []
        for field_id, (name, k) in _record_fields(kind).items():
            if field_id not in theirs:
                continue
            file_name, file_k = theirs[field_id]
            index = dt.get_field_index(file_name)
            if index < 0:
                continue
            children.append(_converted(arr.field(index), file_k, k))
            names.append(name)
        mask = arr.is_null() if arr.null_count else None
        if not children:  # no field the query knows: nulls or empty records alike to alignment
            return pa.nulls(len(arr), pa.struct([]))
        return pa.StructArray.from_arrays(children, names=names, mask=mask)
    if what == "array" and (pa.types.is_list(dt) or pa.types.is_large_list(dt)):
        values = _converted(arr.values, file_kind.get("element"), kind.get("element"))
        mask = arr.is_null() if arr.null_count else None
        builder = pa.LargeListArray if pa.types.is_large_list(dt) else pa.ListArray
        return builder.from_arrays(arr.offsets, values, mask=mask)
    if what == "map" and pa.types.is_map(dt):
        keys = _converted(arr.keys, file_kind.get("key"), kind.get("key"))
        items = _converted(arr.items, file_kind.get("value"), kind.get("value"))
        mask = arr.is_null() if arr.null_count else None
        return pa.MapArray.from_arrays(arr.offsets, keys, items, mask=mask)
    return arr
