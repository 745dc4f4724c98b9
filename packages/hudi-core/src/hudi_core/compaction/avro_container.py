"""One-record Avro container files of the timeline (codec null, ``avro.schema`` metadata), with
the schemas kept in ``hudi_core/schemas/*.avsc`` (Java's, with ``avro.java.string``)."""

from __future__ import annotations

import functools
import io
import json
import os
from pathlib import Path
from typing import Any

import fastavro

from hudi_core.errors import TimelineError

__all__ = ["load_schema", "read_single_record", "write_single_record"]

_SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"


@functools.lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema ``hudi_core/schemas/<name>.avsc``."""
    raw: dict[str, Any] = json.loads((_SCHEMAS / f"{name}.avsc").read_text())
    return fastavro.parse_schema(raw)  # type: ignore[no-any-return]


def write_single_record(schema_name: str, record: dict[str, Any]) -> bytes:
    """An Avro container holding ``record`` (random sync marker, like Java's DataFileWriter)."""
    buf = io.BytesIO()
    fastavro.writer(buf, load_schema(schema_name), [record], codec="null", sync_marker=os.urandom(16))
    return buf.getvalue()


def read_single_record(data: bytes, *, what: str) -> dict[str, Any]:
    """The first record of an Avro container; ``what`` names the file in errors."""
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as e:  # fastavro raises several exception types for bad input
        raise TimelineError(f"{what} is not a readable Avro container file: {e}") from e
    if not records:
        raise TimelineError(f"{what} holds no record")
    rec: dict[str, Any] = records[0]
    return rec
