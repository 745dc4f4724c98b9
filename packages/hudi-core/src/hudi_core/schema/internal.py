"""Apache Hudi's internal schemas (``hoodie.schema.on.read.enable``): each field carries an id,
so ``ALTER TABLE ... RENAME COLUMN`` changes a name while the files written before keep the old
one, and Hudi's readers match columns by id. The versions live in the commits' ``latest_schema``
and in ``.hoodie/.schema/<instant>.schemacommit`` (``{"schemas": [newest first]}``).

Our readers and writers match columns by name, so a table whose history gives one id two names
(a rename), or one name two ids (a column dropped and added again), would read wrong: it is
refused (:func:`renamed_fields`). Columns added, dropped for good, reordered or widened read
right by name."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["LATEST_SCHEMA", "renamed_fields", "versions"]

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
    for schema in sorted(schemas, key=lambda s: int(s.get("version_id") or 0)):
        for field_id, name in _fields(schema):
            before = names.setdefault(field_id, name)
            if before != name:
                found.append(f"{before} -> {name}")
                names[field_id] = name
            if ids.setdefault(name, field_id) != field_id:
                found.append(f"{name} (dropped, then added)")
                ids[name] = field_id
    return list(dict.fromkeys(found))
