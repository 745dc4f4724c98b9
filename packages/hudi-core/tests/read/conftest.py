"""A writable copy of the trips MOR table plus helpers that append real log blocks to one
of its file groups and put matching instants on the timeline."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.fs_view import FileSystemView
from hudi_core.log.blocks import encode_avro_data_block, encode_delete_block
from hudi_core.log.format import BlockType, HeaderKey, encode_block
from hudi_core.log.reader import read_log_file
from hudi_core.log.writer import LogWriter
from hudi_core.read.align import align_table
from hudi_core.read.merge import merge_delta, merge_file_slice, merge_file_slice_batches, slice_schema
from hudi_core.testing.corpus import copy_corpus_table

TRIPS = "tables/trips_mor_avro/v6_trips_8i1u"
PARTITION = "city=san_francisco"
FILE_ID = "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"
BASE_INSTANT = "20250331030642808"
RIDER_A = "334e26e9-8355-45cc-97c6-c31daf0df330"  # ts 1695159649087, fare 19.10, in the base file
RIDER_D = "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"  # updated by a log block to fare 25.0
RIDER_E = "1dced545-862b-4ceb-8b43-d2a568f6616b"  # ts 1695332066204, fare 93.50


@dataclass
class Trips:
    root: Path
    schema_json: str

    def table(self) -> HudiTable:
        return HudiTable.open(str(self.root))

    def set_payload(self, payload_class: str) -> None:
        props = self.root / ".hoodie" / "hoodie.properties"
        lines = [
            ln
            for ln in props.read_text().splitlines()
            if not ln.startswith("hoodie.compaction.payload.class=")
        ]
        props.write_text("\n".join([*lines, f"hoodie.compaction.payload.class={payload_class}"]) + "\n")

    def instant(self, ts: str, *, state: str = "COMPLETED") -> None:
        """A deltacommit on the timeline (requested, inflight, completed as asked)."""
        meta = self.root / ".hoodie"
        (meta / f"{ts}.deltacommit.requested").write_bytes(b"")
        if state in ("INFLIGHT", "COMPLETED"):
            (meta / f"{ts}.deltacommit.inflight").write_bytes(b"")
        if state == "COMPLETED":
            stat = {"fileId": FILE_ID, "path": f"{PARTITION}/.{FILE_ID}_{BASE_INSTANT}.log.2_0-0-0",
                    "partitionPath": PARTITION, "prevCommit": BASE_INSTANT}  # fmt: skip
            body = {"partitionToWriteStats": {PARTITION: [stat]}, "compacted": False,
                    "extraMetadata": {"schema": _data_schema(self.schema_json)}, "operationType": "UPSERT"}  # fmt: skip
            (meta / f"{ts}.deltacommit").write_text(json.dumps(body))

    def rows(self, keys: Sequence[str], instant: str, **changes: Any) -> pa.Table:
        """Snapshot rows of ``keys`` restamped as written by ``instant``, with ``changes``."""
        snap = self.table().read()
        rows = snap.filter(pc.is_in(snap.column("_hoodie_record_key"), pa.array(list(keys))))
        n = rows.num_rows
        rows = rows.set_column(0, "_hoodie_commit_time", pa.array([instant] * n))
        rows = rows.set_column(1, "_hoodie_commit_seqno", pa.array([f"{instant}_0_{i}" for i in range(n)]))
        rows = rows.set_column(4, "_hoodie_file_name", pa.array([FILE_ID] * n))
        for name, value in changes.items():
            idx = rows.schema.get_field_index(name)
            rows = rows.set_column(idx, name, pa.array([value] * n, rows.schema.field(name).type))
        return rows

    def data_block(self, ts: str, rows: pa.Table, schema_json: str | None = None) -> bytes:
        schema = schema_json or self.schema_json
        header = {HeaderKey.INSTANT_TIME: ts, HeaderKey.SCHEMA: schema}
        return encode_block(BlockType.AVRO_DATA, header, encode_avro_data_block(rows, schema))

    def delete_block(self, ts: str, keys: Sequence[str], ordering: pa.Array | None = None) -> bytes:
        content = encode_delete_block(list(keys), [PARTITION] * len(keys), ordering)
        header = {HeaderKey.INSTANT_TIME: ts, HeaderKey.SCHEMA: self.schema_json}
        return encode_block(BlockType.DELETE, header, content)

    def rollback_block(self, ts: str, target: str) -> bytes:
        header = {HeaderKey.INSTANT_TIME: ts, HeaderKey.TARGET_INSTANT_TIME: target,
                  HeaderKey.COMMAND_BLOCK_TYPE: "0"}  # fmt: skip
        return encode_block(BlockType.COMMAND, header, b"")

    def append(self, *blocks: bytes) -> None:
        table = self.table()
        writer = LogWriter(table.storage, table.partition_uri(PARTITION), FILE_ID, BASE_INSTANT, "0-0-0")
        writer.append(list(blocks))

    def snapshot(self, **kw: Any) -> dict[str, dict[str, Any]]:
        out = self.table().read(**kw)
        if set(kw) <= {"as_of"}:
            self.check_delta(kw.get("as_of"))
            self.check_streamed(kw.get("as_of"))
        return {r["_hoodie_record_key"]: r for r in out.to_pylist()}

    def check_delta(self, as_of: str | None = None) -> None:
        """``merge_delta`` (what the Spark reader merges in Python while the JVM reads the base
        file) tells every file slice's merge exactly: the base rows it keeps, in file order,
        then the rows it adds are ``merge_file_slice``'s rows, in order."""
        table = self.table()
        for fs in FileSystemView(table).latest_merged_file_slices():
            merged = merge_file_slice(table, fs, as_of=as_of, timeline=table.timeline)
            schema = slice_schema(table, as_of)
            delta = merge_delta(table, fs, as_of=as_of, timeline=table.timeline, schema=schema)
            if delta is None:  # a partial update payload: merged in Python whole
                continue
            dropped, added = delta
            base = (
                align_table(pq.read_table(fs.base_file.path), schema)
                if fs.base_file
                else schema.empty_table()
            )
            keep = np.ones(base.num_rows, dtype=bool)
            keep[dropped] = False
            told = pa.concat_tables([base.filter(pa.array(keep)), added.cast(base.schema)])
            assert told.to_pylist() == merged.to_pylist()

    def check_streamed(self, as_of: str | None = None) -> None:
        """``merge_file_slice_batches`` (the bounded-memory merge of ``read()`` and the Spark
        reader) gives every file slice's merged rows in order, whatever the batch size: with one
        or two base rows a batch, every key meets its log record in a batch of its own."""
        table = self.table()
        for fs in FileSystemView(table).latest_merged_file_slices():
            merged = merge_file_slice(table, fs, as_of=as_of, timeline=table.timeline)
            for rows in (1, 2):
                parts = list(merge_file_slice_batches(table, fs, batch_rows=rows, as_of=as_of,
                                                      timeline=table.timeline))  # fmt: skip
                assert all(p.num_rows for p in parts)
                streamed = pa.concat_tables(parts).to_pylist() if parts else []
                assert streamed == merged.to_pylist()


def _data_schema(schema_with_meta: str) -> str:
    s = json.loads(schema_with_meta)
    s["fields"] = [f for f in s["fields"] if not f["name"].startswith("_hoodie_")]
    return json.dumps(s)


@pytest.fixture
def trips(tmp_path: Path) -> Trips:
    root = copy_corpus_table(TRIPS, tmp_path)
    table = HudiTable.open(str(root))
    log_path = next((root / PARTITION).glob(f".{FILE_ID}_*.log.1_*"))
    block = read_log_file(table.storage, str(log_path))[0]
    assert block.schema
    return Trips(root, block.schema)
