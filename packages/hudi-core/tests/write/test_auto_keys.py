"""A table without record key fields (Hudi 0.14's auto-generated keys): every write makes its
keys up as ``<instant>_<task>_<row>``, unique in the table; rows read back keep theirs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hudi_core import HudiTable
from hudi_core.errors import InvalidRecordKeyError


@pytest.fixture(params=["COPY_ON_WRITE", "MERGE_ON_READ"])
def logs(request: pytest.FixtureRequest, tmp_path: Path) -> HudiTable:
    return HudiTable.create(
        str(tmp_path / "logs"), name="logs", table_type=request.param, partition_fields="p"
    )


def _rows(values: range) -> pa.Table:
    return pa.table({"p": [f"p{v % 3}" for v in values], "v": pa.array(list(values), pa.int64())})


def _stored(table: HudiTable) -> dict[str, int]:
    return {r["_hoodie_record_key"]: r["v"] for r in HudiTable.open(table.base_uri).read().to_pylist()}


def test_a_streamed_write_numbers_its_rows_across_its_chunks(logs: HudiTable) -> None:
    logs.insert(_rows(range(5)))
    batches = _rows(range(5, 65)).to_batches(max_chunksize=7)
    logs.upsert(iter(batches), options={"hoodie.write.stream.chunk.max.bytes": "1"})
    first, second = (i.timestamp for i in HudiTable.open(logs.base_uri).timeline.completed_commits())
    stored = _stored(logs)
    assert sorted(stored.values()) == list(range(65))
    assert {k: v for k, v in stored.items() if k.startswith(first)} == {f"{first}_0_{v}": v for v in range(5)}
    # one task, its rows numbered in input order over every chunk
    assert {k: v for k, v in stored.items() if k.startswith(second)} == {
        f"{second}_0_{v - 5}": v for v in range(5, 65)
    }


def test_rows_read_back_keep_their_keys(logs: HudiTable) -> None:
    logs.bulk_insert(_rows(range(6)))
    read = HudiTable.open(logs.base_uri).read()
    before = _stored(logs)
    one = read.filter(pc.equal(read.column("v"), 1))
    HudiTable.open(logs.base_uri).upsert(one.set_column(one.schema.get_field_index("v"), "v", pa.array([10])))
    HudiTable.open(logs.base_uri).delete(read.filter(pc.equal(read.column("v"), 2)))
    assert _stored(logs) == {k: {1: 10}.get(v, v) for k, v in before.items() if v != 2}


def test_a_delete_without_the_stored_keys_is_refused_and_loses_nothing(logs: HudiTable) -> None:
    logs.insert(_rows(range(3)))
    before = _stored(logs)
    with pytest.raises(InvalidRecordKeyError, match="_hoodie_record_key"):
        HudiTable.open(logs.base_uri).delete(_rows(range(1)))
    assert _stored(logs) == before
    assert len(HudiTable.open(logs.base_uri).timeline) == 1
