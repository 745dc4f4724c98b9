"""Byte-exact re-encoding of the blocks Apache Hudi wrote in the compat corpus."""

from __future__ import annotations

from pathlib import Path

import pytest
from hudi_core.log import BlockType, encode_block, read_log_bytes
from hudi_core.log.blocks import encode_avro_data_block, encode_command_block, encode_delete_block
from hudi_core.testing.corpus import corpus_root

#: every test twice: the compiled Avro codec (hudi_core.avro._codec) and the numpy one
pytestmark = pytest.mark.usefixtures("avro_codec")

_ROOT = corpus_root()
CORPUS_LOGS = sorted((_ROOT / "tables").rglob(".*.log.*")) if _ROOT is not None else []

pytestmark = pytest.mark.skipif(not CORPUS_LOGS, reason="the compat corpus is not available")


@pytest.mark.parametrize("path", CORPUS_LOGS, ids=lambda p: p.name)
def test_blocks_reencode_to_the_same_bytes(path: Path) -> None:
    data = path.read_bytes()
    blocks = read_log_bytes(data, str(path))
    assert blocks and all(b.block_type is not BlockType.CORRUPT for b in blocks)
    assert sum(b.size for b in blocks) == len(data)
    for block in blocks:
        original = data[block.offset : block.offset + block.size]
        if block.block_type is BlockType.AVRO_DATA:
            content = encode_avro_data_block(block.records(), block.schema)
        elif block.block_type is BlockType.DELETE:
            d = block.deletes()
            content = encode_delete_block(d.column(0), d.column(1), d.column(2))
        elif block.block_type is BlockType.COMMAND:
            content = encode_command_block()
        else:
            # parquet blocks: Java's parquet writer bytes are not ours to reproduce; the framing is.
            assert block.records().num_rows > 0
            content = block.content
        assert content == block.content
        assert encode_block(block.block_type, block.header, content) == original


def test_trips_avro_block_values(trips_log: Path) -> None:
    (block,) = read_log_bytes(trips_log.read_bytes())
    assert block.block_type is BlockType.AVRO_DATA
    assert block.instant_time == "20250331030645735"
    rows = block.records().to_pylist()
    assert rows == [
        {
            "_hoodie_commit_time": "20250331030645735",
            "_hoodie_commit_seqno": "20250331030645735_0_1",
            "_hoodie_record_key": "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
            "_hoodie_partition_path": "city=san_francisco",
            "_hoodie_file_name": "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0",
            "ts": 1695046462179,
            "uuid": "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
            "rider": "rider-D",
            "driver": "driver-L",
            "fare": 25.0,
            "city": "san_francisco",
        }
    ]
