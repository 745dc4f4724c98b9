"""Read splits (plan_splits / read_split) and parallel slice reads."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.compaction import schedule_compaction
from hudi_core.errors import ConfigError
from hudi_core.fs_view import FileSystemView
from hudi_core.read import plan_splits, read_split, read_table

from .conftest import FILE_ID, RIDER_D, Trips


def _by_key(t: pa.Table) -> pa.Table:
    return t.sort_by([("_hoodie_record_key", "ascending"), ("_hoodie_partition_path", "ascending")])


def test_splits_pickle_and_read_to_the_same_rows_as_read_table(trips: Trips) -> None:
    table = trips.table()
    splits = plan_splits(table, "snapshot", columns=["_hoodie_record_key", "_hoodie_partition_path", "fare"])
    assert len(splits) == len(FileSystemView(table).latest_merged_file_slices())
    shipped = pickle.loads(pickle.dumps(splits))
    parts = [read_split(str(trips.root), s) for s in shipped]  # opened by URI, as a Spark task does
    got = _by_key(pa.concat_tables(parts))
    want = _by_key(table.read(columns=["_hoodie_record_key", "_hoodie_partition_path", "fare"]))
    assert got.equals(want)
    fares = dict(
        zip(got.column("_hoodie_record_key").to_pylist(), got.column("fare").to_pylist(), strict=True)
    )
    assert fares[RIDER_D] == 25.0  # the logged update, merged


def test_read_optimized_splits_carry_no_log_files(trips: Trips) -> None:
    splits = plan_splits(trips.table(), "read_optimized")
    assert all(s.base_file is not None and s.log_files == () for s in splits)
    ro = pa.concat_tables([read_split(trips.table(), s) for s in splits])
    fares = dict(zip(ro.column("_hoodie_record_key").to_pylist(), ro.column("fare").to_pylist(), strict=True))
    assert fares[RIDER_D] == 33.9  # the base file's value
    assert all(s.size == s.base_file.size > 0 for s in splits if s.base_file is not None)


def test_under_a_pending_compaction_splits_merge_the_previous_slice(trips: Trips) -> None:
    table = trips.table()
    before = _by_key(table.read())
    instant = schedule_compaction(table, force=True)
    assert instant is not None
    table = trips.table()
    # The raw latest slice is the compaction's (no base file, no logs yet) ...
    raw = next(s for s in FileSystemView(table).latest_file_slices() if s.file_id == FILE_ID)
    assert raw.base_instant == instant and raw.base_file is None
    # ... while the split keeps the base file and the logs that the compaction will fold in.
    split = next(s for s in plan_splits(table, "snapshot") if s.file_id == FILE_ID)
    assert split.base_file is not None and split.log_files
    got = _by_key(pa.concat_tables([read_split(str(trips.root), s) for s in plan_splits(table, "snapshot")]))
    assert got.equals(before)


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_parallel_reads_keep_plan_order_and_rows(trips: Trips, parallelism: int) -> None:
    table = trips.table()
    serial = read_table(table, parallelism=1)
    assert read_table(table, parallelism=parallelism).equals(serial)
    batches = list(
        HudiTable.open(str(trips.root), options={"hoodie.read.parallelism": parallelism}).read_batches()
    )
    assert pa.Table.from_batches(batches, schema=serial.schema).equals(serial)


def test_negative_parallelism_is_refused(trips: Trips) -> None:
    table = HudiTable.open(str(trips.root), options={"hoodie.read.parallelism": "-1"})
    with pytest.raises(ConfigError, match=r"hoodie.read.parallelism=-1"):
        table.read()
