"""Record keys a write makes up for a table without record key fields (Hudi 0.14's
auto-generated keys): ``<instant>_<task>_<row>``, as Apache Hudi's
``AutoRecordGenWrapperKeyGenerator`` makes them, unique in the table since every write has its
own instant. A row that carries ``_hoodie_record_key`` (read back from the table) keeps its key:
that is how Hudi updates and deletes rows of such a table."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.config.write import IndexOptions, WriteOptions
from hudi_core.errors import ConfigError, InvalidRecordKeyError
from hudi_core.keygen.base import Data, KeyGenerator

__all__ = [
    "PENDING_INSTANT",
    "AutoRecordKeys",
    "check_auto_key_options",
    "default_operation",
    "generates_keys",
    "stamp_instant",
]

#: the instant of keys made before their write's instant exists (an instant time's 17 digits)
PENDING_INSTANT = "?" * 17
_KEY = "_hoodie_record_key"


def generates_keys(config: HoodieConfig) -> bool:
    """Whether a write with ``config`` (the table's properties and the write's options) makes up
    its record keys: neither names a record key field."""
    return not (
        config.get_list(WriteOptions.RECORDKEY_FIELD) or config.get_list(TableOptions.RECORDKEY_FIELDS)
    )


def default_operation(op: str, given: str | None, config: HoodieConfig, columns: list[str]) -> str:
    """A Spark write's operation: ``op``, or bulk_insert where none was ``given`` and the write
    makes its keys up (rows that do not carry them), as Apache Hudi's datasource chooses."""
    if given or not generates_keys(config) or _KEY in columns:
        return op
    return "bulk_insert"


def check_auto_key_options(config: HoodieConfig) -> None:
    """What Apache Hudi refuses with made-up keys, refused before a write starts (ConfigError)."""
    if not generates_keys(config):
        return
    refused = [
        (WriteOptions.COMBINE_BEFORE_INSERT.key, bool(config.get(WriteOptions.COMBINE_BEFORE_INSERT))),
        (WriteOptions.INSERT_DROP_DUPLICATES.key, bool(config.get(WriteOptions.INSERT_DROP_DUPLICATES))),
        (TableOptions.POPULATE_META_FIELDS.key + "=false", not config.get(TableOptions.POPULATE_META_FIELDS)),
        (IndexOptions.TYPE.key + "=BUCKET", str(config.get_str(IndexOptions.TYPE)).upper() == "BUCKET"),
    ]
    for what, on in refused:
        if on:
            raise ConfigError(
                f"{what} does not work without record key fields (the write makes up its keys); "
                "set hoodie.datasource.write.recordkey.field on a new table, or leave the option out"
            )


class AutoRecordKeys:
    """The key generator of a write that makes up its keys: ``keygen``'s partition paths, and
    keys numbered in row order across every call (one generator per write task, ``task`` its
    number). ``instant`` may be :data:`PENDING_INSTANT` until the write's instant exists
    (:func:`stamp_instant`)."""

    record_key_fields: list[str] = []

    def __init__(self, keygen: KeyGenerator, instant: str = PENDING_INSTANT, task: int = 0) -> None:
        self.keygen = keygen
        self.instant = instant
        self.task = task
        self._next = 0

    def record_keys(self, data: Data) -> pa.Array:
        n = data.num_rows
        rows = pa.array(np.arange(self._next, self._next + n, dtype=np.int64)).cast(pa.string())
        self._next += n
        made = pc.binary_join_element_wise(f"{self.instant}_{self.task}_", rows, "")
        return made if _KEY not in data.column_names else pc.coalesce(_given(data), made)

    def partition_paths(self, data: Data) -> pa.Array:
        return self.keygen.partition_paths(data)

    def stored_keys(self, data: Data) -> pa.Array:
        """The keys of a delete: every row must carry the ``_hoodie_record_key`` it was read with."""
        given = _given(data) if _KEY in data.column_names else None
        if given is None or given.null_count:
            raise InvalidRecordKeyError(
                "a delete from a table without record key fields finds rows by their "
                "_hoodie_record_key: give the rows as read from the table (with that column)"
            )
        return given


def _given(data: Data) -> pa.Array:
    """The ``_hoodie_record_key`` rows of ``data`` carry, as one string array."""
    column = data.column(_KEY)
    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return column.cast(pa.string())


def stamp_instant(keys: pa.Array, instant: str) -> pa.Array:
    """``keys`` with the instant of those made before it existed filled in."""
    return pc.replace_substring_regex(keys, f"^\\?{{{len(PENDING_INSTANT)}}}_", f"{instant}_")
