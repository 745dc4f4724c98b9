"""Deprecated re-export for the write path (``write/commit.py``, ``write/rollback.py``): use
:mod:`hudi_core.timeline.avro_files` (``serialize`` / ``deserialize``) instead. Remove once the
write path has switched."""

from __future__ import annotations

from typing import Any

from hudi_core.avro.container import read_container
from hudi_core.errors import TimelineError
from hudi_core.timeline.avro_files import serialize

__all__ = ["read_single_record", "write_single_record"]


def write_single_record(schema_name: str, record: dict[str, Any]) -> bytes:
    """Same as ``timeline.avro_files.serialize(schema_name, record)``."""
    return serialize(schema_name, record)


def read_single_record(data: bytes, *, what: str) -> dict[str, Any]:
    """The first record of an Avro container, in its writer schema; ``what`` names the file."""
    try:
        records, _ = read_container(data)
    except TimelineError as e:
        raise TimelineError(f"{what}: {e}") from e
    if not records:
        raise TimelineError(f"{what} holds no record")
    return records[0]
