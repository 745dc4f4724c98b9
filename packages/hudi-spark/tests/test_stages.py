"""The task functions outside Spark: what they do to Arrow batches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi_core.config.property import HoodieConfig
from hudi_core.keygen import key_generator_for
from hudi_core.write.dedupe import deduplicate
from hudi_core.write.records import prepare
from hudi_spark import stages

CONF = {
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _input() -> pa.Table:
    # ids 1 and 2 appear three times each with the same ordering value: the last of them must win
    return pa.table({
        "id": [1, 2, 1, 3, 2, 1, 2],
        "p": ["a"] * 7,
        "ts": [5, 7, 5, 1, 7, 5, 7],
        "v": ["first", "first", "second", "only", "second", "third", "third"],
    })  # fmt: skip


def test_prepare_numbers_rows_and_dedupe_restores_input_order_before_precombine() -> None:
    data = _input()
    conf = HoodieConfig(CONF)
    keyed = prepare(data, key_generator_for(conf), conf)
    keyed_schema = keyed.schema
    with_seq = pa.schema([*keyed_schema, pa.field(stages.INPUT_SEQ, pa.int64())])
    batches = [b for i in range(0, 7, 2) for b in data.slice(i, 2).to_batches()]
    prepared = list(
        stages.prepare_task(
            iter(batches),
            config=CONF,
            out_schema=with_seq,
            all_deletes=False,
            schema=None,
            operation="upsert",
        )
    )
    assert pa.Table.from_batches(prepared).column(stages.INPUT_SEQ).to_pylist() == list(range(7))
    # a shuffle delivers the rows in another order: the result is still core's on the input order
    shuffled = list(reversed(prepared))
    out = pa.Table.from_batches(
        list(stages.dedupe_task(iter(shuffled), config=CONF, out_schema=keyed_schema))
    )
    expected = deduplicate(keyed, conf)
    assert sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist(), strict=True)) == sorted(
        zip(expected.column("id").to_pylist(), expected.column("v").to_pylist(), strict=True)
    )
    assert dict(zip(out.column("id").to_pylist(), out.column("v").to_pylist(), strict=True)) == {
        1: "third",
        2: "third",
        3: "only",
    }


def _groups_seen(
    batches: list[pa.RecordBatch], max_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[pa.Table]:
    """Run stages.by_group with a step that records the rows of every call."""
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    calls: list[pa.Table] = []

    def step(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        calls.append(pa.Table.from_batches(list(it)))
        yield pa.RecordBatch.from_pydict({"n": [calls[-1].num_rows]})

    out = list(stages.by_group(iter(batches), column="g", steps=[step], max_bytes=max_bytes))
    assert [b.column("n")[0].as_py() for b in out] == [c.num_rows for c in calls]
    return calls


def _interleaved() -> list[pa.RecordBatch]:
    # three groups, their rows spread over three batches in arrival order v0, v1, ...
    g = [7, 3, 7, 9, 3, 7, 9, 9, 3, 7, 3, 7]
    t = pa.table({"g": pa.array(g, pa.int32()), "v": [f"v{i}" for i in range(len(g))]})
    return t.to_batches(max_chunksize=4)


def test_by_group_runs_all_rows_at_once_while_they_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _groups_seen(_interleaved(), 1 << 20, tmp_path, monkeypatch)
    assert len(calls) == 1 and calls[0].column("v").to_pylist() == [f"v{i}" for i in range(12)]


def test_by_group_spills_and_runs_one_group_at_a_time_past_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past max_bytes every row goes to one spill file; each call then gets exactly one group's
    rows, all of them, in arrival order; the spill directory is gone afterwards."""
    calls = _groups_seen(_interleaved(), 1, tmp_path, monkeypatch)
    got = {c.column("g")[0].as_py(): c.column("v").to_pylist() for c in calls}
    assert all(len(set(c.column("g").to_pylist())) == 1 for c in calls)
    assert got == {3: ["v1", "v4", "v8", "v10"], 7: ["v0", "v2", "v5", "v9", "v11"], 9: ["v3", "v6", "v7"]}
    assert list(tmp_path.iterdir()) == []


