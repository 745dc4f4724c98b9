"""Per-row byte segments and their vectorised assembly.

A column's Avro encoding is a list of :class:`Segment`: for every row one slice (start, length)
of a byte buffer. A row's encoding is the concatenation of its slices, segment after segment.
Nothing is copied until :func:`gather` interleaves all segments row by row with one fancy index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    """Interleave ``segments`` row by row: (bytes, offsets with n + 1 entries)."""
    if not segments or n == 0:
        return np.zeros(0, dtype=np.uint8), np.zeros(n + 1, dtype=np.int64)
    bases = np.cumsum([0] + [len(s.buf) for s in segments[:-1]])
    big = np.concatenate([s.buf for s in segments]) if len(segments) > 1 else segments[0].buf
    lengths = np.stack([s.lengths for s in segments], axis=1).reshape(-1)
    starts = np.stack([s.starts + b for s, b in zip(segments, bases, strict=False)], axis=1).reshape(-1)
    row_len = lengths.reshape(n, len(segments)).sum(axis=1)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(row_len, out=offsets[1:])
    total = int(offsets[-1])
    nz = lengths > 0
    lengths = lengths[nz]
    starts = starts[nz]
    idx_type = np.int32 if len(big) < 2**31 and total < 2**31 else np.int64
    out_starts = np.cumsum(lengths) - lengths
    # Each output byte's source: its segment's source start plus its distance into the segment.
    idx = np.repeat((starts - out_starts).astype(idx_type), lengths)
    idx += np.arange(total, dtype=idx_type)
    return big[idx], offsets
