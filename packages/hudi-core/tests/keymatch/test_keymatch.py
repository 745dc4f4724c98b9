"""Record keys matched by their bytes (``hudi_core.keymatch``): the compiled hash tables against
pyarrow's ``index_in`` and ``dictionary_encode``, and the compiled code's checks of its buffers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hudi_core import keymatch


def _keys() -> list[str]:
    """Lengths 0 to 40 (the hash takes 8 bytes at a time, then a tail), multi-byte UTF-8, keys
    that share their last 8 bytes, uuid-like keys."""
    rng = np.random.default_rng(11)
    keys = ["", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "é", "日本語のキー"]
    keys += ["".join(chr(c) for c in rng.integers(32, 0x3000, int(n))) for n in rng.integers(0, 40, 300)]
    keys += [f"part={i % 7}/key-{i:06d}-same-tail!" for i in range(500)]
    keys += [f"{i:08x}-{i * 7:04x}-4a1b-9c2d-{i * 13:012x}" for i in range(3000)]
    return keys


def _reference(values: pa.Array, value_set: pa.Array) -> list[int]:
    return pc.fill_null(pc.index_in(values, value_set=value_set), -1).to_pylist()


def _same_groups(ids: np.ndarray, values: list[str | None]) -> bool:
    """``ids`` equal exactly where ``values`` are."""
    first: dict[str | None, int] = {}
    by_id: dict[int, str | None] = {}
    for i, v in zip(ids.tolist(), values, strict=True):
        if first.setdefault(v, i) != i or by_id.setdefault(i, v) != v:
            return False
    return True


@pytest.fixture(params=["compiled", "pyarrow"])
def impl(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    assert keymatch.compiled is not None, "hudi_core.keymatch._match is not built (make setup compiles it)"
    if request.param == "pyarrow":
        monkeypatch.setattr(keymatch, "compiled", None)
    return str(request.param)


def test_index_in_finds_each_key_s_first_row_in_the_set(impl: str) -> None:
    keys = _keys()
    rng = np.random.default_rng(3)
    chosen = [keys[i] for i in rng.choice(len(keys), 1500, replace=False)]
    # the set holds some keys twice (the first row wins) and keys the values do not hold
    value_set = pa.array([*chosen, *chosen[:50], *(f"absent-{i}" for i in range(700))]).slice(1)
    values = pa.array(["not-there", *keys, *chosen[:20]]).slice(2)  # slices: offsets not from 0
    got = keymatch.index_in(values, value_set)
    assert got.dtype == np.int64
    assert got.tolist() == _reference(values, value_set)
    first: dict[str, int] = {}
    for row, key in enumerate(value_set.to_pylist()):
        first.setdefault(key, row)
    assert got.tolist() == [first.get(k, -1) for k in values.to_pylist()]
    assert (got >= 0).sum() > 1000 and (got < 0).sum() > 1000


def test_index_in_of_chunked_empty_null_and_binary_keys(impl: str) -> None:
    s = pa.array(["x", "y", ""])
    chunked = pa.chunked_array([pa.array(["y", ""]), pa.array(["z", "x"])])
    assert keymatch.index_in(chunked, s).tolist() == [1, 2, -1, 0]
    assert keymatch.index_in(pa.array([], pa.string()), s).tolist() == []
    assert keymatch.index_in(pa.array(["x"]), pa.array([], pa.string())).tolist() == [-1]
    assert keymatch.index_in(pa.array(["x", None, "y"]), s).tolist() == [0, -1, 1]  # nulls: pyarrow
    b = pa.array([b"\x00\xff", b"x"], pa.binary())
    assert keymatch.index_in(pa.array([b"x", b"\x00\xff", b"\x00"], pa.binary()), b).tolist() == [1, 0, -1]


def test_group_ids_are_equal_where_the_keys_are(impl: str) -> None:
    keys = _keys()
    rng = np.random.default_rng(5)
    values = [keys[i] for i in rng.integers(0, len(keys), 6000)]
    ids = keymatch.group_ids(pa.array(values).slice(0))
    assert ids.dtype == np.int64 and ((ids >= 0) & (ids < len(values))).all()
    assert _same_groups(ids, values)
    assert len(set(ids.tolist())) == len(set(values))
    with_nulls = ["a", None, "b", None, "a"]
    assert _same_groups(keymatch.group_ids(pa.array(with_nulls)), with_nulls)
    chunked = keymatch.group_ids(pa.chunked_array([pa.array(["q"]), pa.array(["q", "r"])])).tolist()
    assert chunked[0] == chunked[1] != chunked[2]
    assert keymatch.group_ids(pa.array([], pa.string())).tolist() == []


def test_the_compiled_code_checks_its_buffers() -> None:
    c = keymatch.compiled
    assert c is not None, "hudi_core.keymatch._match is not built (make setup compiles it)"
    ok = np.array([0, 4, 8], dtype=np.int32)
    past = np.array([0, 4, 99], dtype=np.int32)  # the second key runs past the data
    with pytest.raises(ValueError, match="offsets do not index"):
        c.index_in(np.zeros(2, np.int64), past, b"abcdefgh", ok, b"abcdefgh")
    with pytest.raises(ValueError, match="offsets do not index"):
        c.first_rows(np.zeros(2, np.int64), np.array([0, 5, 4], dtype=np.int32), b"abcdefgh")
    with pytest.raises(ValueError, match="one int64 per key"):
        c.index_in(np.zeros(3, np.int64), ok, b"abcdefgh", ok, b"abcdefgh")
    with pytest.raises(ValueError, match="n \\+ 1 int32"):
        c.first_rows(np.zeros(0, np.int64), np.zeros(0, np.int32), b"")
    out = np.zeros(2, np.int64)
    c.index_in(out, ok, b"abcdefgh", np.array([0, 4], dtype=np.int32), b"efgh")
    assert out.tolist() == [-1, 0]


def test_lookup_is_index_in_for_take_and_distinct_tells_a_key_twice(impl: str) -> None:
    keys = _keys()
    values = pa.array([*keys[:300], "absent", None])
    got = keymatch.lookup(values, pa.array(keys))
    assert got.type == pa.int64()
    assert got.to_pylist() == pc.index_in(values, value_set=pa.array(keys)).to_pylist()
    unique = list(dict.fromkeys(keys))  # (the random keys hold "" more than once)
    assert keymatch.distinct(pa.array(unique[9:]))
    assert not keymatch.distinct(pa.array([*unique, unique[5]]))
    assert not keymatch.distinct(pa.array(["a", None]))
    assert keymatch.distinct(pa.chunked_array([pa.array(["a"]), pa.array(["b"])]))
    assert not keymatch.distinct(pa.chunked_array([pa.array(["a"]), pa.array(["a"])]))
    assert keymatch.distinct(pa.array([], pa.string()))
