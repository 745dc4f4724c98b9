"""The bloom filter against Hudi-written footers and a plain per-key reference of spec 6.3."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core.bloom import (
    DYNAMIC_V0,
    SIMPLE,
    BloomFilterError,
    bloom_sizing,
    build_bloom_filter,
    deserialize_bloom_filter,
    hash_positions,
    might_contain,
    murmur,
)
from hudi_core.errors import InvalidRecordKeyError
from hudi_core.testing.corpus import corpus_root

BLOOM_KEY = b"org.apache.hudi.bloomfilter"
TYPE_KEY = b"hoodie_bloom_filter_type_code"


def _corpus_files_with_bloom() -> list[Path]:
    root = corpus_root()
    if root is None:
        return []
    out = []
    for f in sorted((root / "tables").rglob("*.parquet")):
        if BLOOM_KEY in (pq.ParquetFile(f).metadata.metadata or {}):
            out.append(f)
    return out


CORPUS_FILES = _corpus_files_with_bloom()


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def hashing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: with the compiled hashing (built by the install) and with numpy's."""
    if request.param == "numpy":
        monkeypatch.setattr(murmur, "compiled", None)
    else:
        assert murmur.compiled is not None, "hudi_core.bloom._murmur is not built (make setup compiles it)"
    return str(request.param)


def _reference_murmur(data: bytes, seed: int) -> int:
    """Spec 6.3 word for word, one key at a time, Java int semantics."""
    m = 0x5BD1E995

    def i32(x: int) -> int:
        x &= 0xFFFFFFFF
        return x - (1 << 32) if x >= 1 << 31 else x

    def sb(b: int) -> int:
        return b - 256 if b >= 128 else b

    n = len(data)
    h = i32(seed ^ n)
    for i in range(n // 4):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = i32(k * m)
        k ^= (k & 0xFFFFFFFF) >> 24
        k = i32(k * m)
        h = i32(h * m)
        h = i32(h ^ k)
    t = n % 4
    if t:
        if t >= 3:
            h = i32(h ^ (sb(data[n - 3]) << 16))
        if t >= 2:
            h = i32(h ^ (sb(data[n - 2]) << 8))
        h = i32(h ^ sb(data[n - 1]))
        h = i32(h * m)
    h = i32(h ^ ((h & 0xFFFFFFFF) >> 13))
    h = i32(h * m)
    h = i32(h ^ ((h & 0xFFFFFFFF) >> 15))
    return h


def _reference_positions(key: str, num_hashes: int, bit_size: int) -> list[int]:
    out, h = [], 0
    for _ in range(num_hashes):
        h = _reference_murmur(key.encode("utf-8"), h)
        r = abs(h) % bit_size
        out.append(r)  # abs(h % size) == abs(h) % size for Java's truncating remainder
    return out


def test_sizing_matches_hudi_defaults() -> None:
    assert bloom_sizing(60000, 1e-9) == (2587966, 30)


@pytest.mark.skipif(not CORPUS_FILES, reason="compat corpus not available")
@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: "/".join(p.parts[-3:]))
def test_recomputed_filter_equals_hudi_footer(path: Path) -> None:
    pf = pq.ParquetFile(path)
    kv = pf.metadata.metadata
    keys = pf.read(columns=["_hoodie_record_key"]).column(0)
    built = build_bloom_filter(keys, filter_type=kv[TYPE_KEY].decode())
    assert built.serialize() == kv[BLOOM_KEY].decode()


@pytest.mark.skipif(not CORPUS_FILES, reason="compat corpus not available")
def test_might_contain_on_hudi_footer() -> None:
    pf = pq.ParquetFile(CORPUS_FILES[0])
    kv = pf.metadata.metadata
    keys = pf.read(columns=["_hoodie_record_key"]).column(0)
    found = might_contain(kv[BLOOM_KEY].decode(), kv[TYPE_KEY].decode(), keys)
    assert found.dtype == np.bool_ and found.all()
    absent = might_contain(kv[BLOOM_KEY].decode(), kv[TYPE_KEY].decode(), ["nope", "id:9,name:Zed"])
    assert absent.tolist() == [False, False]


def test_vectorised_hash_matches_reference_for_every_tail_length() -> None:
    keys = ["", "a", "ab", "abc", "abcd", "abcde", "é", "日本語キー", "ÿþ", "x" * 37, "key-ñ-\u00ff\u0080"]
    keys += [f"id:{i},name:N{i * 7}" for i in range(50)]
    got = hash_positions(pa.array(keys), num_hashes=30, bit_size=2587966)
    for i, k in enumerate(keys):
        assert got[i].tolist() == _reference_positions(k, 30, 2587966), k


def test_simple_serialisation_layout() -> None:
    bf = build_bloom_filter(["k1", "k2"], filter_type=SIMPLE, num_entries=100, fpp=0.01)
    raw = base64.b64decode(bf.serialize())
    version, nh, ht, size = struct.unpack_from(">iibi", raw)
    assert (version, nh, ht, size) == (-1, bf.num_hashes, 1, bf.bit_size)
    assert len(raw) == 13 + (size + 7) // 8
    # every position of k1 is set, LSB first within each byte
    for p in _reference_positions("k1", nh, size):
        assert raw[13 + (p >> 3)] & (1 << (p & 7))


