"""Streamed writes: an iterator of record batches written as one instant with bounded memory.

The index and dedupe stages need a whole batch's keys, so a stream is cut into *chunks* of at
most ``hoodie.write.stream.chunk.max.bytes`` (Arrow bytes); each chunk goes through stages 1-3
(keys, dedupe within the chunk, index lookup against the table as of the instant's start plus
an in-instant index of the keys earlier chunks inserted), then its records are routed into the
:class:`~hudi_core.write.buffer.WriteBuffer` (seed 5.1) by destination:

* new records of a partition -> one insert stream per partition: each flush writes a row group
  into the open base file of a new file group, rolling to another at ``hoodie.parquet.max.file.size``;
* records of an existing file group (or one created by this instant) -> MOR: each flush appends
  log blocks (a new log version); COW: each flush merges into the group's base file; a group
  already rewritten by this instant is merged again from that file, which it then supersedes
  (the superseded file is deleted and its write stat replaced).

Memory is bounded by the chunk size (times the few copies stages 1-3 make), the buffer's total
limit, and the keys of the open insert files (for their bloom filters). Differences from a
one-table write: the inflight workload profile is empty (a stream's workload is not known up
front), new records are not packed into existing small files, and duplicates across chunks
are resolved by the later chunk updating the record the earlier chunk wrote.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteBufferOptions
from hudi_core.write.buffer import WriteBuffer
from hudi_core.write.dedupe import deduplicate
from hudi_core.write.handles.append import append_to_file_group
from hudi_core.write.handles.context import TaskAttempt, WriteContext, WriteStatus
from hudi_core.write.handles.create import write_new_file
from hudi_core.write.handles.merge import merge_file_group
from hudi_core.write.handles.rolling import RollingCreateHandle
from hudi_core.write.index import BUCKET_NUM, BucketIndex, Index, bucket_file_id, tag_locations
from hudi_core.write.records import (
    BASE_INSTANT,
    DELETE_FLAG,
    FILE_ID,
    LOCATION_PARTITION,
    PARTITION_PATH,
    RECORD_KEY,
)

if TYPE_CHECKING:
    from hudi_core.fs_view import FileSystemView

__all__ = ["StreamWriter", "chunks"]


def chunks(source: Iterable[pa.RecordBatch | pa.Table], max_bytes: int) -> Iterator[pa.Table]:
    """Group a stream of batches into tables of about ``max_bytes`` (Arrow size)."""
    pending: list[pa.Table] = []
    size = 0
    for item in source:
        t = pa.Table.from_batches([item]) if isinstance(item, pa.RecordBatch) else item
        if t.num_rows == 0:
            continue
        pending.append(t)
        size += t.nbytes
        if size >= max_bytes:
            yield pa.concat_tables(pending, promote_options="default")
            pending, size = [], 0
    if pending:
        yield pa.concat_tables(pending, promote_options="default")


def chunk_max_bytes(config: HoodieConfig) -> int:
    return max(1, int(config.get(WriteBufferOptions.STREAM_CHUNK_MAX_BYTES)))


class StreamWriter:
    """Stages 3-5 of one instant, fed chunk by chunk (stages 1-2 already applied)."""

    def __init__(
        self, ctx: WriteContext, config: HoodieConfig, index: Index, view: FileSystemView | None, *,
        lookup: bool, dedupe: bool,
    ) -> None:  # fmt: skip
        self.ctx = ctx
        self.index = index
        self.view = view
        self.lookup = lookup
        self.buffer = WriteBuffer(config, self._flush)
        self.statuses: list[WriteStatus] = []
        self._counter = itertools.count()
        self._inserts: dict[str, RollingCreateHandle] = {}
        #: keys this instant inserted, per partition (one group for a global index): (keys, ordinal
        #: into ``_new_files`` per key), consolidated into one pair before a look-up
        self._new_keys: dict[str | None, list[tuple[pa.Array, np.ndarray]]] = {}
        self._new_files: list[tuple[str, str]] = []  # (partition, file id) by ordinal
        self._file_ordinal: dict[tuple[str, str], int] = {}
        #: (partition, file id) -> (status index, path) of base files this instant wrote (COW)
        self._written: dict[tuple[str, str], tuple[int, str]] = {}
        #: BUCKET index: (partition, hash bucket) -> file id created by this instant
        self._new_buckets: dict[tuple[str, int], str] = {}
        self._group_numbers: dict[Hashable, int] = {}
        #: (partition, file id) of every file group this instant created
        self._created: set[tuple[str, str]] = set()
        self._dedupe = dedupe
        self._config = config

    # -- routing ---------------------------------------------------------------------------------

    def add(self, records: pa.Table) -> None:
        # deletes of keys the table does not hold are kept until the in-instant lookup: they may
        # delete a key an earlier chunk inserted (flushed, or still buffered in the same bucket,
        # where the flush's dedupe lets the later delete win)
        tagged = tag_locations(records, self.index, self.view if self.lookup else None, drop_orphan_deletes=False)
        del records
        tagged = self._tag_in_instant(tagged)
        if tagged.num_rows == 0:
            return
        keys, codes = _destinations(tagged)
        # the destination key carries the location: buffer only what the handles read
        tagged = tagged.drop_columns([c for c in _LOCATION_COLUMNS if c in tagged.column_names])
        order = np.argsort(codes, kind="stable")
        sc = codes[order]
        bounds = np.flatnonzero(np.diff(sc)) + 1
        for s, e in zip(np.concatenate([[0], bounds]), np.concatenate([bounds, [len(sc)]]), strict=True):
            # take (a copy), not slice: a buffered bucket must not pin the whole chunk
            self.buffer.add(keys[int(sc[s])], tagged.take(pa.array(order[s:e])))
        del tagged
        # the chunk's temporaries are gone: hand the allocator's free pages back to the OS, so
        # RSS follows the buffer instead of the high-water mark of every stage (cheap per chunk)
        pa.default_memory_pool().release_unused()

    def _tag_in_instant(self, tagged: pa.Table) -> pa.Table:
        """Locate keys this instant already wrote (earlier chunks) or hash buckets it created.

        The in-instant index holds only keys and a 4-byte file ordinal per key (no location
        strings), and is probed with a hash look-up per partition."""
        if isinstance(self.index, BucketIndex):
            return self._new_bucket_groups(tagged)
        if not self._new_keys:
            return tagged
        missing = pc.is_null(tagged.column(FILE_ID))
        if not pc.any(missing).as_py():
            return tagged
        miss = missing.to_numpy(zero_copy_only=False)
        keys = tagged.column(RECORD_KEY).combine_chunks()
        hit_ord = np.full(tagged.num_rows, -1, dtype=np.int64)
        groups: list[tuple[str | None, np.ndarray]]
        if self.index.is_global:
            groups = [(None, np.flatnonzero(miss))]
        else:
            enc = tagged.column(PARTITION_PATH).combine_chunks().dictionary_encode()
            codes = enc.indices.to_numpy(zero_copy_only=False)
            groups = [(p, np.flatnonzero(miss & (codes == i))) for i, p in enumerate(enc.dictionary.to_pylist())
                      if p in self._new_keys]  # fmt: skip
        for group, rows in groups:
            if len(rows) == 0:
                continue
            index_keys, ordinals = self._consolidated(group)
            pos = pc.index_in(keys.take(pa.array(rows)), value_set=index_keys)
            pos_np = pc.fill_null(pos, -1).to_numpy(zero_copy_only=False).astype(np.int64)
            found = pos_np >= 0
            hit_ord[rows[found]] = ordinals[pos_np[found]]
        hit = hit_ord >= 0
        if not hit.any():
            return tagged
        at = pa.array(np.where(hit, hit_ord, 0))
        new_fid = pa.array([f for _, f in self._new_files], pa.string()).take(at)
        loc_part = pa.array([p for p, _ in self._new_files], pa.string()).take(at)
        mask = pa.array(hit)
        out = tagged
        for name, value in ((FILE_ID, new_fid), (BASE_INSTANT, pa.scalar(self.ctx.instant, pa.string())),
                            (LOCATION_PARTITION, loc_part)):  # fmt: skip
            out = out.set_column(out.column_names.index(name), name,
                                 pc.if_else(mask, value, out.column(name).combine_chunks()))  # fmt: skip
        if self.index.is_global:  # a key inserted earlier in another partition: update it there
            part = out.column(PARTITION_PATH).combine_chunks()
            moved = pc.and_(mask, pc.not_equal(loc_part, part))
            if pc.any(moved).as_py():
                out = out.set_column(out.column_names.index(PARTITION_PATH), PARTITION_PATH,
                                     pc.if_else(moved, loc_part, part))  # fmt: skip
        return out

    def _consolidated(self, group: str | None) -> tuple[pa.Array, np.ndarray]:
        pieces = self._new_keys[group]
        if len(pieces) > 1:
            keys = pa.concat_arrays([k for k, _ in pieces])
            ords = np.concatenate([o for _, o in pieces])
            pieces[:] = [(keys, ords)]  # replaced, not kept twice
        return pieces[0]

    def _new_bucket_groups(self, tagged: pa.Table) -> pa.Table:
        """BUCKET index: hash buckets without a file group get one file id per instant."""
        missing = pc.is_null(tagged.column(FILE_ID))
        if not pc.any(missing).as_py():
            return tagged
        miss = missing.to_numpy(zero_copy_only=False)
        parts = tagged.column(PARTITION_PATH).combine_chunks().dictionary_encode()
        pcode = parts.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        hb = tagged.column(BUCKET_NUM).to_numpy(zero_copy_only=False).astype(np.int64)
        code = pcode * (int(hb.max()) + 1) + hb
        uniq, inverse = np.unique(code[miss], return_inverse=True)
        width = int(hb.max()) + 1
        fids, bases = [], []
        for c in uniq.tolist():  # one per (partition, hash bucket) without a file group: few
            p, b = parts.dictionary[c // width].as_py(), c % width
            fid = self._new_buckets.setdefault((p, b), bucket_file_id(b))
            fids.append(fid)
            bases.append(self.ctx.instant if (p, fid) in self._created else None)
        at = np.zeros(len(miss), dtype=np.int64)
        at[miss] = inverse
        new_fid = pa.array(fids, pa.string()).take(pa.array(at))
        new_base = pa.array(bases, pa.string()).take(pa.array(at))
        mask = pa.array(miss)
        out = tagged.set_column(tagged.column_names.index(FILE_ID), FILE_ID,
                                pc.if_else(mask, new_fid, tagged.column(FILE_ID).combine_chunks()))  # fmt: skip
        return out.set_column(out.column_names.index(BASE_INSTANT), BASE_INSTANT,
                              pc.if_else(mask, new_base, tagged.column(BASE_INSTANT).combine_chunks()))  # fmt: skip

    # -- flushing (stage 5) -------------------------------------------------------------------------

    def _attempt(self, key: Hashable) -> TaskAttempt:
        number = self._group_numbers.setdefault(key, len(self._group_numbers))
        return TaskAttempt(number, self.ctx.stage_id, next(self._counter))

    def _flush(self, key: Hashable, records: pa.Table) -> None:
        assert isinstance(key, tuple)
        if self._dedupe and isinstance(records, pa.Table) and records.column(RECORD_KEY).num_chunks > 1:
            records = deduplicate(records, self._config)  # rows of several chunks may share keys
        if key[0] == "I":
            part = key[1]
            handle = self._inserts.get(part)
            if handle is None:
                handle = self._inserts[part] = RollingCreateHandle(
                    self.ctx, part, next_attempt=lambda: self._attempt(("I", part)), on_file=self._remember_keys,
                    on_close=self._collect,
                )  # fmt: skip
            handle.write(records)
            return
        _, part, fid, base = key
        ctx = self.ctx
        if not base and (part, fid) in self._created:
            base = ctx.instant  # flushed again before later chunks learnt the group exists
        if not base:  # BUCKET index: first write of a hash bucket's new file group
            live = records.filter(pc.invert(records.column(DELETE_FLAG)))
            if live.num_rows == 0:
                return  # only deletes of keys never written: the group still does not exist
            self._created.add((part, fid))
            for s in write_new_file(ctx, part, fid, [live], task_id=self._attempt(key)):
                self._collect(s)
            return
        if ctx.is_mor:
            for st in append_to_file_group(ctx, part, fid, base, records, task_id=self._attempt(key)):
                self._collect(st)
            return
        self._roll_insert_file(part, fid)
        prev = self._written.get((part, fid))
        statuses = merge_file_group(
            ctx, part, fid, base, records, task_id=self._attempt(key), base_path=prev[1] if prev else None
        )
        if prev is None:
            for st in statuses:
                self._collect(st)
            return
        # supersede the file this instant wrote before
        idx, old_path = prev
        old, new = self.statuses[idx], statuses[0]
        new.stat.prev_commit = old.stat.prev_commit
        new.stat.num_inserts += old.stat.num_inserts
        new.stat.num_update_writes += old.stat.num_update_writes
        new.stat.num_deletes += old.stat.num_deletes
        new.inserted += old.inserted
        new.updated += old.updated
        new.deleted += old.deleted
        self.statuses[idx] = new
        self._written[(part, fid)] = (idx, _path_of(ctx, new))
        ctx.storage.delete(old_path)

    def _remember_keys(self, partition: str, file_id: str, keys: pa.Array) -> None:
        ordinal = self._file_ordinal.get((partition, file_id))
        if ordinal is None:
            ordinal = self._file_ordinal[(partition, file_id)] = len(self._new_files)
            self._new_files.append((partition, file_id))
        keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        group = None if self.index.is_global else partition
        self._new_keys.setdefault(group, []).append((keys.cast(pa.string()), np.full(len(keys), ordinal, np.int32)))
        self._created.add((partition, file_id))

    def _roll_insert_file(self, partition: str, file_id: str) -> None:
        """A COW merge of a group whose base file is still open: close that file first."""
        h = self._inserts.get(partition)
        if h is not None and h.open_file is not None and h.open_file[0] == file_id:
            h.roll()

    def _collect(self, s: WriteStatus) -> None:
        """A finished base file or log append of this instant."""
        if not self.ctx.is_mor and s.io_type in ("CREATE", "MERGE"):
            self._written[(s.stat.partition_path or "", s.stat.file_id)] = (len(self.statuses), _path_of(self.ctx, s))
        self.statuses.append(s)

    def finish(self) -> list[WriteStatus]:
        # insert streams first: a COW merge of a new group needs its base file closed
        self.buffer.flush_where(lambda k: isinstance(k, tuple) and k[0] == "I")
        for h in self._inserts.values():
            h.close()
        self.buffer.flush_all()
        for h in self._inserts.values():
            h.close()
        return self.statuses


_LOCATION_COLUMNS = (FILE_ID, BASE_INSTANT, LOCATION_PARTITION, BUCKET_NUM)


def _destinations(tagged: pa.Table) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """Destination of every row as a small integer code, and the key of every code: an existing
    (or this instant's) file group ``("G", partition, file id, base instant)`` or the insert
    stream of a partition ``("I", partition)``. Vectorised over dictionary codes."""
    is_new = pc.is_null(tagged.column(FILE_ID)).to_numpy(zero_copy_only=False)
    dicts, codes = [], []
    for name in (PARTITION_PATH, FILE_ID, BASE_INSTANT):
        enc = pc.fill_null(tagged.column(name).combine_chunks(), "").dictionary_encode()
        dicts.append(enc.dictionary.to_pylist())
        codes.append(enc.indices.to_numpy(zero_copy_only=False).astype(np.int64))
    nf, nb = len(dicts[1]) + 1, len(dicts[2]) + 1
    f = np.where(is_new, nf - 1, codes[1])  # the extra code nf-1: "a new record"
    b = np.where(is_new, nb - 1, codes[2])
    combined = (codes[0] * nf + f) * nb + b
    uniq, inverse = np.unique(combined, return_inverse=True)
    keys: list[tuple[str, ...]] = []
    for c in uniq.tolist():
        p, rest = divmod(c, nf * nb)
        fi, bi = divmod(rest, nb)
        part = dicts[0][p]
        keys.append(("I", part) if fi == nf - 1 else ("G", part, dicts[1][fi], dicts[2][bi]))
    return keys, inverse.astype(np.int64)


def _path_of(ctx: WriteContext, s: WriteStatus) -> str:
    rel = s.stat.path or ""
    return f"{ctx.base_uri}/{rel}"


_ = Any
