"""Streamed writes: an iterator of record batches written as one instant with bounded memory.

The index and dedupe stages need a whole batch's keys, so a stream is cut into *chunks* of at
most ``hoodie.write.stream.chunk.max.bytes`` (Arrow bytes); each chunk goes through stages 1-3
(keys, dedupe within the chunk, index lookup against the table as of the instant's start plus
the in-instant index of the files earlier chunks wrote new keys into,
:mod:`~hudi_core.write.instant_index`), then its records are routed into the
:class:`~hudi_core.write.buffer.WriteBuffer` (seed 5.1) by destination:

* new records of a partition -> one insert stream per partition: each flush first fills the
  partition's small base files (``insert``/``upsert``, not the BUCKET index; room as the
  one-table ``assign`` computes it) through the merge handle, then writes a row group into the
  open base file of a new file group, rolling to another at ``hoodie.parquet.max.file.size``;
* records of an existing file group (or one created by this instant) -> MOR: each flush appends
  log blocks (a new log version; on the instant's base when packing rewrote it); COW: each
  flush merges into the group's base file; a group already rewritten by this instant is merged
  again from that file, which it then supersedes (the superseded file is deleted and its write
  stat replaced).

Memory is bounded by the chunk size (times the few copies stages 1-3 make), the buffer's total
limit, and the keys of the open insert files; a closed file is remembered by its footer filters.
Differences from a one-table write: the inflight workload profile is empty (a stream's workload
is not known up front), and duplicates across chunks are resolved by the later chunk updating
the record the earlier chunk wrote (with a global index a later chunk may move it to another
partition: delete there, insert in the new one). Buffered records are in no file yet: before a
chunk moves a key whose insert is still buffered, that insert stream is flushed (so the probe
finds the key), and before new records are packed into a small file, the file's buffered records
of the same keys (a moved key's delete) are flushed (so they apply first).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.config.property import HoodieConfig
from hudi_core.config.write import WriteBufferOptions
from hudi_core.write.bucket_assigner import SmallFile, WorkloadProfile, assign, profile_of
from hudi_core.write.buffer import WriteBuffer
from hudi_core.write.clustering import reject_clustered_updates
from hudi_core.write.dedupe import deduplicate
from hudi_core.write.handles.append import append_to_file_group
from hudi_core.write.handles.cdc import ChangeLog
from hudi_core.write.handles.context import TaskAttempt, WriteContext, WriteStatus
from hudi_core.write.handles.create import write_new_file
from hudi_core.write.handles.merge import merge_file_group
from hudi_core.write.handles.rolling import RollingCreateHandle
from hudi_core.write.index import (
    BUCKET_NUM,
    BucketIndex,
    Index,
    bucket_file_id,
    split_partition_changes,
    tag_locations,
)
from hudi_core.write.instant_index import InstantIndex
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
    """Stages 3-5 of one instant, fed chunk by chunk (stages 1-2 already applied).

    ``small_files(partition)`` (None: no packing) lists a partition's small base files;
    ``avg_record_size`` sizes how many new records each can take."""

    def __init__(
        self, ctx: WriteContext, config: HoodieConfig, index: Index, view: FileSystemView | None, *,
        lookup: bool, dedupe: bool, small_files: Callable[[str], list[SmallFile]] | None = None,
        avg_record_size: int = 0,
    ) -> None:  # fmt: skip
        self.ctx = ctx
        self.index = index
        self.view = view
        self.lookup = lookup
        self.buffer = WriteBuffer(config, self._flush)
        self.statuses: list[WriteStatus] = []
        self._counter = itertools.count()
        self._inserts: dict[str, RollingCreateHandle] = {}
        #: files this instant wrote new keys into (rolling creates, packed small files)
        self._index = InstantIndex(ctx, is_global=index.is_global)
        #: (partition, file id) -> (status index, path) of base files this instant wrote
        self._written: dict[tuple[str, str], tuple[int, str]] = {}
        #: BUCKET index: (partition, hash bucket) -> file id created by this instant
        self._new_buckets: dict[tuple[str, int], str] = {}
        self._group_numbers: dict[Hashable, int] = {}
        #: (partition, file id) of every file group this instant created
        self._created: set[tuple[str, str]] = set()
        self._dedupe = dedupe
        self._config = config
        self._small_files = small_files
        self._avg_record_size = max(1, avg_record_size)
        #: partition -> its small files (listed once, on the partition's first insert flush)
        self._smalls: dict[str, list[SmallFile]] = {}
        #: (partition, file id) -> new records packed into that small file so far
        self._packed: dict[tuple[str, str], int] = {}
        #: MOR: groups whose base this instant rewrote (packing): later logs go on that base
        self._rebased: set[tuple[str, str]] = set()
        #: MOR: groups this instant appended logs to on the table's slice: no longer small
        self._appended: set[tuple[str, str]] = set()
        #: buffer bucket -> keys of its buffered records (views of the buffered tables' key
        #: columns, not copies): buffered records are in no file, so no index finds them
        self._pending: dict[tuple[str, ...], list[pa.ChunkedArray]] = {}

    # -- routing ---------------------------------------------------------------------------------

    def add(self, records: pa.Table) -> None:
        # deletes of keys the table does not hold are kept until the in-instant lookup: they may
        # delete a key an earlier chunk inserted (flushed, or still buffered in the same bucket,
        # where the flush's dedupe lets the later delete win)
        index = self.index
        view = self.view if self.lookup else None
        if index.is_global and not isinstance(index, BucketIndex):
            # the in-instant index wins over the table's locations (a key this instant moved to
            # another partition is no longer where the table has it): look up, tag, then split
            tagged = tag_locations(records, index, view, drop_orphan_deletes=False, split=False)
            del records
            self._flush_inserts_moved_by(tagged)
            tagged = self._tag_in_instant(tagged, probe_all=True)
            tagged = split_partition_changes(tagged, index, view)
        else:
            tagged = tag_locations(records, index, view, drop_orphan_deletes=False)
            del records
            tagged = self._tag_in_instant(tagged, probe_all=False)
        if tagged.num_rows == 0:
            return
        if self.ctx.clustered:  # file groups of pending clustering plans take no updates
            reject_clustered_updates(profile_of(tagged), self.ctx.clustered)
        keys, codes = _destinations(tagged)
        # the destination key carries the location: buffer only what the handles read
        tagged = tagged.drop_columns([c for c in _LOCATION_COLUMNS if c in tagged.column_names])
        order = np.argsort(codes, kind="stable")
        sc = codes[order]
        bounds = np.flatnonzero(np.diff(sc)) + 1
        for s, e in zip(np.concatenate([[0], bounds]), np.concatenate([bounds, [len(sc)]]), strict=True):
            # take (a copy), not slice: a buffered bucket must not pin the whole chunk
            dest, part_records = keys[int(sc[s])], tagged.take(pa.array(order[s:e]))
            # before add: the add may flush the bucket at once
            self._pending.setdefault(dest, []).append(part_records.column(RECORD_KEY))
            self.buffer.add(dest, part_records)
        del tagged
        # the chunk's temporaries are gone: a pool that can hand its free pages back to the OS
        # (mimalloc's, the system's: one the process chose) does, so RSS follows the buffer;
        # jemalloc's hands them back over its decay time (engine.pool): a no-op here, cheap per chunk
        pa.default_memory_pool().release_unused()

    def _flush_inserts_moved_by(self, tagged: pa.Table) -> None:
        """Global index: write out the insert streams holding buffered new records of keys this
        chunk puts in another partition, so the in-instant index finds them there.

        A key inserted by an earlier chunk whose records are still buffered is in no file yet;
        if this chunk moves it to another partition (or, without partition updates, writes it
        under another one), its records go to another bucket than the buffered insert and the
        two never meet in a flush's dedupe: the insert would be written next to the moved copy.
        Written first, the probe locates it and the split deletes it."""
        inserts = [b for b in self._pending if b[0] == "I"]
        if not inserts or tagged.num_rows == 0:
            return
        keys = tagged.column(RECORD_KEY).combine_chunks().cast(pa.string())
        owner, row = self._buffered_hits(inserts, keys)
        if len(owner) == 0:
            return
        incoming = tagged.column(PARTITION_PATH).combine_chunks().take(pa.array(row))
        names = pa.array([b[1] for b in inserts], pa.string())
        elsewhere = pc.fill_null(pc.not_equal(incoming, names.take(pa.array(owner))), True)
        for o in np.unique(owner[elsewhere.to_numpy(zero_copy_only=False)]).tolist():
            self.buffer.flush(inserts[o])

    def _buffered_hits(self, buckets: list[tuple[str, ...]], keys: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Buffered records of ``buckets`` whose key is in ``keys``: the bucket's position in
        ``buckets`` and the row of ``keys`` holding the key, one pair per buffered record."""
        lists = [self._pending.get(b, []) for b in buckets]
        lengths = [sum(len(k) for k in ks) for ks in lists]
        chunks_ = [c for ks in lists for k in ks for c in k.chunks]
        empty = np.zeros(0, dtype=np.int64)
        if not chunks_ or len(keys) == 0:
            return empty, empty
        pending = pa.chunked_array(chunks_, pa.string()).combine_chunks()
        pos = pc.index_in(pending, value_set=keys)
        hit = pc.is_valid(pos).to_numpy(zero_copy_only=False)
        if not hit.any():
            return empty, empty
        owner = np.repeat(np.arange(len(buckets)), lengths)[hit]
        return owner, pc.drop_null(pos).to_numpy(zero_copy_only=False).astype(np.int64)

    def _tag_in_instant(self, tagged: pa.Table, *, probe_all: bool) -> pa.Table:
        """Locate keys this instant already wrote (earlier chunks) or hash buckets it created.

        Probes the keys the table lookup did not find (every key with ``probe_all``: a global
        index, where this instant's location is newer than the table's)."""
        if isinstance(self.index, BucketIndex):
            return self._new_bucket_groups(tagged)
        if not self._index:
            return tagged
        probe = (np.ones(tagged.num_rows, dtype=bool) if probe_all
                 else pc.is_null(tagged.column(FILE_ID)).to_numpy(zero_copy_only=False))  # fmt: skip
        if not probe.any():
            return tagged
        keys = tagged.column(RECORD_KEY).combine_chunks().cast(pa.string())
        parts = None if self.index.is_global else tagged.column(PARTITION_PATH).combine_chunks()
        hit_ord = self._index.locate(keys, parts, probe)
        hit = hit_ord >= 0
        if not hit.any():
            return tagged
        files = self._index.files
        at = pa.array(np.where(hit, hit_ord, 0))
        new_fid = pa.array([f.file_id for f in files], pa.string()).take(at)
        loc_part = pa.array([f.partition for f in files], pa.string()).take(at)
        mask = pa.array(hit)
        out = tagged
        for name, value in ((FILE_ID, new_fid), (BASE_INSTANT, pa.scalar(self.ctx.instant, pa.string())),
                            (LOCATION_PARTITION, loc_part)):  # fmt: skip
            out = out.set_column(out.column_names.index(name), name,
                                 pc.if_else(mask, value, out.column(name).combine_chunks()))  # fmt: skip
        if self.index.is_global and self.index.update_partition_path:
            self._forget_moved(keys, hit_ord, loc_part, out.column(PARTITION_PATH).combine_chunks())
        return out

    def _forget_moved(self, keys: pa.Array, hit_ord: np.ndarray, loc_part: pa.Array, part: pa.Array) -> None:
        """Keys this instant wrote that now move to another partition: their copy is deleted
        (the split's delete), so the in-instant index must not find it there again. A file still
        open is closed, so the key cannot come back into the file that holds its deleted copy."""
        moved = pc.fill_null(pc.not_equal(loc_part, part), False).to_numpy(zero_copy_only=False) & (
            hit_ord >= 0
        )
        for o in np.unique(hit_ord[moved]).tolist():
            self._index.moved_out(o, keys.take(pa.array(np.flatnonzero(moved & (hit_ord == o)))))
            if self._index.is_open(o):
                self._roll_insert_file(*self._index.location(o))

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
        self._pending.pop(key, None)  # flushed: the handles and the in-instant index know them
        self.ctx.take_listings(self.view)
        if key[0] == "I":
            part = key[1]
            if self._small_files is not None:
                records = self._pack(part, records)
                if records.num_rows == 0:
                    return
            handle = self._inserts.get(part)
            if handle is None:
                handle = self._inserts[part] = RollingCreateHandle(
                    self.ctx, part, next_attempt=lambda: self._attempt(("I", part)), on_file=self._remember_keys,
                    on_close=self._collect, on_closed=self._index.closed,
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
            if (part, fid) in self._rebased:
                base = ctx.instant  # packing rewrote the group's base in this instant
            if base != ctx.instant:
                self._appended.add((part, fid))
            for st in append_to_file_group(ctx, part, fid, base, records, task_id=self._attempt(key)):
                self._collect(st)
            return
        self._merge(part, fid, base, records, key)

    def _merge(
        self, part: str, fid: str, base: str, records: pa.Table, key: Hashable, *, index: bool = False
    ) -> None:
        """Merge ``records`` into the group's base file; a file this instant wrote before is
        merged again and superseded (deleted, its write stat replaced). ``index``: the merge adds
        new keys, the in-instant index learns the file."""
        ctx = self.ctx
        self._roll_insert_file(part, fid)
        prev = self._written.get((part, fid))
        changes = None
        if prev is not None and (log := ChangeLog.kept_by(ctx)) is not None:  # the file's changes
            prior = self.statuses[prev[0]]
            for cdc in prior.stat.cdc_stats or {}:  # (the new CDC log file holds them too)
                ctx.storage.delete(f"{ctx.base_uri}/{cdc}")
            # a file the instant created: its rows are inserts
            changes = prior.changes if prior.changes is not None else log.inserted_rows_of(prev[1])
        statuses = merge_file_group(
            ctx, part, fid, base, records, task_id=self._attempt(key), base_path=prev[1] if prev else None,
            prior_changes=changes, keep_changes=True,
        )  # fmt: skip
        if prev is None:
            for st in statuses:
                self._collect(st)
        else:
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
        if index or self._index.knows(part, fid):  # the group's keys are in a new file now
            self._index.rewritten(part, fid, self._written[(part, fid)][1])

    def _pack(self, part: str, records: pa.Table) -> pa.Table:
        """Route new records into the partition's small files first (up to each one's room, as
        the one-table write's ``assign`` computes it); returns the rest."""
        assert self._small_files is not None
        smalls = self._smalls.get(part)
        if smalls is None:
            smalls = self._smalls[part] = self._small_files(part)
        self._flush_updates_of(part, {s.file_id for s in smalls}, records)
        # room left: a small file grows by the records packed into it so far; a MOR group with
        # logs on its table slice (appended by this instant) is not small any more
        avg = self._avg_record_size
        open_smalls = [SmallFile(s.partition_path, s.file_id, s.base_instant, s.size + self._packed.get((part, s.file_id), 0) * avg)
                       for s in smalls if (part, s.file_id) not in self._appended]  # fmt: skip
        if not open_smalls:
            return records
        flag = records.column(DELETE_FLAG)
        live = records if not pc.any(flag).as_py() else records.filter(pc.invert(flag))
        if live.num_rows == 0:
            return live
        plan = assign(WorkloadProfile(inserts={part: live.num_rows}), open_smalls, self._config,
                      is_mor=self.ctx.is_mor, avg_record_size=avg, pack_small_files=True)  # fmt: skip
        caps, nums = plan.insert_ranges[part]
        start = 0
        for cap, num in zip(caps, nums, strict=True):
            b = plan.bucket(num)
            if b.is_new:
                break
            assert b.base_instant is not None
            piece = live.slice(start, cap - start)
            start = cap
            self._packed[(part, b.file_id)] = self._packed.get((part, b.file_id), 0) + piece.num_rows
            self._merge(part, b.file_id, b.base_instant, piece, ("P", part, b.file_id), index=True)
            if self.ctx.is_mor:
                self._rebased.add((part, b.file_id))
        return live.slice(start)

    def _flush_updates_of(self, part: str, file_ids: set[str], records: pa.Table) -> None:
        """Write out the buffered records of the small files that hold keys of ``records``.

        Such a key left the file earlier in this instant (a global index moved it away: its
        delete is buffered for the file) and now comes back as a new record: packed into the
        same file, the buffered delete, flushed later, would delete it again. Those buffered
        records are older than the new ones, so they go first."""
        groups = [b for b in self._pending if b[0] == "G" and b[1] == part and b[2] in file_ids]
        if not groups:
            return
        keys = records.column(RECORD_KEY).combine_chunks().cast(pa.string())
        owner, _ = self._buffered_hits(groups, keys)
        for o in np.unique(owner).tolist():
            self.buffer.flush(groups[o])

    def _remember_keys(self, partition: str, file_id: str, keys: pa.Array) -> None:
        h = self._inserts.get(partition)
        self._index.wrote_open(partition, file_id, keys, shared=h.open_keys if h is not None else None)
        self._created.add((partition, file_id))

    def _roll_insert_file(self, partition: str, file_id: str) -> None:
        """A merge of a group whose base file is still open: close that file first."""
        h = self._inserts.get(partition)
        if h is not None and h.open_file is not None and h.open_file[0] == file_id:
            h.roll()

    def _collect(self, s: WriteStatus) -> None:
        """A finished base file or log append of this instant."""
        if s.io_type in ("CREATE", "MERGE"):
            self._written[(s.stat.partition_path or "", s.stat.file_id)] = (
                len(self.statuses),
                _path_of(self.ctx, s),
            )
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
