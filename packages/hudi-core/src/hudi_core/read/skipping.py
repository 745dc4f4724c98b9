"""Data skipping by record key: a snapshot or read_optimized query whose filters pin the record
key (``=`` or ``in`` on ``_hoodie_record_key``, or on the table's single key field where the key
is that field's text) reads a base file only where it may hold one of the keys: its footer's
min/max record keys and bloom filter, then, for a few keys, its key column decide. A slice whose
base file does not hold them is left out when it has no log files to read; otherwise its log
files are read alone: the keys' rows there cannot meet a base row, so the merge without the base
file gives them exactly.

Apache Hudi's reader skips files by key only through its metadata table's indexes; the bloom
filter and the min/max keys are in every base file's footer anyway (its writers' bloom index
reads them), so a point look-up here costs the footers and a few key columns, not the table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.errors import HudiError
from hudi_core.fs_view.model import FileSlice
from hudi_core.io.base_file import footer_may_hold, key_span
from hudi_core.read.filters import Filter
from hudi_core.read.keys import KEY_COLUMN
from hudi_core.read.parallel import ordered_map, read_parallelism

if TYPE_CHECKING:
    from hudi_core.table.config import TableConfig
    from hudi_core.table.meta_client import MetaClient

__all__ = ["filter_keys", "skip_by_key"]

#: key generators whose record key of one field is that field's value as text (Hudi's simple
#: key, which the non-partitioned and timestamp-based ones use too); a complex key of one field
#: is ``field:value`` or the bare value depending on a write setting the table does not record
_BARE_KEYGENS = frozenset({"SimpleKeyGenerator", "SimpleAvroKeyGenerator", "NonpartitionedKeyGenerator",
                           "NonpartitionedAvroKeyGenerator", "TimestampBasedKeyGenerator",
                           "TimestampBasedAvroKeyGenerator"})  # fmt: skip


#: below this many slices the footers are read on the calling thread
_THREADS_FROM = 4
#: up to this many keys, a base file whose footer may hold one has its key column read to know
#: (one column of the file); more keys are likely in most files, which are then read anyway
_KEY_COLUMN_PROBE = 64


def filter_keys(config: TableConfig, schema: pa.Schema, filters: Sequence[Filter]) -> pa.Array | None:
    """The record keys a row must have one of to pass ``filters`` (ANDed): from each ``=`` or
    ``in`` on ``_hoodie_record_key``, or on the single record key field when it is a string
    column whose text is the key; None when the filters allow any key."""
    keys: set[str] | None = None
    for column, op, value in filters:
        if op not in ("=", "in") or not _names_the_key(config, schema, column):
            continue
        values = [value] if op == "=" else list(value)
        if not all(v is None or isinstance(v, str) for v in values):
            return None  # a value of another type: the filter decides, row by row
        found = {v for v in values if v is not None}  # (no row's key is null)
        keys = found if keys is None else keys & found
    return None if keys is None else pa.array(sorted(keys), pa.string())


def _names_the_key(config: TableConfig, schema: pa.Schema, column: str) -> bool:
    if column == KEY_COLUMN:
        return bool(config.populate_meta_fields)
    fields = config.record_key_fields
    keygen = (config.keygen_class or "").rsplit(".", 1)[-1]
    return (
        len(fields) == 1
        and fields[0] == column
        and (keygen in _BARE_KEYGENS or (not keygen and len(config.partition_fields) <= 1))
        and schema.get_field_index(column) >= 0
        and pa.types.is_string(schema.field(column).type)
    )


def skip_by_key(
    table: MetaClient, slices: list[FileSlice], keys: pa.Array, *, with_logs: bool
) -> list[FileSlice]:
    """``slices`` without the base files that hold none of ``keys``: a slice left with no file
    is dropped, one with log files (``with_logs``: a snapshot) keeps them. The files are asked
    on ``hoodie.read.parallelism`` threads."""
    wanted, span = key_span(keys)
    if len(wanted) == 0:
        return []
    storage, stored = table.storage, bool(table.config.populate_meta_fields)

    def may_hold(fs: FileSlice) -> bool:
        if fs.base_file is None:
            return True
        path = storage.arrow_path(fs.base_file.path)
        try:
            with pq.ParquetFile(path, filesystem=storage.arrow_filesystem()) as file:
                meta = file.metadata
                # a bloom filter tests a key in ~200 ns: for more keys than the file has rows,
                # reading the file costs less than asking it
                if not footer_may_hold(meta, wanted, span, probe=lambda _chars, n: n <= meta.num_rows):
                    return False
                if not stored or len(wanted) > _KEY_COLUMN_PROBE:
                    return True
                # Hudi's filter holds 100k keys at most (its dynamic.max.entries): past that it
                # says "maybe" to most keys, so the key column tells for sure
                held = file.read(columns=[KEY_COLUMN], use_threads=False).column(0)
        except (OSError, pa.ArrowException, HudiError):
            return True  # the read itself reports a file it cannot open
        return bool(pc.any(pc.is_in(held, value_set=wanted)).as_py())

    workers = 1 if len(slices) < _THREADS_FROM else read_parallelism(table.options)
    kept = []
    for fs, hold in zip(slices, ordered_map(may_hold, slices, workers), strict=True):
        if hold:
            kept.append(fs)
        elif with_logs and fs.log_files:
            kept.append(dataclasses.replace(fs, base_file=None))
    return kept
