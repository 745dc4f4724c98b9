"""Hudi's bloom filters (spec 6.3): SIMPLE and DYNAMIC_V0, serialised bit-exactly as Java does.

Both are built from Hadoop's ``BloomFilter`` bit vectors with murmur hashing; DYNAMIC_V0 is
Hudi's bounded dynamic filter (rows of bit vectors). The serialised form is base64 (standard,
padded) of the Java ``DataOutput`` bytes.
"""

from __future__ import annotations

import base64
import math
import struct
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import pyarrow as pa

from hudi_core.bloom import murmur
from hudi_core.bloom.murmur import as_string_array, iter_positions, key_buffers, positions_major
from hudi_core.errors import HudiError

__all__ = [
    "DYNAMIC_V0",
    "SIMPLE",
    "BloomFilter",
    "BloomFilterError",
    "bloom_sizing",
    "build_bloom_filter",
    "deserialize_bloom_filter",
]

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"
_VERSION = -1
_MURMUR_HASH = 1


class BloomFilterError(HudiError):
    """A serialised bloom filter is malformed or of an unknown type."""


def bloom_sizing(num_entries: int, fpp: float) -> tuple[int, int]:
    """``(bit_size, num_hashes)`` exactly as Hudi computes them (Java double arithmetic)."""
    if num_entries <= 0 or not 0.0 < fpp < 1.0:
        raise BloomFilterError(
            f"bloom filter sizing needs num_entries > 0 and 0 < fpp < 1, got {num_entries}, {fpp}"
        )
    bit_size = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))
    num_hashes = math.ceil(math.log(2) * bit_size / num_entries)
    return bit_size, num_hashes


def _vector_bytes(bits: np.ndarray) -> bytes:
    return np.packbits(bits, bitorder="little").tobytes()


def _vector_header(num_hashes: int, bit_size: int) -> bytes:
    return struct.pack(">iibi", _VERSION, num_hashes, _MURMUR_HASH, bit_size)


