"""A Spark read task (``read_slices``, behind both ``hudi_spark.read``'s Python merges and
``format("hudi")``) allocates from core's ``arrow_pool`` while it reads, and leaves pyarrow's
default pool as it found it once its batches are consumed. No Spark needed: the task's function
runs here as it runs in a Python worker."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core import HudiTable
from hudi_core.testing.fixtures import needs_jemalloc


@needs_jemalloc
def test_a_read_task_allocates_from_jemalloc(tmp_path: Path, mimalloc_default: None) -> None:
    from hudi_spark.reading import ReadSpec, plan_groups, read_schema, read_slices

    path = str(tmp_path / "t")
    table = HudiTable.create(path, name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="p", ordering_field="ts")  # fmt: skip
    table.bulk_insert(
        pa.table({"id": [f"k{i}" for i in range(100)], "ts": list(range(100)), "p": ["a"] * 100})
    )
    table.upsert(pa.table({"id": ["k7"], "ts": [1000], "p": ["a"]}))  # a log file: the slice is merged
    spec = ReadSpec.from_options({"path": path})
    schema = read_schema(spec)
    (group,) = plan_groups(spec, schema.names)
    task = read_slices(spec, group, schema)
    first = next(task)
    assert pa.default_memory_pool().backend_name == "jemalloc"  # while the task reads
    rows = pa.Table.from_batches([first, *task])
    assert pa.default_memory_pool().backend_name == "mimalloc"  # and back once it is done
    assert rows.num_rows == 100
    assert rows.filter(pc.equal(rows["id"], "k7"))["ts"].to_pylist() == [1000]
