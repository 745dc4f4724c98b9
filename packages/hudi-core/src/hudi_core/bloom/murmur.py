"""Hudi's MurmurHash2 (the Hadoop port, spec 6.3), vectorised over many keys with numpy.

Keys are grouped by UTF-8 byte length; each group becomes an ``(n, length)`` uint8 matrix and every
step of the hash runs over the whole group at once. 32-bit Java ``int`` arithmetic is done in
``uint32`` (same bits, wrapping multiplication).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from hudi_core.errors import InvalidRecordKeyError

__all__ = ["hash_positions", "key_bytes_by_length", "murmur2_rounds"]

_M = np.uint32(0x5BD1E995)


def _as_string_array(keys: pa.Array | pa.ChunkedArray | list[str]) -> pa.Array:
    if isinstance(keys, list):
        keys = pa.array(keys, pa.string())
    if isinstance(keys, pa.ChunkedArray):
        keys = keys.combine_chunks() if keys.num_chunks != 1 else keys.chunk(0)
    if pa.types.is_large_string(keys.type) or pa.types.is_string_view(keys.type):
        keys = keys.cast(pa.string())
    if not pa.types.is_string(keys.type) and not pa.types.is_binary(keys.type):
        raise TypeError(f"bloom filter keys must be strings, got {keys.type}")
    if keys.null_count:
        first = int(np_first_true(np.asarray(keys.is_null())))
        raise InvalidRecordKeyError(
            f"record key at row {first} is null; a bloom filter needs every record key"
        )
    return keys


def np_first_true(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def key_bytes_by_length(
    keys: pa.Array | pa.ChunkedArray | list[str],
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(row_indices, byte_matrix)`` per distinct key byte length."""
    arr = _as_string_array(keys)
    n = len(arr)
    if n == 0:
        return
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = (
        np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    )
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    sorted_len = lengths[order]
    bounds = np.flatnonzero(np.diff(sorted_len)) + 1
    for group in np.split(order, bounds):
        length = int(lengths[group[0]])
        starts = offsets[:-1][group]
        matrix = data[starts[:, None] + np.arange(length, dtype=np.int64)[None, :]]
        yield group, matrix.reshape(len(group), length)


def _prepare(matrix: np.ndarray) -> tuple[np.ndarray, np.uint32 | None]:
    """Seed-independent parts of the hash: the mixed 4-byte blocks and the tail value."""
    n, length = matrix.shape
    nblocks = length // 4
    body = np.ascontiguousarray(matrix[:, : nblocks * 4])
    k = body.view("<u4").reshape(n, nblocks).astype(np.uint32)
    with np.errstate(over="ignore"):
        k = k * _M
        k ^= k >> np.uint32(24)
        k = k * _M
    left = length - nblocks * 4
    tail = None
    if left:
        # Java bytes are signed: sign-extend before shifting (spec 6.3, Hadoop's tail order).
        signed = matrix.view(np.int8).astype(np.int32)
        t = np.zeros(n, dtype=np.int32)
        if left >= 3:
            t ^= signed[:, length - 3] << 16
        if left >= 2:
            t ^= signed[:, length - 2] << 8
        t ^= signed[:, length - 1]
        tail = t.view(np.uint32)
    return k, tail  # type: ignore[return-value]


def murmur2_rounds(matrix: np.ndarray, rounds: int, *, seed: int = 0) -> np.ndarray:
    """``(n, rounds)`` int32: ``h_i = murmur2(key, seed=h_{i-1})`` with ``h_0 = seed``."""
    n, length = matrix.shape
    k, tail = _prepare(matrix)
    out = np.empty((n, rounds), dtype=np.int32)
    h_prev = np.full(n, seed & 0xFFFFFFFF, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for r in range(rounds):
            h = h_prev ^ np.uint32(length)
            for j in range(k.shape[1]):
                h = h * _M
                h ^= k[:, j]
            if tail is not None:
                h ^= tail
                h = h * _M
            h ^= h >> np.uint32(13)
            h = h * _M
            h ^= h >> np.uint32(15)
            out[:, r] = h.view(np.int32)
            h_prev = h
    return out


def hash_positions(
    keys: pa.Array | pa.ChunkedArray | list[str], *, num_hashes: int, bit_size: int
) -> np.ndarray:
    """``(n, num_hashes)`` int64 bit positions ``abs(h % bit_size)`` (Java remainder)."""
    arr = _as_string_array(keys)
    out = np.empty((len(arr), num_hashes), dtype=np.int64)
    for rows, matrix in key_bytes_by_length(arr):
        h = murmur2_rounds(matrix, num_hashes).astype(np.int64)
        out[rows] = np.abs(np.fmod(h, bit_size))
    return out
