"""``bulk_insert`` writes each base file's rows sorted by record key (duplicate keys in input
order), whether a local task gathers its own rows or the coordinator splits the input first."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hudi_core import HudiTable
from hudi_core.client.write_client import WriteClient


class _SerialEngine:
    """A non-local engine (the coordinator splits the input into per-bucket tables)."""

    name = "serial"
    parallelism = 1

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        return [fn(x) for x in items]


def _data() -> pa.Table:
    rng = np.random.default_rng(3)
    ids = rng.permutation(np.concatenate([np.arange(400), np.arange(0, 400, 7)]))  # some keys twice
    return pa.table({
        "id": [f"k{i:04d}" for i in ids],
        "ts": np.arange(len(ids), dtype=np.int64),  # input position: shows the order of duplicates
        "city": [("a", "b", "c")[i % 3] for i in ids],
    })  # fmt: skip


def _files(root: Path) -> dict[str, list[tuple[str, int]]]:
    out = {}
    for f in sorted(root.rglob("*.parquet")):
        t = pq.read_table(f)
        out[f"{f.parent.name}/{f.name.split('_')[0]}"] = list(
            zip(t["_hoodie_record_key"].to_pylist(), t["ts"].to_pylist(), strict=True)
        )
    return out


def _bulk(root: Path, engine: Any) -> dict[str, list[tuple[str, int]]]:
    t = HudiTable.create(str(root), name="o", table_type="COPY_ON_WRITE", record_key_fields="id",
                         partition_fields="city", ordering_field="ts")  # fmt: skip
    WriteClient(t, engine=engine).write(_data(), operation="bulk_insert")
    return _files(root)


def test_bulk_insert_files_are_sorted_by_key_with_duplicates_in_input_order(tmp_path: Path) -> None:
    files = _bulk(tmp_path / "t", None)
    assert sorted(k.split("/")[0] for k in files) == ["a", "b", "c"]  # one file group per partition
    total = 0
    for rows in files.values():
        assert rows == sorted(rows)  # by key, then by input position (ts)
        total += len(rows)
    assert total == _data().num_rows


def test_local_and_coordinator_split_write_the_same_rows_per_file(tmp_path: Path) -> None:
    local = _bulk(tmp_path / "local", None)
    serial = _bulk(tmp_path / "serial", _SerialEngine())
    assert sorted(local.values()) == sorted(serial.values())
