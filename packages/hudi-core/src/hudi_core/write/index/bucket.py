"""BUCKET index: ``hash(key) % num_buckets`` picks a file group per partition; no lookup.

File ids follow Hudi's bucket index: the first 8 characters of a fresh ``<uuid>`` are replaced by
the zero-padded bucket number, then ``-0`` (``00000003-6c1e-4b6f-9a4e-1f2d3c4b5a69-0``). The bucket
of a key is Java's ``List<String>.hashCode()`` of the hash field values, masked positive,
modulo the number of buckets, so Java writers find the same buckets.

:data:`compiled` (``_javahash.c``, built when the package was installed) hashes the keys in C,
any UTF-8 in one pass; without it numpy hashes ASCII keys a character position at a time over
all keys of one length, and Python the others, with the same answers. 1M uuid keys: 10 ms
against numpy's 67 ms; 1M keys with CJK characters: 19 ms against 2.6 s (Python, key by key).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_core.bloom.murmur import key_buffers

__all__ = ["BucketIndex", "bucket_file_id", "bucket_id_of_file", "compiled", "java_string_hashes"]

compiled: ModuleType | None
try:
    from hudi_core.write.index import _javahash as compiled
except ImportError:  # installed without a C compiler: numpy and Python below
    compiled = None


def bucket_file_id(bucket: int) -> str:
    """A new file id for ``bucket``: ``%08d`` + the rest of a random uuid + ``-0``."""
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


def bucket_id_of_file(file_id: str) -> int | None:
    head = file_id[:8]
    return int(head) if head.isdigit() else None


_SLICE = 65536
_CELLS = 1 << 21


def _pow31(n: int) -> np.ndarray:
    out = np.empty(max(n, 1), dtype=np.uint32)
    out[0] = 1
    with np.errstate(over="ignore"):
        for i in range(1, n):
            out[i] = out[i - 1] * np.uint32(31)
    return out


def java_string_hashes(values: pa.Array) -> np.ndarray:
    """Java ``String.hashCode()`` of every string (null -> 0), as uint32, vectorised for ASCII."""
    values = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    values = values.cast(pa.string())
    n = len(values)
    out = np.zeros(n, dtype=np.uint32)
    if n == 0:
        return out
    filled = pc.fill_null(values, "") if values.null_count else values
    if compiled is not None:
        bad = compiled.hashes(out, *key_buffers(filled))
        if bad >= 0:
            raise ValueError(f"string at row {bad} is not valid UTF-8")
        return out
    ascii_mask = pc.string_is_ascii(filled).to_numpy(zero_copy_only=False)
    ascii_vals = filled if ascii_mask.all() else pc.if_else(pa.array(ascii_mask), filled, "")
    ascii_vals = ascii_vals.combine_chunks() if isinstance(ascii_vals, pa.ChunkedArray) else ascii_vals
    offsets = np.frombuffer(ascii_vals.buffers()[1], dtype=np.int32)[
        ascii_vals.offset : ascii_vals.offset + n + 1
    ]
    data = (
        np.frombuffer(ascii_vals.buffers()[2], dtype=np.uint8)
        if ascii_vals.buffers()[2]
        else np.zeros(0, np.uint8)
    )
    lengths = np.diff(offsets)
    if int(lengths.min()) == int(lengths.max()) > 0:
        # one length (UUIDs, zero-padded ids: the common case): the bytes are an (n x length)
        # matrix as they lie; Horner's rule one column at a time, no index matrix
        length = int(lengths[0])
        chars = data[int(offsets[0]) : int(offsets[0]) + n * length].reshape(n, length)
        with np.errstate(over="ignore"):
            for j in range(length):
                out *= np.uint32(31)
                out += chars[:, j]
        return out
    pw = _pow31(int(lengths.max()) if n else 0)
    # Horner's sum per key, keys grouped by length: a (keys x length) matrix of characters per
    # group, in slices so the temporaries stay small whatever the batch size
    for lo in range(0, n, _SLICE):
        hi = min(n, lo + _SLICE)
        lens = lengths[lo:hi]
        for length in np.unique(lens).tolist():
            if length == 0:
                continue
            weights = pw[:length][::-1]
            same = lo + np.flatnonzero(lens == length)
            step = max(1, _CELLS // length)  # long keys: fewer rows per matrix
            for k in range(0, len(same), step):
                rows = same[k : k + step]
                idx = offsets[rows].astype(np.int64)[:, None] + np.arange(length, dtype=np.int64)
                with np.errstate(over="ignore"):
                    out[rows] = (data[idx].astype(np.uint32) * weights).sum(axis=1, dtype=np.uint32)
    if not ascii_mask.all():
        for i in np.nonzero(~ascii_mask)[0]:  # rare: non-ASCII keys hash over UTF-16 code units
            out[i] = _java_hash_py(filled[int(i)].as_py())
    return out


def _java_hash_py(s: str) -> int:
    h = 0
    raw = s.encode("utf-16-be")
    for k in range(0, len(raw), 2):
        h = (31 * h + ((raw[k] << 8) | raw[k + 1])) & 0xFFFFFFFF
    return h


@dataclass(frozen=True)
class BucketIndex:
    """The bucket index of a table: ``num_buckets`` file groups per partition."""

    num_buckets: int
    hash_fields: tuple[str, ...]
    record_key_fields: tuple[str, ...]
    kind: str = "BUCKET"
    is_global: bool = False

    def bucket_ids(self, record_keys: pa.Array) -> np.ndarray:
        """Bucket number of every record key (``field:value`` pairs of complex keys parsed)."""
        keys = record_keys.combine_chunks() if isinstance(record_keys, pa.ChunkedArray) else record_keys
        parts: Sequence[pa.Array]
        # the key is hashed whole unless it is a complex key to pick fields from (scanning for
        # ':' costs as much as the hash: only when the fields make it possible)
        may_pick = len(self.record_key_fields) > 1 or self.hash_fields != self.record_key_fields
        if may_pick and pc.any(pc.match_substring(keys, ":")).as_py():
            parts = [
                pc.struct_field(pc.extract_regex(keys, f"(?:^|,){_re_escape(f)}:(?P<v>[^,]*)"), "v")
                for f in self.hash_fields
            ]
        else:
            parts = [keys]
        h = np.ones(len(keys), dtype=np.uint32)
        with np.errstate(over="ignore"):
            for p in parts:
                h = h * np.uint32(31) + java_string_hashes(p)
        return ((h & np.uint32(0x7FFFFFFF)) % np.uint32(self.num_buckets)).astype(np.int32)


def _re_escape(s: str) -> str:
    import re

    return re.escape(s)
