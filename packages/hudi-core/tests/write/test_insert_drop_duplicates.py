"""Writes that combine a record's versions, as Apache Hudi's Spark writer has them:
``hoodie.datasource.write.insert.drop.duplicates`` (an insert or upsert drops the incoming
records whose key the table holds and deduplicates the rest by the ordering field; bulk_insert
and the BUCKET index refuse it before anything is written), and the ordering value every such
write needs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ConfigError, InvalidRecordError

DROP = {"hoodie.datasource.write.insert.drop.duplicates": "true"}


def _rows(ids: list[str], ts: list[int], parts: list[str]) -> pa.Table:
    return pa.table(
        {"id": ids, "ts": ts, "p": parts, "v": [f"{i}@{t}" for i, t in zip(ids, ts, strict=True)]}
    )


FIRST = _rows(["k0", "k1", "k2"], [1, 1, 1], ["a", "a", "a"])
#: k0 and k1 are stored in a; k9 and k7 twice each; k2 is stored, but in a, not b
SECOND = _rows(
    ["k0", "k1", "k9", "k9", "k7", "k7", "k2"], [2, 0, 2, 3, 2, 1, 5], ["a", "a", "a", "a", "b", "b", "b"]
)


def _table(path: Path, table_type: str, index: str = "SIMPLE") -> HudiTable:
    t = HudiTable.create(str(path), name="d", table_type=table_type, record_key_fields="id",
                         partition_fields="p", ordering_field="ts", options={"hoodie.index.type": index})  # fmt: skip
    t.insert(FIRST)
    return HudiTable.open(str(path))


def _read(path: Path) -> list[tuple[str, int, str]]:
    return sorted((r["id"], r["ts"], r["p"]) for r in HudiTable.open(str(path)).read().to_pylist())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("operation", ["insert", "upsert"])
def test_stored_keys_are_dropped_and_the_rest_deduplicated(
    tmp_path: Path, table_type: str, operation: str
) -> None:
    t = _table(tmp_path, table_type)
    result = getattr(t, operation)(SECOND, options=DROP)
    assert (result.inserted, result.updated) == (3, 0)
    assert _read(tmp_path) == [("k0", 1, "a"), ("k1", 1, "a"), ("k2", 1, "a"), ("k2", 5, "b"), ("k7", 2, "b"),
                               ("k9", 3, "a")]  # fmt: skip


def test_a_global_index_drops_a_key_stored_in_another_partition(tmp_path: Path) -> None:
    t = _table(tmp_path, "COPY_ON_WRITE", "GLOBAL_SIMPLE")
    t.insert(SECOND, options={**DROP, "hoodie.index.type": "GLOBAL_SIMPLE"})
    assert _read(tmp_path) == [("k0", 1, "a"), ("k1", 1, "a"), ("k2", 1, "a"), ("k7", 2, "b"), ("k9", 3, "a")]


def test_a_streamed_insert_drops_stored_keys_in_every_chunk(tmp_path: Path) -> None:
    t = _table(tmp_path, "MERGE_ON_READ")
    # a chunk per batch of two rows: the stored k0 and k1 meet the table in the first chunk
    t.insert(
        iter(SECOND.to_batches(max_chunksize=2)), options={**DROP, "hoodie.write.stream.chunk.max.bytes": "1"}
    )
    assert _read(tmp_path) == [("k0", 1, "a"), ("k1", 1, "a"), ("k2", 1, "a"), ("k2", 5, "b"), ("k7", 2, "b"),
                               ("k9", 3, "a")]  # fmt: skip


def test_an_overwrite_only_deduplicates(tmp_path: Path) -> None:
    t = _table(tmp_path, "COPY_ON_WRITE")
    t.insert_overwrite(SECOND, options=DROP)
    assert _read(tmp_path) == [("k0", 2, "a"), ("k1", 0, "a"), ("k2", 5, "b"), ("k7", 2, "b"), ("k9", 3, "a")]


@pytest.mark.parametrize(
    ("index", "operation", "match"),
    [
        ("SIMPLE", "bulk_insert", "bulk_insert"),
        ("BUCKET", "insert", "BUCKET"),
        ("BUCKET", "upsert", "BUCKET"),
    ],
)
def test_refused_before_anything_is_written(tmp_path: Path, index: str, operation: str, match: str) -> None:
    t = _table(tmp_path, "COPY_ON_WRITE", index)
    timeline = sorted(f.name for f in (tmp_path / ".hoodie").iterdir())
    with pytest.raises(ConfigError, match=match):
        getattr(t, operation)(SECOND, options={**DROP, "hoodie.index.type": index})
    assert sorted(f.name for f in (tmp_path / ".hoodie").iterdir()) == timeline  # no instant started
    assert _read(tmp_path) == [("k0", 1, "a"), ("k1", 1, "a"), ("k2", 1, "a")]


@pytest.mark.parametrize(
    ("operation", "options"),
    [("upsert", {}), ("upsert", {"hoodie.combine.before.upsert": "false"}), ("insert", DROP),
     ("insert", {"hoodie.combine.before.insert": "true"})],
)  # fmt: skip
def test_a_combining_write_refuses_a_null_ordering_value(
    tmp_path: Path, operation: str, options: dict
) -> None:
    """Apache Hudi's writer refuses such a record ("Ordering value is null for record"); the
    table stays at its last commit."""
    t = _table(tmp_path, "MERGE_ON_READ")
    data = pa.table(
        {"id": ["k0", "k5"], "ts": pa.array([2, None], pa.int64()), "p": ["a", "a"], "v": ["x", "y"]}
    )
    with pytest.raises(InvalidRecordError, match=r"ordering field 'ts' is null in row 1 \(record key 'k5'\)"):
        getattr(t, operation)(data, options=options)
    assert _read(tmp_path) == [("k0", 1, "a"), ("k1", 1, "a"), ("k2", 1, "a")]


def test_an_insert_that_does_not_combine_takes_a_null_ordering_value(tmp_path: Path) -> None:
    t = _table(tmp_path, "COPY_ON_WRITE")
    t.insert(pa.table({"id": ["k5"], "ts": pa.array([None], pa.int64()), "p": ["a"], "v": ["y"]}))
    assert ("k5", None, "a") in _read(tmp_path)
