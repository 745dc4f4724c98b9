"""The compiled bloom filter hashing (``hudi_core.bloom._murmur``) against the numpy version
and the spec's reference, and its checks of the buffers it is given."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hudi_core.bloom import DYNAMIC_V0, build_bloom_filter, deserialize_bloom_filter, hash_positions, murmur

from .test_bloom_filter import _reference_positions


def _mixed_keys() -> list[str]:
    """Runs of equal-length keys (the compiled code hashes 32 at a time), lengths 0 to 300 (past
    its 256-byte limit for a run), multi-byte UTF-8, in shuffled runs."""
    rng = np.random.default_rng(7)
    keys = []
    for length in [0, 1, 2, 3, 4, 5, 7, 8, 36, 37, 255, 256, 257, 300]:
        for _ in range(int(rng.integers(1, 80))):
            keys.append("".join(chr(c) for c in rng.integers(32, 0x3000, length)))
    keys += [f"{i:08x}-{i * 7:04x}-4a1b-9c2d-{i * 13:012x}" for i in range(900)]
    return keys


def test_compiled_and_numpy_hashing_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = pa.array(_mixed_keys()).slice(3)  # a slice: offsets that do not start at 0
    present = keys.to_pylist()[::5]
    probes = pa.array([*present, *(f"absent-{i}" for i in range(500))])
    made = {}
    assert murmur.compiled is not None, "hudi_core.bloom._murmur is not built (make setup compiles it)"
    for impl in ("compiled", "numpy"):
        if impl == "numpy":
            monkeypatch.setattr(murmur, "compiled", None)
        bf = build_bloom_filter(filter_type=DYNAMIC_V0, num_entries=300, fpp=1e-6, max_entries=1000)
        for lo in range(0, len(keys), 400):  # rows fill, new rows open, then round robin
            bf.add(keys.slice(lo, 400))
        assert len(bf.rows) == 4 and bf._reached_max
        made[impl] = (
            hash_positions(keys, num_hashes=30, bit_size=2587966),
            bf.serialize(),
            bf.might_contain(probes),
            deserialize_bloom_filter(bf.serialize(), DYNAMIC_V0).might_contain(probes),
        )
    given, numpy = made["compiled"], made["numpy"]
    assert np.array_equal(given[0], numpy[0])
    assert given[1] == numpy[1]
    assert given[2].tolist() == numpy[2].tolist() == given[3].tolist()
    assert given[2][: len(present)].all()
    for i, k in enumerate(keys.to_pylist()[:40]):
        assert given[0][i].tolist() == _reference_positions(k, 30, 2587966), k


def test_compiled_hashing_checks_its_buffers() -> None:
    c = murmur.compiled
    assert c is not None, "hudi_core.bloom._murmur is not built (make setup compiles it)"
    offsets = np.array([0, 4, 99], dtype=np.int32)  # the second key runs past the data
    with pytest.raises(ValueError, match="offsets do not index"):
        c.set_bits(np.zeros(16, np.uint8), offsets, b"abcdefgh", 3, 100)
    ok = np.array([0, 4, 8], dtype=np.int32)
    with pytest.raises(ValueError, match="fewer than bit_size"):
        c.set_bits(np.zeros(4, np.uint8), ok, b"abcdefgh", 3, 100)
    with pytest.raises(ValueError, match="row_base points outside"):
        c.set_bits(np.zeros(16, np.uint8), ok, b"abcdefgh", 3, 100, np.array([0, 100], np.int64))
    with pytest.raises(ValueError, match="positive"):
        c.positions(np.zeros(0, np.uint32), ok, b"abcdefgh", 0, 100)