def test_by_group_removes_its_spill_when_a_step_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))

    def boom(it: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        list(it)
        raise RuntimeError("write failed")
        yield  # pragma: no cover

    with pytest.raises(RuntimeError, match="write failed"):
        list(stages.by_group(iter(_interleaved()), column="g", steps=[boom], max_bytes=1))
    assert list(tmp_path.iterdir()) == []


def test_chunks_cut_rows_at_the_byte_limit_and_keep_their_order() -> None:
    t = pa.table({"v": pa.array(range(100), pa.int64())})  # 800 bytes
    batches = t.to_batches(max_chunksize=10)  # 80 bytes each
    got = list(stages.chunks(iter(batches), 200))
    assert [c.num_rows for c in got] == [20] * 5
    assert pa.concat_tables(got).column("v").to_pylist() == list(range(100))
    assert [c.num_rows for c in stages.chunks(iter(batches), 1)] == [10] * 10  # one batch at least
    assert [c.num_rows for c in stages.chunks(iter(batches), 1 << 20)] == [100]


def test_assign_task_one_batch_at_a_time_labels_as_core_does_on_the_whole_task() -> None:
    """The insert ranges are positional: a task's later batches continue where its earlier ones
    (and the tasks before it, the driver's offset) stopped in each partition path."""
    from dataclasses import replace

    import numpy as np
    from hudi_core.write.bucket_assigner import WorkloadProfile, assign, assign_buckets
    from hudi_core.write.records import BUCKET, FILE_ID, PARTITION_PATH

    n = 57
    parts = np.array(["a", "b", "c"])[np.arange(n) % 3]
    tagged = pa.table({
        PARTITION_PATH: pa.array(parts), FILE_ID: pa.array([None] * n, pa.string()), "v": pa.array(range(n)),
    })  # fmt: skip
    earlier = {"a": 7, "b": 3}  # new records of the tasks before this one (task 0 outside Spark)
    prof = WorkloadProfile(inserts={p: earlier.get(p, 0) + int((parts == p).sum()) for p in "abc"})
    plan = assign(
        prof, [], HoodieConfig({"hoodie.parquet.max.file.size": "10"}), is_mor=False, avg_record_size=1
    )
    assert len(plan.buckets) > 6  # ten records per new file group: several groups per partition
    whole = {
        p: ([c - earlier.get(p, 0) for c in caps], nums) for p, (caps, nums) in plan.insert_ranges.items()
    }
    expected = assign_buckets(tagged, replace(plan, insert_ranges=whole))
    offsets = {(0, p): k for p, k in earlier.items()}
    out = pa.Table.from_batches(list(stages.assign_task(iter(tagged.to_batches(max_chunksize=5)), plan=plan, offsets=offsets,
                                                        out_schema=expected.schema)))  # fmt: skip
    assert out.column(BUCKET).to_pylist() == expected.column(BUCKET).to_pylist()
    assert out.column("v").to_pylist() == list(range(n))


def test_by_group_packs_whole_groups_up_to_the_limit_after_spilling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spilled groups (here 44, 54 and 32 bytes of Arrow) run as few calls as the limit
    allows, each call holding whole groups: 3 and 7 together (98 bytes <= 100), then 9."""
    calls = _groups_seen(_interleaved(), 100, tmp_path, monkeypatch)
    assert [c.column("v").to_pylist() for c in calls] == [
        ["v1", "v4", "v8", "v10", "v0", "v2", "v5", "v9", "v11"], ["v3", "v6", "v7"],
    ]  # fmt: skip


def test_precombine_spilled_by_key_group_keeps_the_later_of_equal_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key task over the limit precombines a few key groups at a time: a key's duplicates
    share its group, so the result is core's precombine of the whole input (ties: later row)."""
    import functools

    import pyarrow.compute as pc
    from hudi_spark import writer

    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    data = _input()
    conf = HoodieConfig(CONF)
    keyed_schema = prepare(data, key_generator_for(conf), conf).schema
    with_seq = pa.schema([*keyed_schema, pa.field(stages.INPUT_SEQ, pa.int64())])
    batches = [b for i in range(0, 7, 2) for b in data.slice(i, 2).to_batches()]
    prepared = pa.Table.from_batches(list(stages.prepare_task(iter(batches), config=CONF, out_schema=with_seq, all_deletes=False,
                                                              schema=None, operation="upsert")))  # fmt: skip
    # the key group as Spark computes it is a hash of the key; here the key's value mod 2
    group = pc.cast(pc.bit_wise_and(prepared.column("id"), 1), pa.int32())
    grouped = prepared.append_column(writer.KEY_GROUP, group)
    steps = writer._dedupe_by_key(
        functools.partial(stages.dedupe_task, config=CONF), keyed_schema, task_max=1
    )
    out = pa.Table.from_batches(
        list(stages.chain(iter(reversed(grouped.to_batches(max_chunksize=2))), steps=steps))
    )
    assert dict(zip(out.column("id").to_pylist(), out.column("v").to_pylist(), strict=True)) == {
        1: "third",
        2: "third",
        3: "only",
    }
    assert out.num_rows == 3 and writer.KEY_GROUP not in out.column_names


def test_file_group_ids_name_each_partition_and_hash_bucket_the_same_in_every_batch() -> None:
    """A spilling BUCKET write task groups raw input rows by file group: rows share an id
    exactly when core puts them in the same (partition path, hash bucket)."""
    from hudi_core.write.index import BUCKET_NUM, index_for, tag_locations
    from hudi_core.write.records import PARTITION_PATH

    conf = {**CONF, "hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4"}
    data = pa.table(
        {"id": list(range(60)), "p": [["a", "b", "a/b"][i // 20] for i in range(60)], "ts": [0] * 60}
    )
    ids = [
        i
        for b in data.to_batches(max_chunksize=7)
        for i in stages.file_group_ids(b, config=conf, record_key_fields=["id"]).tolist()
    ]
    hc = HoodieConfig(conf)
    tagged = tag_locations(prepare(data, key_generator_for(hc), hc), index_for(hc, ["id"]), None)
    groups = list(
        zip(tagged.column(PARTITION_PATH).to_pylist(), tagged.column(BUCKET_NUM).to_pylist(), strict=True)
    )
    assert len(set(groups)) == 12
    assert {g: {i for i, h in zip(ids, groups, strict=True) if h == g} for g in set(groups)} == {
        g: {ids[groups.index(g)]} for g in set(groups)
    }
    assert len(set(ids)) == 12


def test_by_group_refuses_a_grouping_that_does_not_name_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))

    def short(batch: pa.RecordBatch) -> Any:
        return np.zeros(batch.num_rows - 1, dtype=np.int64)

    with pytest.raises(ValueError, match="groups for 4 rows"):
        list(stages.by_group(iter(_interleaved()), column=short, steps=[iter], max_bytes=1))
    assert list(tmp_path.iterdir()) == []
