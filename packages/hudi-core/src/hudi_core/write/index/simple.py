"""SIMPLE index: join incoming keys with the keys stored in the latest base files of the
affected partitions (a pyarrow hash join, no per-record dictionaries)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hudi_core import keymatch
from hudi_core.io.base_file import footer_may_hold, key_span
from hudi_core.read.files import open_parquet
from hudi_core.read.parallel import ordered_map, read_parallelism
from hudi_core.write.index.slices import FileGroupLocation, file_group_locations
from hudi_core.write.payload import Payload
from hudi_core.write.records import BASE_INSTANT, FILE_ID, LOCATION_PARTITION, PARTITION_PATH, RECORD_KEY

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView

__all__ = ["LOCATIONS_SCHEMA", "SimpleIndex", "existing_key_locations", "join_locations"]

_ROW = "_hoodie_w_row"
_EMPTY = pa.schema(
    [(RECORD_KEY, pa.string()), (LOCATION_PARTITION, pa.string()), (FILE_ID, pa.string()),
     (BASE_INSTANT, pa.string())]
)  # fmt: skip
#: the schema of ``existing_key_locations`` (public name for engines that ship it to tasks)
LOCATIONS_SCHEMA = _EMPTY


def _file_keys(view: FileSystemView, file: pq.ParquetFile) -> pa.Array:
    """Record keys of a base file: the key column only, or (virtual keys) the key generator over
    the record key fields."""
    table = view.table
    if table.config.populate_meta_fields:
        cols = [RECORD_KEY]
    else:
        cols = [f.split(".")[0] for f in table.config.record_key_fields]
    data = file.read(columns=cols, use_threads=False)
    if table.config.populate_meta_fields:
        keys = data.column(RECORD_KEY)
    else:
        from hudi_core.keygen import key_generator_for

        keys = key_generator_for(table.write_config()).record_keys(data)
    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    return keys.cast(pa.string())


#: what a footer bloom filter probe and a key column read cost, measured on the project's 2-core
#: machines (ns): decoding the filter per character of its serialized form (a 123k-row file's
#: DYNAMIC_V0 filter: 863k characters, 4.6 ms), testing it per wanted key, reading the key
#: column per row of the file (6.4 ms for that file)
_FILTER_NS_PER_CHAR, _PROBE_NS_PER_KEY, _READ_NS_PER_ROW = 5.3, 205, 52


def _worth_probing(filter_chars: int, wanted: int, rows: int) -> bool:
    """Whether to probe a file's bloom filter before reading its keys. A probe that rules the file
    out saves the read; one that does not (random keys: nearly always) is spent on top of it. So
    probe only when it costs at most half the read: few wanted keys against a large file (Hudi's
    SIMPLE index never probes; its BLOOM index always). The filter's own decoding counts: for a
    file of Hudi's default filter and ~120k rows it alone costs more than half the read."""
    probe = filter_chars * _FILTER_NS_PER_CHAR + wanted * _PROBE_NS_PER_KEY
    return 0 < wanted and 2 * probe < rows * _READ_NS_PER_ROW


def _may_hold(meta: pq.FileMetaData, wanted: pa.Array, span: tuple[str, str] | None) -> bool:
    """:func:`~hudi_core.io.base_file.footer_may_hold`, probing the bloom filter only when
    :func:`_worth_probing` says so."""
    return footer_may_hold(
        meta, wanted, span, probe=lambda chars, keys: _worth_probing(chars, keys, meta.num_rows)
    )


def _slice_keys(
    view: FileSystemView,
    s: FileGroupLocation,
    wanted: pa.Array | None = None,
    span: tuple[str, str] | None = None,
) -> pa.Array | None:
    """The record keys of the slice's base file, or None when it has none or its footer rules out
    every key of ``wanted``."""
    if s.base_file is None:
        return None
    with open_parquet(view.table.storage, s.base_file.path, s.base_file.size) as (file, _):
        if wanted is not None and not _may_hold(file.metadata, wanted, span):
            return None
        return _file_keys(view, file)


