"""Hudi's MurmurHash2 (the Hadoop port, spec 6.3), vectorised over many keys with numpy.

Keys are grouped by UTF-8 byte length; each group becomes an ``(n, length)`` uint8 matrix and every
step of the hash runs over the whole group at once. 32-bit Java ``int`` arithmetic is done in
``uint32`` (same bits, wrapping multiplication).

:data:`compiled` is the same hashing built from C (``_murmur.c``) when the package was installed
with a compiler, else None. The bloom filters use it where it exists, 4x faster: numpy makes a
pass over memory for every step of a key's 30 chained hashes, where C keeps 32 keys' hashes in
vector registers from the first round to the last. The tests hold both versions to the same
positions.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import numpy as np
import pyarrow as pa

from hudi_core.errors import InvalidRecordKeyError

__all__ = [
    "as_string_array",
    "compiled",
    "hash_positions",
    "iter_positions",
    "key_buffers",
    "key_bytes_by_length",
    "murmur2_rounds",
    "positions_major",
]

compiled: ModuleType | None
try:
    from hudi_core.bloom import _murmur as compiled
except ImportError:  # installed without a C compiler: the numpy version below
    compiled = None

_M = np.uint32(0x5BD1E995)


def as_string_array(keys: pa.Array | pa.ChunkedArray | list[str]) -> pa.Array:
    """``keys`` as one non-null string (or binary) array, or an error naming the bad row."""
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


def key_buffers(arr: pa.Array) -> tuple[np.ndarray, pa.Buffer | bytes]:
    """A string array's ``n + 1`` int32 offsets and the data buffer they index, as
    :data:`compiled` takes keys."""
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset : arr.offset + len(arr) + 1]
    return offsets, bufs[2] if bufs[2] is not None else b""


def key_bytes_by_length(
    keys: pa.Array | pa.ChunkedArray | list[str],
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(row_indices, byte_matrix)`` per distinct key byte length."""
    arr = as_string_array(keys)
    n = len(arr)
    if n == 0:
        return
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    if n and (lengths == lengths[0]).all():
        # One length (the usual case): the data buffer already is the matrix.
        length = int(lengths[0])
        flat = data[offsets[0] : offsets[0] + n * length]
        yield np.arange(n, dtype=np.int64), flat.reshape(n, length)
        return
    order = np.argsort(lengths, kind="stable")
    sorted_len = lengths[order]
    bounds = np.flatnonzero(np.diff(sorted_len)) + 1
    for group in np.split(order, bounds):
        length = int(lengths[group[0]])
        # Arrow's take lays the group's keys end to end: a (len(group), length) matrix.
        taken = arr.take(pa.array(group))
        tb = taken.buffers()
        t_off = np.frombuffer(tb[1], dtype=np.int32)[taken.offset : taken.offset + len(group) + 1]
        t_data = np.frombuffer(tb[2], dtype=np.uint8) if tb[2] is not None else np.zeros(0, np.uint8)
        flat = t_data[int(t_off[0]) : int(t_off[0]) + len(group) * length]
        yield group, flat.reshape(len(group), length)


# Keys hashed per pass: the working uint32 vectors (a few per pass) stay in the CPU cache.
_CHUNK = 1 << 15


