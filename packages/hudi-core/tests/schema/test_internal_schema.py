"""Hudi's internal schemas (schema on read): which histories read wrong by column name."""

from __future__ import annotations

import json
from typing import Any

from hudi_core.schema.internal import renamed_fields, versions


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
