"""``bulk_insert`` orders each base file's rows as ``hoodie.bulkinsert.sort.mode`` says: input
order (NONE, Hudi's default), sorted by record key (PARTITION_SORT), or sorted with each file
one run of keys (GLOBAL_SORT); duplicate keys stay in input order; the same whether a local task
gathers its own rows or the coordinator splits the input first."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
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


def _bulk(
    root: Path, engine: Any, mode: str | None = None, data: pa.Table | None = None, **options: str
) -> dict[str, list[tuple[str, int]]]:
    t = HudiTable.create(str(root), name="o", table_type="COPY_ON_WRITE", record_key_fields="id",
                         partition_fields="city", ordering_field="ts")  # fmt: skip
    opts = {**options, **({"hoodie.bulkinsert.sort.mode": mode} if mode else {})}
    WriteClient(t, opts, engine=engine).write(_data() if data is None else data, operation="bulk_insert")
    return _files(root)


def _rows_by_city() -> dict[str, list[tuple[str, int]]]:
    data = _data().to_pydict()
    out: dict[str, list[tuple[str, int]]] = {}
    for k, ts, city in zip(data["id"], data["ts"], data["city"], strict=True):
        out.setdefault(city, []).append((k, ts))
    return out


def test_by_default_each_file_keeps_the_input_order(tmp_path: Path) -> None:
    files = _bulk(tmp_path / "t", None)
    assert sorted(k.split("/")[0] for k in files) == ["a", "b", "c"]  # one file group per partition
    assert {k.split("/")[0]: rows for k, rows in files.items()} == _rows_by_city()


def test_in_input_order_files_roll_at_the_size_limit_each_one_run_of_the_input(tmp_path: Path) -> None:
    """Hudi's bulk_insert with sort mode NONE rolls a partition's file over at
    ``hoodie.parquet.max.file.size`` of bytes written: several files, each holding the next run
    of that partition's rows in input order."""
    files = _bulk(tmp_path / "t", None, None, **{"hoodie.parquet.max.file.size": "1024"})
    for city, rows in _rows_by_city().items():
        runs = [r for name, r in files.items() if name.startswith(f"{city}/")]
        assert len(runs) > 1, "a 1 KB limit (~16 bytes a row here) should roll every partition's file"
        assert sorted(x for run in runs for x in run) == sorted(rows)
        for run in runs:  # each file is a contiguous run of the partition's input rows
            start = rows.index(run[0])
            assert rows[start : start + len(run)] == run


@pytest.mark.parametrize("mode", ["PARTITION_SORT", "GLOBAL_SORT"])
def test_sorted_modes_sort_each_file_by_key_with_duplicates_in_input_order(tmp_path: Path, mode: str) -> None:
    files = _bulk(tmp_path / "t", None, mode)
    assert {k.split("/")[0]: rows for k, rows in files.items()} == {
        city: sorted(rows)
        for city, rows in _rows_by_city().items()  # by key, then by input position (ts)
    }


def test_global_sort_gives_each_file_its_own_run_of_keys(tmp_path: Path) -> None:
    """Several file groups per partition (small files): their key ranges do not overlap."""
    options = {"hoodie.parquet.max.file.size": "4096", "hoodie.copyonwrite.record.size.estimate": "64"}
    files = _bulk(tmp_path / "t", None, "GLOBAL_SORT", **options)
    for city in "abc":
        runs = sorted(
            (rows[0][0], rows[-1][0]) for name, rows in files.items() if name.startswith(f"{city}/")
        )
        assert len(runs) > 1, "the options should make several files per partition"
        assert all(prev[1] < nxt[0] for prev, nxt in itertools.pairwise(runs))


@pytest.mark.parametrize("mode", [None, "PARTITION_SORT", "GLOBAL_SORT"])
def test_local_and_coordinator_split_write_the_same_rows_per_file(tmp_path: Path, mode: str | None) -> None:
    local = _bulk(tmp_path / "local", None, mode)
    serial = _bulk(tmp_path / "serial", _SerialEngine(), mode)
    assert sorted(local.values()) == sorted(serial.values())


@pytest.mark.parametrize("mode", [None, "PARTITION_SORT"])
def test_an_input_in_many_chunks_writes_the_rows_of_one_chunk(tmp_path: Path, mode: str | None) -> None:
    """Local tasks gather their rows chunk by chunk (uneven chunks, one empty): the same files."""
    data = _data()
    sizes = [37, 0, 101, 1, 200, data.num_rows - 339]
    chunked = pa.concat_tables([data.slice(sum(sizes[:i]), n) for i, n in enumerate(sizes)])
    assert chunked.column("id").num_chunks == len(sizes)
    chunked_files = _bulk(tmp_path / "chunked", None, mode, chunked)
    whole_files = _bulk(tmp_path / "whole", None, mode)
    assert len(chunked_files) == len(whole_files) == 3  # a file group per partition
    assert {k.split("/")[0]: rows for k, rows in chunked_files.items()} == {
        k.split("/")[0]: rows for k, rows in whole_files.items()
    }