def _prepare(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Seed-independent parts of the hash: the mixed 4-byte blocks ``(nblocks, n)`` and the
    tail value."""
    n, length = matrix.shape
    nblocks = length // 4
    body = np.ascontiguousarray(matrix[:, : nblocks * 4])
    # Block-major so each round reads one contiguous vector per block. Always a copy: ``matrix``
    # may be a view of the caller's Arrow buffer, which the in-place mixing must not touch.
    k = np.array(body.view("<u4").reshape(n, nblocks).T, dtype=np.uint32, order="C", copy=True)
    with np.errstate(over="ignore"):
        k *= _M
        k ^= k >> np.uint32(24)
        k *= _M
    left = length - nblocks * 4
    tail = None
    if left:
        # Java bytes are signed: sign-extend before shifting (spec 6.3, Hadoop's tail order).
        signed = matrix[:, nblocks * 4 :].view(np.int8).astype(np.int32)
        t = signed[:, left - 1].copy()
        if left >= 2:
            t ^= signed[:, left - 2] << 8
        if left >= 3:
            t ^= signed[:, left - 3] << 16
        tail = t.view(np.uint32)
    return k, tail


def _rounds_into(
    out: np.ndarray, k: np.ndarray, tail: np.ndarray | None, length: int, seed: int, bit_size: int = 0
) -> None:
    """Fill ``out`` ``(rounds, n)`` uint32 with the chained hashes (with ``bit_size``: their bit
    positions), in place, no temporaries beyond two scratch vectors."""
    rounds, n = out.shape
    nblocks = k.shape[0]
    length_u = np.uint32(length)
    h = np.full(n, seed & 0xFFFFFFFF, dtype=np.uint32)
    tmp = np.empty(n, dtype=np.uint32)
    tmp2 = np.empty(n, dtype=np.uint32)
    with np.errstate(over="ignore"):
        for r in range(rounds):
            h ^= length_u
            for j in range(nblocks):
                h *= _M
                h ^= k[j]
            if tail is not None:
                h ^= tail
                h *= _M
            np.right_shift(h, np.uint32(13), out=tmp)
            h ^= tmp
            h *= _M
            np.right_shift(h, np.uint32(15), out=tmp)
            h ^= tmp
            if bit_size:
                # While the round's vector is in cache: the bit position, not the hash.
                _java_abs_mod(h, bit_size, out=out[r], sign=tmp, quotient=tmp2)
            else:
                out[r] = h


def murmur2_rounds(matrix: np.ndarray, rounds: int, *, seed: int = 0) -> np.ndarray:
    """``(n, rounds)`` int32: ``h_i = murmur2(key, seed=h_{i-1})`` with ``h_0 = seed``."""
    return _rounds_major(matrix, rounds, seed).T.view(np.int32)


def _rounds_major(matrix: np.ndarray, rounds: int, seed: int = 0) -> np.ndarray:
    """``(rounds, n)`` uint32 hashes, computed in cache-sized chunks of keys."""
    n, length = matrix.shape
    out = np.empty((rounds, n), dtype=np.uint32)
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        k, tail = _prepare(matrix[lo:hi])
        _rounds_into(out[:, lo:hi], k, tail, length, seed)
    return out


def _java_abs_mod(
    h: np.ndarray,
    bit_size: int,
    *,
    out: np.ndarray | None = None,
    sign: np.ndarray | None = None,
    quotient: np.ndarray | None = None,
) -> np.ndarray:
    """``Math.abs(h % bit_size)`` of int32 hashes held as uint32, in uint32 (into ``out``, else
    in place): the magnitude of a truncating remainder is ``|h| mod size`` (|INT_MIN| = 2^31
    fits uint32). ``sign`` and ``quotient`` are optional scratch vectors shaped like ``h``."""
    out = h if out is None else out
    # Branch-free two's-complement abs: sign is all ones for negatives; (h ^ sign) - sign.
    sign = np.right_shift(h.view(np.int32), 31, out=None if sign is None else sign.view(np.int32)).view(
        np.uint32
    )
    np.bitwise_xor(h, sign, out=out)
    out -= sign
    # x - (x // d) * d: numpy divides by a scalar with libdivide, far faster than its ``%``.
    d = np.uint32(bit_size)
    q = np.floor_divide(out, d, out=quotient)
    q *= d
    out -= q
    return out


def iter_positions(
    keys: pa.Array | pa.ChunkedArray | list[str], *, num_hashes: int, bit_size: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(row_indices, positions)`` per cache-sized chunk of same-length keys; ``positions`` is
    ``(num_hashes, len(row_indices))`` uint32. Chunks come in no particular key order."""
    for rows, matrix in key_bytes_by_length(keys):
        n, length = matrix.shape
        for lo in range(0, n, _CHUNK):
            hi = min(n, lo + _CHUNK)
            k, tail = _prepare(matrix[lo:hi])
            out = np.empty((num_hashes, hi - lo), dtype=np.uint32)
            _rounds_into(out, k, tail, length, 0, bit_size)
            yield rows[lo:hi], out


def positions_major(
    keys: pa.Array | pa.ChunkedArray | list[str], *, num_hashes: int, bit_size: int
) -> np.ndarray:
    """``(num_hashes, n)`` uint32 bit positions in key order, hash-major."""
    arr = as_string_array(keys)
    out = np.empty((num_hashes, len(arr)), dtype=np.uint32)
    if compiled is not None and len(arr):
        compiled.positions(out, *key_buffers(arr), num_hashes, bit_size)
        return out
    for rows, pos in iter_positions(arr, num_hashes=num_hashes, bit_size=bit_size):
        out[:, rows] = pos
    return out


def hash_positions(
    keys: pa.Array | pa.ChunkedArray | list[str], *, num_hashes: int, bit_size: int
) -> np.ndarray:
    """``(n, num_hashes)`` int64 bit positions ``abs(h % bit_size)`` (Java remainder)."""
    return positions_major(keys, num_hashes=num_hashes, bit_size=bit_size).T.astype(np.int64)