def _locations(files: list[FileGroupLocation], keys: list[pa.Array], wanted: pa.Array | None) -> pa.Table:
    """The location table of ``files``' ``keys`` (one array per file), only those in ``wanted``
    (when given): one match for all the files, so ``wanted``'s hash table is built once, not once
    per file (the look-up of a 1M-row upsert's keys in a 10M-row table, 17 files a partition:
    2.5-3.7 s matching file by file, 1.4-2.1 s in groups of 8)."""
    column = pa.chunked_array(keys, pa.string())
    which = np.repeat(np.arange(len(files), dtype=np.int32), [len(k) for k in keys])
    if wanted is not None:
        mask = pc.is_in(column, value_set=wanted)
        column = column.filter(mask)
        which = which[mask.to_numpy(zero_copy_only=False)]
    at = pa.array(which, pa.int32())

    def per_file(values: list[str]) -> pa.Array:
        return pa.array(values, pa.string()).take(at)

    return pa.table(
        {
            RECORD_KEY: column.combine_chunks(),
            LOCATION_PARTITION: per_file([s.partition_path for s in files]),
            FILE_ID: per_file([s.file_id for s in files]),
            BASE_INSTANT: per_file([s.base_instant for s in files]),
        }
    )


#: files whose keys are matched with a write's keys at once (one hash table of the write's keys)
_MATCH_FILES = 8


def existing_key_locations(
    view: FileSystemView,
    partitions: Iterable[str] | None,
    *,
    keys: pa.Array | pa.ChunkedArray | None = None,
    key_partitions: pa.Array | pa.ChunkedArray | None = None,
) -> pa.Table:
    """``(record key, partition, file id, base instant)`` of every key in the latest base files
    of ``partitions`` (all partitions when None); file groups under a pending compaction are
    read from the slice before it and located at the compaction instant.

    With ``keys`` (the write's record keys) only those keys are returned, and files whose
    footer min/max keys and bloom filter rule them all out are not read; with
    ``key_partitions`` too (each key's partition path: a partition's keys live in it alone, as
    for a non-global index) only the keys' partitions are read (``partitions`` is then not
    needed), each file matched against its own partition's keys. Files' key columns are read on
    ``hoodie.read.parallelism`` threads (pyarrow, without the GIL), in groups of up to 8 files of
    one partition, each group's keys matched with the write's keys in one step."""
    # the keys each file is matched against, by partition (None: every partition's file)
    wanted: dict[str | None, tuple[pa.Array, tuple[str, str] | None]] | None = None
    if keys is not None:
        keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        keys = keys.cast(pa.string())
        if key_partitions is None:
            wanted = {None: key_span(keys)}
        else:
            parts = (
                key_partitions.combine_chunks()
                if isinstance(key_partitions, pa.ChunkedArray)
                else key_partitions
            )
            codes = parts.cast(pa.string()).dictionary_encode()
            names = codes.dictionary.to_pylist()
            # one stable sort groups the keys by partition (a filter per partition would pass
            # over every key once per partition)
            code = pc.fill_null(codes.indices, -1).to_numpy(zero_copy_only=False)
            order = np.argsort(code, kind="stable")
            bounds = np.searchsorted(code[order], np.arange(len(names) + 1))
            grouped = keys.take(pa.array(order))
            wanted = {
                name: key_span(grouped.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i])))
                for i, name in enumerate(names)
            }
            partitions = names
    locs = file_group_locations(view, partitions)
    size = sum(int(s.base_file.size or 0) for s in locs if s.base_file is not None)
    workers = read_parallelism(view.table.options, total_bytes=size)

    # the files matched against each set of the write's keys (a partition's, or all of them), in
    # groups of up to 8 whose key columns are read and matched at once on one thread; without
    # the write's keys, every file on its own
    Match = tuple[pa.Array, tuple[str, str] | None] | None
    jobs: list[tuple[list[FileGroupLocation], Match]] = []
    if wanted is None:
        jobs = [([s], None) for s in locs]
    else:
        by_key: dict[str | None, list[FileGroupLocation]] = {}
        for s in locs:
            key = None if key_partitions is None else s.partition_path
            if key in wanted:
                by_key.setdefault(key, []).append(s)
        for key, files in by_key.items():
            jobs += [(files[i : i + _MATCH_FILES], wanted[key]) for i in range(0, len(files), _MATCH_FILES)]

    def located(job: tuple[list[FileGroupLocation], Match]) -> pa.Table | None:
        files, match = job
        match_keys, span = match if match is not None else (None, None)
        kept = [(s, k) for s in files if (k := _slice_keys(view, s, match_keys, span)) is not None]
        return _locations([s for s, _ in kept], [k for _, k in kept], match_keys) if kept else None

    tables = [t for t in ordered_map(located, jobs, workers) if t is not None]
    return pa.concat_tables(tables) if tables else _EMPTY.empty_table()


