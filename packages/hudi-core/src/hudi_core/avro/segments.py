"""Per-row byte segments and their vectorised assembly.

A column's Avro encoding is a list of :class:`Segment`: for every row one slice (start, length)
of a byte buffer. A row's encoding is the concatenation of its slices, segment after segment.
Nothing is copied until :func:`gather` interleaves all segments row by row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Segment", "const_segment", "fixed_width_segment", "gather", "varint_segment", "zigzag"]

# Thresholds at which a varint needs one more byte: 2^7, 2^14, ..., 2^63.
_VARINT_LIMITS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=np.uint64)


@dataclass
class Segment:
    buf: np.ndarray  # uint8
    starts: np.ndarray  # int64, one per row
    lengths: np.ndarray  # int64, one per row (0 = nothing for that row)

    def masked(self, keep: np.ndarray) -> Segment:
        """The same segment with rows where ``keep`` is False emptied."""
        return Segment(self.buf, self.starts, np.where(keep, self.lengths, 0))


def zigzag(values: np.ndarray) -> np.ndarray:
    """Avro zig-zag of int64 values, as uint64."""
    v = values.astype(np.int64, copy=False)
    return ((v << 1) ^ (v >> 63)).view(np.uint64)


def varint_segment(encoded: np.ndarray) -> Segment:
    """Little-endian base-128 varints of already zig-zagged uint64 values, one per row."""
    v = encoded.astype(np.uint64, copy=False)
    n = len(v)
    nbytes = 1 + np.searchsorted(_VARINT_LIMITS, v, side="right").astype(np.int64)
    width = int(nbytes.max()) if n else 1
    mat = np.empty((n, width), dtype=np.uint8)
    for k in range(width):
        byte = ((v >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        if k < width - 1:
            byte |= np.where(nbytes > k + 1, np.uint8(0x80), np.uint8(0))
        mat[:, k] = byte
    return Segment(mat.reshape(-1), np.arange(n, dtype=np.int64) * width, nbytes)


def fixed_width_segment(raw: np.ndarray, width: int, n: int, skip: int = 0) -> Segment:
    """Rows of ``width`` bytes laid end to end in ``raw``; ``skip`` drops leading bytes of each."""
    starts = np.arange(n, dtype=np.int64) * width + skip
    return Segment(raw.reshape(-1).view(np.uint8), starts, np.full(n, width - skip, dtype=np.int64))


def const_segment(choices: bytes, which: np.ndarray) -> Segment:
    """One byte per row picked from ``choices`` by index (union branch bytes, terminators)."""
    buf = np.frombuffer(choices, dtype=np.uint8)
    return Segment(buf, which.astype(np.int64, copy=False), np.ones(len(which), dtype=np.int64))


def gather(segments: list[Segment], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Interleave ``segments`` row by row: (bytes, offsets with n + 1 entries).

    Each segment becomes an Arrow binary array (its own bytes when they already lie row after
    row, as a string column's do; else gathered once), and Arrow's ``binary_join_element_wise``
    concatenates them row by row (3x faster than one byte-level gather over all segments: 0.24 ->
    0.08 s for 100k rows of the benchmarks' trips)."""
    if not segments or n == 0:
        return np.zeros(0, dtype=np.uint8), np.zeros(n + 1, dtype=np.int64)
    arrays = [_binary(s, n) for s in segments]
    joined = (
        pc.binary_join_element_wise(*arrays, pa.scalar(b"", pa.large_binary()))
        if len(arrays) > 1
        else arrays[0]
    )
    _, off, data = joined.buffers()  # offsets from 0: both arrays are built here
    offsets = np.frombuffer(off, dtype=np.int64, count=n + 1).copy()
    total = int(offsets[-1])
    body = np.frombuffer(data, dtype=np.uint8, count=total) if total else np.zeros(0, dtype=np.uint8)
    return body, offsets


def _binary(seg: Segment, n: int) -> pa.Array:
    """A segment as a large_binary array of its n rows."""
    offsets = np.empty(n + 1, dtype=np.int64)
    offsets[0] = 0
    np.cumsum(seg.lengths, out=offsets[1:])
    total = int(offsets[-1])
    starts = seg.starts
    first = int(starts[0])
    if np.array_equal(starts - first, offsets[:-1]):  # already row after row
        data = seg.buf[first : first + total]
    else:
        idx = np.repeat(starts - offsets[:-1], seg.lengths)
        idx += np.arange(total, dtype=np.int64)
        data = seg.buf[idx]
    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
