"""Hudi's internal schemas (schema on read): which histories read wrong by column name, and the
columns of a file written under one version read as another's, by id."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
from hudi_core.schema.internal import SchemaHistory, renamed_fields, versions


def _schema(version: int, *fields: tuple[int, str, Any]) -> dict[str, Any]:
    return {"version_id": version, "type": "record",
            "fields": [{"id": i, "name": n, "optional": True, "type": t} for i, n, t in fields]}  # fmt: skip


def _info(*fields: tuple[int, str, Any]) -> dict[str, Any]:
    return {
        "type": "record",
        "fields": [{"id": i, "name": n, "optional": True, "type": t} for i, n, t in fields],
    }


def test_added_dropped_and_moved_columns_read_the_same_by_name() -> None:
    history = [_schema(0, (5, "id", "string"), (6, "v", "string"), (7, "x", "long")),
               _schema(2, (5, "id", "string"), (8, "z", "string"), (6, "v", "string"))]  # fmt: skip
    assert renamed_fields(history) == []


def test_a_rename_or_a_name_reused_by_a_new_column_is_found() -> None:
    renamed = [
        _schema(2, (5, "id", "string"), (6, "w", "string")),
        _schema(0, (5, "id", "string"), (6, "v", "string")),
    ]
    assert renamed_fields(renamed) == ["v -> w"]  # (the history lists the newest first)
    reused = [
        _schema(0, (5, "id", "string"), (6, "v", "string")),
        _schema(3, (5, "id", "string"), (9, "v", "long")),
    ]
    assert renamed_fields(reused) == ["v (dropped, then added)"]


def test_a_field_of_a_struct_in_a_list_renamed() -> None:
    def table(version: int, name: str) -> dict[str, Any]:
        element = _info((10, name, "int"))
        return _schema(version, (5, "l", {"type": "array", "element_id": 9, "element": element}))

    assert renamed_fields([table(0, "a"), table(1, "b")]) == ["l.element.a -> l.element.b"]


def test_versions_of_a_history_file() -> None:
    text = json.dumps({"schemas": [_schema(2, (5, "id", "string")), _schema(0, (5, "id", "string"))]})
    assert [v["version_id"] for v in versions(text)] == [2, 0]


_S1 = {
    "type": "record",
    "fields": [{"id": 11, "name": "f1", "type": "string"}, {"id": 12, "name": "f2", "type": "int"}],
}
_S2 = {
    "type": "record",
    "fields": [{"id": 11, "name": "g1", "type": "string"}, {"id": 12, "name": "f2", "type": "int"}],
}
#: written: v, x (id 9) and s.f1; query: v renamed u, s.f1 renamed g1, x dropped and added again (id 13)
_WRITTEN = _schema(0, (5, "id", "string"), (7, "v", "string"), (9, "x", "int"), (10, "s", _S1))
_QUERY = _schema(
    20240201000000000, (5, "id", "string"), (7, "u", "string"), (10, "s", _S2), (13, "x", "string")
)


def test_a_file_read_as_the_query_by_id() -> None:
    history = SchemaHistory(_QUERY, {}, [_WRITTEN, _QUERY])
    columns = history.file_columns("20240101000000000")
    assert columns is not None
    # the old x is another column: not read, whatever its name
    assert columns.names(["id", "u", "x", "s"]) == ["id", "v", "s"]
    struct = pa.array(
        [{"f1": "a", "f2": 1}, None, {"f1": "c", "f2": 3}],
        pa.struct([("f1", pa.string()), ("f2", pa.int32())]),
    )
    raw = pa.table(
        {"id": ["1", "2", "3"], "v": ["v1", "v2", None], "x": pa.array([1, 2, 3], pa.int32()), "s": struct}
    )
    got = columns.to_query(raw.slice(1))  # a slice: offsets into the children
    assert got.column_names == ["id", "u", "s"]
    assert got.to_pylist() == [
        {"id": "2", "u": "v2", "s": None},
        {"id": "3", "u": None, "s": {"g1": "c", "f2": 3}},
    ]
    # a file written under the query's own version needs nothing
    assert history.file_columns("20240201000000001") is None


def test_renamed_fields_in_lists_and_maps() -> None:
    def table(version: int, name: str) -> dict[str, Any]:
        element = _info((10, name, "int"))
        return _schema(version, (5, "l", {"type": "array", "element_id": 9, "element": element}),
                       (6, "m", {"type": "map", "key_id": 7, "key": "string", "value_id": 8, "value": element}))  # fmt: skip

    columns = SchemaHistory(table(1, "b"), {}, [table(0, "a")]).file_columns("5")
    assert columns is not None
    element = pa.struct([("a", pa.int32())])
    raw = pa.table({
        "l": pa.array([[{"a": 1}, {"a": 2}], None, [{"a": 3}]], pa.list_(element)),
        "m": pa.array([[("k", {"a": 4})], [], None], pa.map_(pa.string(), element)),
    })  # fmt: skip
    got = columns.to_query(raw.slice(1))
    assert got.column("l").to_pylist() == [None, [{"b": 3}]]
    assert got.column("m").to_pylist() == [[], None]
    assert columns.to_query(raw).column("m").to_pylist()[0] == [("k", {"b": 4})]


def test_which_version_a_file_was_written_under() -> None:
    """Its commit's latest_schema first, else the newest version up to its instant (Hudi's
    InternalSchemaCache), else none: names are matched as they are."""
    v0, v20 = _schema(0, (5, "id", "string")), _schema(20, (5, "key", "string"))
    history = SchemaHistory(v20, {"15": v20}, [v20, v0])
    assert history.written("15") is v20  # the commit says so, whatever the history
    assert history.written("19") is v0
    assert history.written("20") is v20
    assert SchemaHistory(v20, {}, [v20]).written("19") is None