def _composite(keys: pa.ChunkedArray | pa.Array, parts: pa.ChunkedArray | pa.Array | None) -> pa.Array:
    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    if parts is None:
        return keys
    parts = parts.combine_chunks() if isinstance(parts, pa.ChunkedArray) else parts
    return pc.binary_join_element_wise(parts, keys, "\x00")


def _located(data: pa.Table, existing: pa.Table, pos: pa.Array | pa.ChunkedArray) -> pa.Table:
    """``data`` with the location columns of ``existing``'s rows at ``pos`` (null: a new key)."""
    out = data
    for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
        out = out.append_column(name, existing.column(name).take(pos))
    return out


def join_locations(data: pa.Table, existing: pa.Table, *, global_: bool) -> pa.Table:
    """``data`` with FILE_ID, BASE_INSTANT and LOCATION_PARTITION from ``existing`` (nulls for
    new keys), rows kept in input order."""
    data = data.drop_columns(
        [c for c in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION) if c in data.column_names]
    )
    if existing.num_rows == 0:  # nothing stored (e.g. bulk_insert): every key is new
        out = data
        for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
            out = out.append_column(name, pa.nulls(data.num_rows, pa.string()))
        return out
    existing = existing.select([RECORD_KEY, FILE_ID, BASE_INSTANT, LOCATION_PARTITION])
    stored = existing.column(RECORD_KEY).combine_chunks()
    unique = keymatch.distinct(stored)
    if not unique:
        # A key inserted twice into one file group (insert does not deduplicate) is one location:
        # the merge handle updates every copy in that file, as Java's merge handle does.
        existing = existing.group_by(existing.column_names, use_threads=False).aggregate([])
        stored = existing.column(RECORD_KEY).combine_chunks()
        unique = keymatch.distinct(stored)
    if unique:
        # every key at one location (the usual case): a hash look-up of the keys alone, then,
        # for a partitioned look-up, only where the location's partition is the row's
        pos = keymatch.lookup(data.column(RECORD_KEY), stored)
        if not global_:
            same = pc.equal(existing.column(LOCATION_PARTITION).take(pos), data.column(PARTITION_PATH))
            pos = pc.if_else(same, pos, pa.scalar(None, pos.type))
        return _located(data, existing, pos)
    if not global_:
        right_key = _composite(stored, existing.column(LOCATION_PARTITION))
        if keymatch.distinct(right_key):  # a key in several partitions, once in each: look up both
            left_key = _composite(data.column(RECORD_KEY), data.column(PARTITION_PATH))
            return _located(data, existing, keymatch.lookup(left_key, right_key))
    # a key stored in several file groups (duplicates from inserts): every location is updated
    if global_:
        right = existing
        keys = [RECORD_KEY]
    else:
        right = existing.append_column(PARTITION_PATH, existing.column(LOCATION_PARTITION))
        keys = [RECORD_KEY, PARTITION_PATH]
    # join only the keys and a row number: Acero cannot carry nested columns through a join
    work = data.select(keys).append_column(_ROW, pa.array(np.arange(data.num_rows, dtype=np.int64)))
    joined = work.join(right, keys=keys, join_type="left outer", use_threads=True).sort_by(_ROW)
    rows = joined.column(_ROW).combine_chunks()
    out = data.take(rows) if len(rows) != data.num_rows else data
    for name in (FILE_ID, BASE_INSTANT, LOCATION_PARTITION):
        out = out.append_column(name, joined.column(name))
    return out


@dataclass(frozen=True)
class SimpleIndex:
    kind: str = "SIMPLE"
    is_global: bool = False
    update_partition_path: bool = True
    #: a global index merges a key's incoming record with its stored one before moving it
    #: (``split_partition_changes``): the payload and ordering field that merge follows
    payload: Payload = Payload.OVERWRITE_WITH_LATEST
    ordering_field: str | None = None
    #: the look-up finds each key's latest location only (a record index), not every base file
    #: that still holds it: a merge-on-read table's records are not all merged with their stored
    #: ones (Java's ``mayContainDuplicateLookup=false``)
    latest_locations: bool = False
