"""Reading on a few threads: costliest_first starts the costliest items and keeps input order."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.read import plan_splits, read_table
from hudi_core.read.parallel import costliest_first


def test_the_costliest_items_start_first_and_results_keep_input_order() -> None:
    costs = [1, 5, 2, 9, 3, 7]
    started: list[int] = []
    release = threading.Event()
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            started.append(i)
        release.wait(10)  # both threads hold their first item until the test has seen them
        return i * 10

    result: list[list[int]] = []
    runner = threading.Thread(
        target=lambda: result.append(costliest_first(work, list(range(6)), 2, costs.__getitem__))
    )
    runner.start()
    deadline = time.monotonic() + 10
    while len(started) < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    with lock:
        first_two = set(started)
    release.set()
    runner.join(10)
    assert first_two == {3, 5}  # the items costing 9 and 7, not the first two of the input
    assert result == [[0, 10, 20, 30, 40, 50]]
    assert sorted(started) == list(range(6))


def test_a_failed_item_raises_to_the_caller() -> None:
    def work(i: int) -> int:
        if i == 2:
            raise ValueError("bad slice")
        return i

    with pytest.raises(ValueError, match="bad slice"):
        costliest_first(work, [0, 1, 2, 3], 2, lambda i: -i)


def test_one_thread_or_one_item_reads_in_input_order() -> None:
    seen: list[int] = []
    assert costliest_first(lambda i: seen.append(i) or i, [0, 1, 2], 1, lambda i: i) == [0, 1, 2]
    assert seen == [0, 1, 2]


def test_a_table_read_on_threads_keeps_plan_order_when_a_later_slice_costs_more(tmp_path: Path) -> None:
    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts")  # fmt: skip
    n = 2000
    rows = pa.table({
        "id": [f"k{i:05d}" for i in range(n)], "ts": [1] * n, "p": ["a" if i % 2 else "b" for i in range(n)],
        "v": [float(i) for i in range(n)],
    })  # fmt: skip
    table.bulk_insert(rows)
    updates = rows.filter(pa.compute.equal(rows["p"], "b")).slice(0, 300)
    HudiTable.open(str(tmp_path / "t")).upsert(updates.set_column(1, "ts", pa.array([2] * 300)))
    table = HudiTable.open(str(tmp_path / "t"))
    splits = plan_splits(table, "snapshot")
    costs = [s.read_cost for s in splits]
    assert [s.partition_path for s in splits] == ["a", "b"]  # plan order...
    assert splits[1].log_files  # ...then cost order
    assert costs[1] > costs[0]
    serial = read_table(table, parallelism=1)
    threaded = read_table(table, parallelism=2)
    assert threaded.equals(serial)
    assert threaded.column("_hoodie_partition_path").to_pylist() == ["a"] * 1000 + ["b"] * 1000
    assert (
        sorted(threaded.filter(pa.compute.equal(threaded["ts"], 2))["id"].to_pylist())
        == updates["id"].to_pylist()
    )
