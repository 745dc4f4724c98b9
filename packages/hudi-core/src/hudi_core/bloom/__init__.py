"""Hudi bloom filters (spec 6.3): murmur2 vectorised in numpy, SIMPLE and DYNAMIC_V0, bit-exact."""

from __future__ import annotations

import numpy as np

from hudi_core.bloom.filter import (
    DYNAMIC_V0,
    SIMPLE,
    BloomFilter,
    BloomFilterError,
    bloom_sizing,
    build_bloom_filter,
    deserialize_bloom_filter,
)
from hudi_core.bloom.murmur import hash_positions, murmur2_rounds

__all__ = [
    "DYNAMIC_V0",
    "SIMPLE",
    "BloomFilter",
    "BloomFilterError",
    "bloom_sizing",
    "build_bloom_filter",
    "deserialize_bloom_filter",
    "hash_positions",
    "might_contain",
    "murmur2_rounds",
]


def might_contain(serialized: str, type_code: str | None, keys: object) -> np.ndarray:
    """Deserialize a footer bloom filter and test ``keys`` (a string array) against it."""
    return deserialize_bloom_filter(serialized, type_code).might_contain(keys)  # type: ignore[arg-type]