def test_dynamic_header_and_round_trip() -> None:
    keys = pa.array([f"key-{i}" for i in range(1000)])
    bf = build_bloom_filter(keys)
    raw = base64.b64decode(bf.serialize())
    assert struct.unpack_from(">iibiiii", raw) == (-1, 30, 1, 2587966, 60000, 1000, 1)
    again = deserialize_bloom_filter(bf.serialize(), DYNAMIC_V0)
    assert again.serialize() == bf.serialize()
    assert again.might_contain(keys).all()
    probes = pa.array([f"other-{i}" for i in range(1000)])
    assert again.might_contain(probes).sum() == 0


def test_dynamic_adds_rows_then_goes_round_robin() -> None:
    bf = build_bloom_filter(filter_type=DYNAMIC_V0, num_entries=10, fpp=0.01, max_entries=25)
    bf.add([f"a{i}" for i in range(10)])
    assert len(bf.rows) == 1 and bf.current_nb_record == 10
    bf.add([f"b{i}" for i in range(15)])  # 11th key opens row 2, 21st opens row 3 (2*10 < 25)
    assert len(bf.rows) == 3 and bf.current_nb_record == 5
    bf.add([f"c{i}" for i in range(8)])  # row 3 fills (5 more), then 3*10 >= 25: round robin
    assert len(bf.rows) == 3
    assert bf.might_contain([f"c{i}" for i in range(8)]).all()
    assert bf.might_contain(["a0", "b14"]).all()


@pytest.mark.parametrize("before", [0, 5, 10, 11, 22, 29, 30, 31, 32, 47, 61])
@pytest.mark.parametrize("more", [1, 7, 23])
def test_a_resumed_dynamic_filter_takes_keys_as_one_built_at_once(before: int, more: int) -> None:
    """Serialized, read back and given the cap it was built with, a dynamic filter takes more
    keys into the rows one built from every key puts them in: growing rows below the cap (3 rows
    of 10 at a cap of 25), Java's round robin past it, wherever it stood."""
    keys = [f"k{i:03d}" for i in range(before + more)]
    settings = {"filter_type": DYNAMIC_V0, "num_entries": 10, "fpp": 0.01, "max_entries": 25}
    first = deserialize_bloom_filter(build_bloom_filter(keys[:before], **settings).serialize(), DYNAMIC_V0)
    assert first.resume(25)
    first.add(keys[before:])
    assert first.serialize() == build_bloom_filter(keys, **settings).serialize()


def test_a_dynamic_filter_resumes_only_under_a_cap_its_rows_fit() -> None:
    keys = [f"k{i:03d}" for i in range(47)]
    wide = build_bloom_filter(keys, filter_type=DYNAMIC_V0, num_entries=10, fpp=0.01, max_entries=45)
    assert not deserialize_bloom_filter(wide.serialize(), DYNAMIC_V0).resume(25)  # 5 rows, a cap of 3
    narrow = build_bloom_filter(keys, filter_type=DYNAMIC_V0, num_entries=10, fpp=0.01, max_entries=25)
    assert not deserialize_bloom_filter(narrow.serialize(), DYNAMIC_V0).resume(45)  # round robin at 3 rows
    assert deserialize_bloom_filter(narrow.serialize(), DYNAMIC_V0).resume(25)


def test_null_key_is_rejected() -> None:
    with pytest.raises(InvalidRecordKeyError, match="row 1"):
        build_bloom_filter(pa.array(["a", None]))


def test_unknown_type_code_is_rejected() -> None:
    with pytest.raises(BloomFilterError, match="BOGUS"):
        build_bloom_filter(["a"], filter_type="BOGUS")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda ks: pa.array(["pad", *ks]).slice(1), id="sliced-array"),
        pytest.param(lambda ks: pa.chunked_array([ks[:3], ks[3:]]), id="chunked"),
        pytest.param(lambda ks: pa.array(ks, pa.large_string()), id="large-string"),
    ],
)
@pytest.mark.parametrize("same_length", [True, False])
def test_positions_do_not_depend_on_array_layout(make: object, same_length: bool) -> None:
    keys = [f"id-{i:03d}" for i in range(7)] if same_length else [f"id-{i}" * (i % 3 + 1) for i in range(7)]
    got = hash_positions(make(keys), num_hashes=5, bit_size=1009)  # type: ignore[operator]
    assert got.tolist() == [_reference_positions(k, 5, 1009) for k in keys]


@pytest.mark.parametrize("width", [3, 4, 5, 8, 9, 13])
def test_hashing_leaves_the_keys_untouched(width: int) -> None:
    keys = pa.array([f"{i:0{width}d}" for i in range(50)])
    before = keys.to_pylist()
    build_bloom_filter(keys, filter_type=SIMPLE)
    build_bloom_filter(keys, filter_type=DYNAMIC_V0)
    assert keys.to_pylist() == before
