"""The task functions outside Spark: what they do to Arrow batches."""

from __future__ import annotations

import pyarrow as pa
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
    prepared = list(stages.prepare_task(iter(batches), config=CONF, out_schema=with_seq, all_deletes=False, schema=None))
    assert pa.Table.from_batches(prepared).column(stages.INPUT_SEQ).to_pylist() == list(range(7))
    # a shuffle delivers the rows in another order: the result is still core's on the input order
    shuffled = list(reversed(prepared))
    out = pa.Table.from_batches(list(stages.dedupe_task(iter(shuffled), config=CONF, out_schema=keyed_schema)))
    expected = deduplicate(keyed, conf)
    assert sorted(zip(out.column("id").to_pylist(), out.column("v").to_pylist())) == sorted(
        zip(expected.column("id").to_pylist(), expected.column("v").to_pylist())
    )
    assert dict(zip(out.column("id").to_pylist(), out.column("v").to_pylist())) == {1: "third", 2: "third", 3: "only"}
