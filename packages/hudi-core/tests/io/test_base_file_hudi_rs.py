"""hudi-rs (the independent Rust reader) reads a table whose base file we wrote (spec 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.io import add_meta_columns, write_base_file
from hudi_core.keygen import key_generator_for
from hudi_core.schema.avro_schema import add_meta_fields, arrow_to_avro
from hudi_core.table.file_names import BaseFileName, new_file_id
from hudi_core.timeline.commit_metadata import CommitMetadata, WriteStat

hudi = pytest.importorskip("hudi")


def test_hudi_rs_reads_our_base_file(tmp_path: Path) -> None:
    data = pa.table(
        {
            "uuid": ["u1", "u2", "u3"],
            "city": ["sf", "sf", "sf"],
            "fare": [1.5, 2.5, 3.5],
            "amount": pa.array([1, 2, 3], pa.decimal128(10, 2)),
            "ts": pa.array([1, 2, 3], pa.int64()),
        }
    )
    base = tmp_path / "trips"
    table = HudiTable.create(
        str(base),
        name="trips",
        record_key_fields="uuid",
        partition_fields="city",
        ordering_field="ts",
        schema=data.schema,
        options={"hoodie.datasource.write.hive_style_partitioning": "true"},
    )
    kg = key_generator_for(table.config)
    partitions = kg.partition_paths(data)
    assert partitions.to_pylist() == ["city=sf"] * 3
    instant = "20240101000000000"
    timeline = table.timeline
    requested = timeline.create_requested(instant, "commit")
    inflight = timeline.transition_to_inflight(requested)
    name = BaseFileName(new_file_id(), "0-1-0", instant)
    rel = f"city=sf/{name.name}"
    (base / "city=sf").mkdir()
    (base / "city=sf" / ".hoodie_partition_metadata").write_text(
        f"#partition metadata\ncommitTime={instant}\npartitionDepth=1\n"
    )
    with_meta = add_meta_columns(
        data,
        commit_time=instant,
        seqno_prefix=f"{instant}_0",
        record_keys=kg.record_keys(data),
        partition_paths=partitions,
        file_name=name.name,
    )
    avro = arrow_to_avro(data.schema, "trips")
    result = write_base_file(table.storage, f"{table.base_uri}/{rel}", with_meta, avro_schema=avro)
    meta = CommitMetadata(
        operation_type="INSERT", extra_metadata={"schema": json.dumps(add_meta_fields(avro))}
    )
    meta.add_write_stat(
        WriteStat(
            file_id=name.file_id,
            path=rel,
            partition_path="city=sf",
            num_writes=3,
            num_inserts=3,
            total_write_bytes=result.size,
            file_size_in_bytes=result.size,
        )
    )
    timeline.complete(inflight, meta.to_bytes())

    rs = hudi.HudiTableBuilder.from_base_uri(str(base)).build()
    batches = rs.read()
    got = pa.Table.from_batches(batches).sort_by("uuid")
    assert got.column("_hoodie_record_key").to_pylist() == ["u1", "u2", "u3"]
    assert got.column("_hoodie_partition_path").to_pylist() == ["city=sf"] * 3
    assert got.column("_hoodie_commit_seqno").to_pylist() == [f"{instant}_0_{i}" for i in range(3)]
    assert got.column("fare").to_pylist() == [1.5, 2.5, 3.5]
    assert [str(v) for v in got.column("amount").to_pylist()] == ["1.00", "2.00", "3.00"]
