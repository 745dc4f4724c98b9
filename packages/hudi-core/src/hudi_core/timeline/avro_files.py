"""Avro container timeline files (spec 3.3, 9.1, 10.2, Appendix B): rollback plans and metadata,
compaction plans, cleaner plans and metadata, requested replace metadata.

Records are plain dicts shaped like the Avro schemas in ``hudi_core/schemas``. Reading resolves
the file's embedded writer schema to ours (so fields Java added or dropped across releases get
their defaults); writing embeds our schema with Java's string annotations.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from hudi_core.avro.container import java_annotated, read_container, write_container
from hudi_core.errors import TimelineError
from hudi_core.storage.base import Storage
from hudi_core.timeline.instant import Action, State

__all__ = [
    "CLEANER_PLAN",
    "CLEAN_METADATA",
    "COMPACTION_PLAN",
    "REQUESTED_REPLACE_METADATA",
    "ROLLBACK_METADATA",
    "ROLLBACK_PLAN",
    "SAVEPOINT_METADATA",
    "deserialize",
    "java_schema_json",
    "load_schema",
    "read_avro_timeline_file",
    "schema_for_instant_file",
    "serialize",
    "write_avro_timeline_file",
]

ROLLBACK_PLAN = "HoodieRollbackPlan"
ROLLBACK_METADATA = "HoodieRollbackMetadata"
COMPACTION_PLAN = "HoodieCompactionPlan"
CLEANER_PLAN = "HoodieCleanerPlan"
CLEAN_METADATA = "HoodieCleanMetadata"
REQUESTED_REPLACE_METADATA = "HoodieRequestedReplaceMetadata"
SAVEPOINT_METADATA = "HoodieSavepointMetadata"

_BY_INSTANT_FILE: dict[tuple[str, State], str] = {
    (Action.ROLLBACK, State.REQUESTED): ROLLBACK_PLAN,
    (Action.ROLLBACK, State.COMPLETED): ROLLBACK_METADATA,
    (Action.COMPACTION, State.REQUESTED): COMPACTION_PLAN,
    (Action.LOG_COMPACTION, State.REQUESTED): COMPACTION_PLAN,
    (Action.CLEAN, State.REQUESTED): CLEANER_PLAN,
    (Action.CLEAN, State.INFLIGHT): CLEANER_PLAN,
    (Action.CLEAN, State.COMPLETED): CLEAN_METADATA,
    (Action.REPLACE_COMMIT, State.REQUESTED): REQUESTED_REPLACE_METADATA,
    (Action.SAVEPOINT, State.COMPLETED): SAVEPOINT_METADATA,
}


@cache
def _schema_text(name: str) -> str:
    try:
        return resources.files("hudi_core.schemas").joinpath(f"{name}.avsc").read_text("utf-8")
    except FileNotFoundError as e:
        known = sorted(set(_BY_INSTANT_FILE.values()))
        raise TimelineError(f"no Avro schema named {name!r}; known: {', '.join(known)}") from e


def load_schema(name: str) -> dict[str, Any]:
    """The schema ``name`` (e.g. ``"HoodieRollbackPlan"``) as a fresh dict."""
    schema: dict[str, Any] = json.loads(_schema_text(name))
    return schema


@cache
def java_schema_json(name: str) -> str:
    """The schema as Java embeds it in container files: compact, with ``avro.java.string``."""
    return json.dumps(java_annotated(load_schema(name)), separators=(",", ":"))


def schema_for_instant_file(action: str, state: State) -> str | None:
    """Which schema a timeline file holds, or None for JSON/empty files."""
    return _BY_INSTANT_FILE.get((action, state))


def serialize(name: str, record: dict[str, Any]) -> bytes:
    """A container file with one ``name`` record."""
    try:
        return write_container(load_schema(name), [record], schema_json=java_schema_json(name))
    except (ValueError, TypeError, KeyError) as e:
        raise TimelineError(f"record does not fit the {name} Avro schema: {e}") from e


def deserialize(name: str, data: bytes) -> dict[str, Any]:
    """The single ``name`` record of a container file, resolved to our schema."""
    if not data:
        raise TimelineError(f"empty {name} file: expected an Avro container with one record")
    records, _ = read_container(data, load_schema(name))
    if len(records) != 1:
        raise TimelineError(f"{name} file holds {len(records)} records, expected exactly 1")
    return records[0]


def read_avro_timeline_file(storage: Storage, path: str, name: str) -> dict[str, Any]:
    return deserialize(name, storage.read_bytes(path))


def write_avro_timeline_file(storage: Storage, path: str, name: str, record: dict[str, Any]) -> None:
    storage.write_bytes(path, serialize(name, record))
