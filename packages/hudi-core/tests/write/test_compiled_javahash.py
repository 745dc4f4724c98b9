"""The BUCKET index's Java string hash compiled (``hudi_core.write.index._javahash``) against the
numpy version and a plain-Python reference (Java's ``String.hashCode()`` over UTF-16 code units),
and the compiled code's checks of its buffers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hudi_core.write.index import bucket
from hudi_core.write.index.bucket import BucketIndex, java_string_hashes
from hudi_core.write.index.bucket import _java_hash_py as _java_hash  # key by key, over UTF-16 units


def _keys() -> list[str | None]:
    """Runs of four keys of one length (hashed side by side) and broken runs, lengths 0 to 41
    (four bytes at a time, then a tail), a non-ASCII key inside a run of ASCII ones, two-, three-
    and four-byte UTF-8 (surrogate pairs in Java), nulls, uuid-like keys."""
    rng = np.random.default_rng(5)
    keys: list[str | None] = [
        "",
        "a",
        "hello",
        "Aa",
        "BB",
        "ü",
        "😀",
        "a😀b",
        "日本語のキー",
        None,
        "x" * 1000,
    ]
    for length in range(42):
        keys += [
            "".join(chr(c) for c in rng.integers(32, 127, length)) for _ in range(int(rng.integers(1, 9)))
        ]
    # seven keys of five bytes, the middle one not ASCII: every run of four that reaches it holds it
    keys += ["abcde", "bcdef", "cdefg", "abcé", "defgh", "efghi", "fghij"]
    planes = [(0x80, 0x800), (0x800, 0xD800), (0xE000, 0x10000), (0x10000, 0x110000)]
    for _ in range(300):
        lo, hi = planes[int(rng.integers(0, 4))]
        keys.append("".join(chr(int(c)) if rng.random() < 0.5 else "k" for c in rng.integers(lo, hi, 9)))
    keys += [f"{i:08x}-{i * 7:04x}-4a1b-9c2d-{i * 13:012x}" for i in range(1003)]
    keys += [None, "tail"]
    return keys


@pytest.fixture(params=["compiled", "numpy"])
def impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    assert bucket.compiled is not None, (
        "hudi_core.write.index._javahash is not built (make setup compiles it)"
    )
    if request.param == "numpy":
        monkeypatch.setattr(bucket, "compiled", None)
    return str(request.param)


def test_hashes_are_javas(impl: str) -> None:
    keys = _keys()
    arr = pa.array(keys, pa.string()).slice(1)  # a slice: offsets that do not start at 0
    got = java_string_hashes(arr).tolist()
    assert got == [0 if k is None else _java_hash(k) for k in keys[1:]]
    # java.lang.String#hashCode, from Java: "hello", "ü", "😀" (two UTF-16 units)
    assert java_string_hashes(pa.array(["hello", "ü", "😀"])).view("int32").tolist() == [
        99162322,
        252,
        1772899,
    ]
    chunked = pa.chunked_array([arr.slice(0, 100), arr.slice(100)])
    assert java_string_hashes(chunked).tolist() == got
    assert java_string_hashes(arr.cast(pa.large_string())).tolist() == got


def test_bucket_ids_agree_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = pa.array([k for k in _keys() if k is not None])
    index = BucketIndex(7, ("id",), ("id",))
    compiled = index.bucket_ids(keys)
    monkeypatch.setattr(bucket, "compiled", None)
    assert compiled.tolist() == index.bucket_ids(keys).tolist()
    assert compiled.tolist() == [(31 + _java_hash(k)) % (1 << 32) % (1 << 31) % 7 for k in keys.to_pylist()]


def test_invalid_utf8_is_refused_with_its_row(impl: str) -> None:
    raw = pa.array([b"ok", b"fine", b"\xff\xfe", b"\xc3"], pa.binary()).view(pa.string())
    with pytest.raises(ValueError):
        java_string_hashes(raw)
    if impl == "compiled":
        with pytest.raises(ValueError, match="row 2"):
            java_string_hashes(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b"\xc0\x80",  # overlong NUL
        b"\xe0\x80\x80",  # overlong
        b"\xed\xa0\x80",  # a UTF-16 surrogate
        b"\xf4\x90\x80\x80",  # past U+10FFFF
        b"ab\xe2\x82",  # cut short
        b"\x80",  # a continuation byte first
    ],
)
def test_compiled_refuses_each_kind_of_bad_utf8(raw: bytes) -> None:
    assert bucket.compiled is not None
    offsets = np.array([0, 1, 1 + len(raw)], np.int32)
    out = np.zeros(2, np.uint32)
    assert bucket.compiled.hashes(out, offsets, b"a" + raw) == 1
    assert out[0] == ord("a")


def test_compiled_checks_its_buffers() -> None:
    c = bucket.compiled
    assert c is not None
    with pytest.raises(ValueError, match="index the data"):
        c.hashes(np.zeros(1, np.uint32), np.array([0, 9], np.int32), b"abc")
    with pytest.raises(ValueError, match="index the data"):
        c.hashes(np.zeros(2, np.uint32), np.array([0, 2, 1], np.int32), b"abc")
    with pytest.raises(ValueError, match="one uint32"):
        c.hashes(np.zeros(3, np.uint32), np.array([0, 1, 2], np.int32), b"abc")
    with pytest.raises(ValueError, match="n \\+ 1"):
        c.hashes(np.zeros(0, np.uint32), np.zeros(0, np.int32), b"")