@dataclass
class BloomFilter:
    """One Hudi bloom filter: a single bit vector (SIMPLE) or rows of them (DYNAMIC_V0).

    >>> f = build_bloom_filter(pa.array(["a", "b"]), filter_type="SIMPLE")
    >>> f.might_contain(pa.array(["a", "zz"])).tolist()[0]
    True
    """

    type_code: str
    num_hashes: int
    bit_size: int
    rows: list[np.ndarray]
    #: DYNAMIC_V0: keys per row before a new row is added, the keys in the active row, the cap.
    num_entries: int = 0
    current_nb_record: int = 0
    max_entries: int = 0
    _reached_max: bool = field(default=False, repr=False)
    _cur_matrix_index: int = field(default=0, repr=False)
    #: the rows as packed bit vectors (LSB first, as serialised), for the compiled membership test
    _packed: list[np.ndarray] | None = field(default=None, repr=False, compare=False)

    # -- adding keys -------------------------------------------------------------------------

    def _row_of_each(self, n: int) -> np.ndarray:
        """Row index for each of ``n`` new keys, following Java's one-key-at-a-time rule."""
        if self.type_code == SIMPLE:
            return np.zeros(n, dtype=np.int64)
        out = np.empty(n, dtype=np.int64)
        done = 0
        while done < n:
            remaining = n - done
            m = len(self.rows)
            if self._reached_max:
                out[done:] = (self._cur_matrix_index + np.arange(remaining)) % m
                self._cur_matrix_index += remaining
                self.current_nb_record += remaining
                break
            if self.current_nb_record >= self.num_entries:
                if m * self.num_entries < self.max_entries:
                    self.rows.append(np.zeros(self.bit_size, dtype=bool))
                    self.current_nb_record = 0
                    continue
                # Java flips to round-robin and puts this one key in row 0 first.
                self._reached_max = True
                out[done] = 0
                self.current_nb_record += 1
                done += 1
                continue
            take = min(remaining, self.num_entries - self.current_nb_record)
            out[done : done + take] = m - 1
            self.current_nb_record += take
            done += take
        return out

    def resume(self, max_entries: int) -> bool:
        """Make a deserialized DYNAMIC_V0 filter take more keys exactly as the filter that wrote
        it would, had it been built with ``max_entries``: the cap is not serialized, nor where
        Java's round robin over the rows stands once the cap is reached; the count of keys in
        the active row is, and Java keeps counting there after the cap, so it tells the place.
        False when the rows do not fit that cap (the filter was built with another)."""
        if self.type_code == SIMPLE:
            return True
        rows_at_cap = max(1, -(-max_entries // self.num_entries))
        beyond_cap = self.current_nb_record > self.num_entries  # Java's first key past the cap made it so
        if len(self.rows) > rows_at_cap or (beyond_cap and len(self.rows) != rows_at_cap):
            return False
        self.max_entries = max_entries
        self._reached_max = beyond_cap
        self._cur_matrix_index = self.current_nb_record - self.num_entries - 1 if beyond_cap else 0
        return True

    def add(self, keys: pa.Array | pa.ChunkedArray | list[str]) -> None:
        """Add record keys (strings, hashed as UTF-8), in order."""
        arr = as_string_array(keys)
        n = len(arr)
        if n == 0:
            return
        rows = self._row_of_each(n)
        single = self.type_code == SIMPLE or (rows[0] == rows[-1] and not self._reached_max)
        self._packed = None
        if murmur.compiled is not None:
            self._add_compiled(murmur.compiled, arr, rows, single)
            return
        # Setting bits is order-free: go chunk by chunk, never building all positions at once.
        # Indices are widened to intp first: numpy's scatter is much slower with uint32 indices.
        if single:
            bits = self.rows[int(rows[0])]
            for _, pos in iter_positions(arr, num_hashes=self.num_hashes, bit_size=self.bit_size):
                bits[pos.reshape(-1).astype(np.intp)] = True
            return
        # Several rows: one scatter into the rows laid end to end (row r at r * bit_size).
        matrix = np.stack(self.rows)
        flat = matrix.reshape(-1)
        row_base = rows.astype(np.intp) * self.bit_size
        for idx, pos in iter_positions(arr, num_hashes=self.num_hashes, bit_size=self.bit_size):
            target = pos.astype(np.intp)
            target += row_base[idx]
            flat[target.reshape(-1)] = True
        for r, bits in enumerate(self.rows):
            bits |= matrix[r]

    def _add_compiled(self, compiled: ModuleType, arr: pa.Array, rows: np.ndarray, single: bool) -> None:
        """:meth:`add` with the compiled hashing: the keys' bits set in packed rows (a row of
        Hudi's default size, 2.6M bits, then stays in the CPU cache), unpacked and ORed in."""
        nbytes = (self.bit_size + 7) // 8
        offsets, data = key_buffers(arr)
        targets = [int(rows[0])] if single else range(len(self.rows))
        packed = np.zeros((len(targets), nbytes), dtype=np.uint8)
        row_base = None if single else rows * (nbytes * 8)
        compiled.set_bits(packed, offsets, data, self.num_hashes, self.bit_size, row_base)
        for i, r in enumerate(targets):
            self.rows[r] |= np.unpackbits(packed[i], count=self.bit_size, bitorder="little").view(bool)

    # -- membership --------------------------------------------------------------------------

    def might_contain(self, keys: pa.Array | pa.ChunkedArray | list[str]) -> np.ndarray:
        """Per key: False when the key is certainly absent, True when it may be present."""
        if murmur.compiled is not None:
            arr = as_string_array(keys)
            out = np.zeros(len(arr), dtype=bool)
            if not len(arr):
                return out
            if self._packed is None:
                self._packed = [np.packbits(bits, bitorder="little") for bits in self.rows]
            offsets, data = key_buffers(arr)
            found = np.empty(len(arr), dtype=np.uint8)
            for packed in self._packed:
                murmur.compiled.contains(found, packed, offsets, data, self.num_hashes, self.bit_size)
                out |= found.view(bool)
            return out
        positions = positions_major(keys, num_hashes=self.num_hashes, bit_size=self.bit_size)
        out = np.zeros(positions.shape[1], dtype=bool)
        for bits in self.rows:
            out |= bits[positions].all(axis=0)
        return out

    # -- serialisation -----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        if self.type_code == SIMPLE:
            return _vector_header(self.num_hashes, self.bit_size) + _vector_bytes(self.rows[0])
        parts = [
            _vector_header(self.num_hashes, self.bit_size),
            struct.pack(">iii", self.num_entries, self.current_nb_record, len(self.rows)),
        ]
        for bits in self.rows:
            parts.append(_vector_header(self.num_hashes, self.bit_size))
            parts.append(_vector_bytes(bits))
        return b"".join(parts)

    def serialize(self) -> str:
        """The footer value of ``org.apache.hudi.bloomfilter``."""
        return base64.b64encode(self.to_bytes()).decode("ascii")


def build_bloom_filter(
    keys: pa.Array | pa.ChunkedArray | list[str] | None = None,
    *,
    filter_type: str = DYNAMIC_V0,
    num_entries: int = 60000,
    fpp: float = 0.000000001,
    max_entries: int = 100000,
) -> BloomFilter:
    """A new filter sized like Hudi's, with ``keys`` added."""
    kind = filter_type.upper()
    if kind not in (SIMPLE, DYNAMIC_V0):
        raise BloomFilterError(f"unknown bloom filter type {filter_type!r}; use {DYNAMIC_V0} or {SIMPLE}")
    bit_size, num_hashes = bloom_sizing(num_entries, fpp)
    bf = BloomFilter(
        type_code=kind,
        num_hashes=num_hashes,
        bit_size=bit_size,
        rows=[np.zeros(bit_size, dtype=bool)],
        num_entries=num_entries if kind == DYNAMIC_V0 else 0,
        max_entries=max_entries if kind == DYNAMIC_V0 else 0,
    )
    if keys is not None:
        bf.add(keys)
    return bf


def _read_vector(data: bytes, pos: int) -> tuple[int, int, np.ndarray, np.ndarray, int]:
    version, num_hashes, hash_type, bit_size = struct.unpack_from(">iibi", data, pos)
    if version != _VERSION or hash_type != _MURMUR_HASH or bit_size <= 0:
        raise BloomFilterError(
            f"unsupported bloom bit vector header (version {version}, hash type {hash_type}, "
            f"size {bit_size}); only Hudi's murmur filters are readable"
        )
    pos += 13
    nbytes = (bit_size + 7) // 8
    if pos + nbytes > len(data):
        raise BloomFilterError("bloom filter bytes are truncated")
    raw = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=pos)
    bits = np.unpackbits(raw, count=bit_size, bitorder="little").view(bool)
    return num_hashes, bit_size, bits, raw, pos + nbytes


def deserialize_bloom_filter(serialized: str | bytes, type_code: str | None = None) -> BloomFilter:
    """Parse the footer value; ``type_code`` from ``hoodie_bloom_filter_type_code`` (None = SIMPLE,
    as Java assumes for files written before the type code existed)."""
    kind = (type_code or SIMPLE).upper()
    try:
        data = base64.b64decode(serialized, validate=True)
    except ValueError as e:
        raise BloomFilterError(f"bloom filter is not valid base64: {e}") from e
    if kind == SIMPLE:
        num_hashes, bit_size, bits, raw, _ = _read_vector(data, 0)
        return BloomFilter(SIMPLE, num_hashes, bit_size, [bits], _packed=[raw])
    if kind != DYNAMIC_V0:
        raise BloomFilterError(f"unknown bloom filter type code {type_code!r}")
    version, num_hashes, hash_type, bit_size = struct.unpack_from(">iibi", data, 0)
    if version != _VERSION or hash_type != _MURMUR_HASH:
        raise BloomFilterError(f"unsupported dynamic bloom filter header in {serialized[:32]!r}")
    nr, current, nrows = struct.unpack_from(">iii", data, 13)
    pos = 25
    rows, packed = [], []
    for _ in range(nrows):
        _, _, bits, raw, pos = _read_vector(data, pos)
        rows.append(bits)
        packed.append(raw)
    return BloomFilter(DYNAMIC_V0, num_hashes, bit_size, rows, num_entries=nr, current_nb_record=current,
                       _packed=packed)  # fmt: skip
