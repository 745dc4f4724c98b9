"""The in-instant index of a streamed write: where earlier chunks of the same instant put keys
that the table (as of the instant's start) does not know.

Memory is bounded: only the files still being written keep their keys in memory. A closed (or
merged) file is remembered by its path and footer filters (min/max keys and the serialised bloom
filter, already built for the footer); a probe prunes closed files by range and bloom,
vectorised over the probed keys, and confirms the candidates against the file's key column with
``pc.index_in``.

Keys moved to another partition by a global index (delete at the old location, insert in the
new one) are remembered per file as *moved out* (few keys), so a later probe does not find the
stale copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hudi_core.bloom import might_contain
from hudi_core.io.base_file import BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, MAX_KEY, MIN_KEY, read_footer
from hudi_core.write.records import RECORD_KEY

if TYPE_CHECKING:
    from hudi_core.write.handles.context import WriteContext

__all__ = ["InstantIndex"]

#: rows of a file's key column read at a time when confirming candidates
_READ_BATCH_ROWS = 1 << 18


@dataclass
class _File:
    partition: str
    file_id: str
    #: current base file (None while it is being written)
    path: str | None = None
    #: keys of a file still being written
    open_keys: list[pa.Array] = field(default_factory=list)
    min_key: str | None = None
    max_key: str | None = None
    bloom: str | None = None
    bloom_type: str | None = None
    #: every key written into the open file so far is ASCII (byte order = Java's order)
    open_ascii: bool = True
    #: keys moved to another partition (global index): their copy here is deleted
    moved_out: pa.Array | None = None

    def set_footer(self, path: str, footer: dict[str, str]) -> None:
        self.path, self.open_keys = path, []
        self.min_key, self.max_key = footer.get(MIN_KEY), footer.get(MAX_KEY)
        self.bloom, self.bloom_type = footer.get(BLOOM_FILTER_KEY), footer.get(BLOOM_TYPE_KEY)


class InstantIndex:
    """Files this instant wrote new keys into, probed per chunk (``locate``)."""

    def __init__(self, ctx: WriteContext, *, is_global: bool) -> None:
        self.ctx = ctx
        self._storage = ctx.storage
        self.is_global = is_global
        self.files: list[_File] = []  # by ordinal
        self._ordinal: dict[tuple[str, str], int] = {}

    def __bool__(self) -> bool:
        return bool(self.files)

    def _file(self, partition: str, file_id: str) -> _File:
        o = self._ordinal.get((partition, file_id))
        if o is None:
            o = self._ordinal[(partition, file_id)] = len(self.files)
            self.files.append(_File(partition, file_id))
        return self.files[o]

    def knows(self, partition: str, file_id: str) -> bool:
        return (partition, file_id) in self._ordinal

    # -- what the writer reports -----------------------------------------------------------------

    def wrote_open(
        self,
        partition: str,
        file_id: str,
        keys: pa.Array | pa.ChunkedArray,
        shared: list[pa.Array] | None = None,
    ) -> None:
        """Keys written into a base file that is still open; ``shared``: the writer's own list of
        the file's keys (for its bloom filter), used instead of a copy."""
        f = self._file(partition, file_id)
        keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        keys = keys.cast(pa.string())
        if shared is not None:
            f.open_keys = shared
        else:
            f.open_keys.append(keys)
        # the open file's key range, so a probe skips it without hashing its keys
        lo, hi = pc.min_max(keys).values()
        ascii_keys = bool(pc.all(pc.string_is_ascii(keys)).as_py()) if len(keys) else True
        f.open_ascii = f.open_ascii and ascii_keys
        if lo.is_valid:
            f.min_key = lo.as_py() if f.min_key is None else min(f.min_key, lo.as_py())
            f.max_key = hi.as_py() if f.max_key is None else max(f.max_key, hi.as_py())

    def closed(self, partition: str, file_id: str, path: str, footer: dict[str, str]) -> None:
        """A file was closed: forget its keys, keep its footer filters."""
        self._file(partition, file_id).set_footer(path, footer)

    def rewritten(self, partition: str, file_id: str, path: str) -> None:
        """A merge wrote the group's new base file (it holds every key of the group)."""
        self._file(partition, file_id).set_footer(path, read_footer(self._storage, path))

    def moved_out(self, ordinal: int, keys: pa.Array) -> None:
        f = self.files[ordinal]
        keys = keys.cast(pa.string())
        f.moved_out = keys if f.moved_out is None else pa.concat_arrays([f.moved_out, keys])

    def location(self, ordinal: int) -> tuple[str, str]:
        f = self.files[ordinal]
        return f.partition, f.file_id

    def is_open(self, ordinal: int) -> bool:
        return self.files[ordinal].path is None

    # -- probing ---------------------------------------------------------------------------------

    def locate(self, keys: pa.Array, partitions: pa.Array | None, probe: np.ndarray) -> np.ndarray:
        """Ordinal of the file holding each key (-1: none), for the rows where ``probe`` is set;
        ``partitions`` (None for a global index) restricts a key to its partition's files."""
        out = np.full(len(keys), -1, dtype=np.int64)
        if not self.files or not probe.any():
            return out
        if partitions is None or self.is_global:
            groups = [(None, np.flatnonzero(probe))]
        else:
            enc = partitions.dictionary_encode()
            codes = enc.indices.to_numpy(zero_copy_only=False)
            groups = [
                (p, np.flatnonzero(probe & (codes == i))) for i, p in enumerate(enc.dictionary.to_pylist())
            ]
        for part, rows in groups:
            # newest files first: a global index's moved key is found where it went last
            for o in range(len(self.files) - 1, -1, -1):
                if len(rows) == 0:
                    break
                f = self.files[o]
                if part is not None and f.partition != part:
                    continue
                found = self._in_file(f, keys.take(pa.array(rows)))
                if found.any():
                    out[rows[found]] = o
                    rows = rows[~found]
        return out

    def _in_file(self, f: _File, wanted: pa.Array) -> np.ndarray:
        if f.path is None:
            hit = (
                self._candidates(f, wanted, bloom=False) if f.open_ascii else np.ones(len(wanted), dtype=bool)
            )
            if hit.any():
                at = np.flatnonzero(hit)
                stored = _one_array(f.open_keys)
                hit[at] = pc.is_in(wanted.take(pa.array(at)), value_set=stored).to_numpy(zero_copy_only=False)
        else:
            hit = self._candidates(f, wanted)
            if hit.any():
                hit = self._confirm(f, wanted, hit)
        if f.moved_out is not None and hit.any():
            hit &= ~pc.is_in(wanted, value_set=f.moved_out).to_numpy(zero_copy_only=False)
        return hit

    def _candidates(self, f: _File, wanted: pa.Array, *, bloom: bool = True) -> np.ndarray:
        """Keys the footer does not rule out: min/max range (when byte order equals Java's
        order, i.e. ASCII keys), then the bloom filter."""
        maybe = np.ones(len(wanted), dtype=bool)
        lo, hi = f.min_key, f.max_key
        if (
            lo is not None
            and hi is not None
            and lo.isascii()
            and hi.isascii()
            and pc.all(pc.string_is_ascii(wanted)).as_py()
        ):
            in_range = pc.and_(pc.greater_equal(wanted, lo), pc.less_equal(wanted, hi))
            maybe = pc.fill_null(in_range, False).to_numpy(zero_copy_only=False)
        if bloom and f.bloom is not None and maybe.any():
            at = np.flatnonzero(maybe)
            maybe[at] = might_contain(f.bloom, f.bloom_type, wanted.take(pa.array(at)))
        return maybe

    def _confirm(self, f: _File, wanted: pa.Array, maybe: np.ndarray) -> np.ndarray:
        """Of the candidate keys, those in the file's key column (read batch by batch)."""
        at = np.flatnonzero(maybe)
        cand = wanted.take(pa.array(at))
        hit = np.zeros(len(cand), dtype=bool)
        for stored in self._file_keys(f):
            pos = pc.index_in(stored, value_set=cand)
            idx = pc.drop_null(pos).to_numpy(zero_copy_only=False)
            hit[idx] = True
        out = np.zeros(len(wanted), dtype=bool)
        out[at[hit]] = True
        return out

    def _file_keys(self, f: _File) -> list[pa.Array]:
        ctx, storage = self.ctx, self._storage
        assert f.path is not None
        if ctx.populate_meta_fields:
            cols = [RECORD_KEY]
        else:  # virtual keys: the key generator over the key fields
            from hudi_core.config.write import WriteOptions

            cols = list(
                dict.fromkeys(k.split(".")[0] for k in ctx.config.get_list(WriteOptions.RECORDKEY_FIELD))
            )
        out = []
        with storage.arrow_filesystem().open_input_file(storage.arrow_path(f.path)) as src:
            for batch in pq.ParquetFile(src).iter_batches(
                batch_size=_READ_BATCH_ROWS, columns=cols, use_threads=False
            ):
                if ctx.populate_meta_fields:
                    keys = batch.column(RECORD_KEY)
                else:
                    from hudi_core.keygen import key_generator_for

                    keys = key_generator_for(ctx.config).record_keys(pa.Table.from_batches([batch]))
                    keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
                out.append(keys.cast(pa.string()))
        return out


def _one_array(pieces: list[pa.Array]) -> pa.Array:
    if len(pieces) > 1:
        pieces[:] = [pa.concat_arrays(pieces)]  # replaced, not kept twice
    return pieces[0]
