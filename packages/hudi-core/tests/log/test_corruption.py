"""Corrupt and truncated log files: good blocks + CORRUPT spans, a warning, never an exception."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hudi_core.log import BlockType, HeaderKey, encode_block, encode_command_block, read_log_file
from hudi_core.storage import LocalStorage

#: every test twice: the compiled Avro codec (hudi_core.avro._codec) and the numpy one
pytestmark = pytest.mark.usefixtures("avro_codec")


def command(instant: str) -> bytes:
    header = {
        HeaderKey.INSTANT_TIME: instant,
        HeaderKey.COMMAND_BLOCK_TYPE: "0",
        HeaderKey.TARGET_INSTANT_TIME: "1",
    }
    return encode_block(BlockType.COMMAND, header, encode_command_block())


def read(tmp_path: Path, data: bytes) -> list:
    path = tmp_path / ".f-0_001.log.1_0-0-0"
    path.write_bytes(data)
    return read_log_file(LocalStorage(), str(path))


def kinds(blocks: list) -> list[BlockType]:
    return [b.block_type for b in blocks]


def test_truncated_corpus_file_mid_block(
    tmp_path: Path, trips_log: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = trips_log.read_bytes()
    data = good + command("3") + good[: len(good) // 2]
    with caplog.at_level(logging.WARNING, logger="hudi_core.log.reader"):
        blocks = read(tmp_path, data)
    assert kinds(blocks) == [BlockType.AVRO_DATA, BlockType.COMMAND, BlockType.CORRUPT]
    assert blocks[0].records().num_rows == 1
    corrupt = blocks[2]
    assert (corrupt.offset, corrupt.size) == (len(good) + len(command("3")), len(good) // 2)
    assert "corrupt log block" in caplog.text and str(corrupt.offset) in caplog.text


def test_flipped_trailer_makes_block_corrupt_and_reading_continues(tmp_path: Path, trips_log: Path) -> None:
    good = bytearray(trips_log.read_bytes())
    good[-1] ^= 0xFF
    data = bytes(good) + command("4")
    blocks = read(tmp_path, data)
    assert kinds(blocks) == [BlockType.CORRUPT, BlockType.COMMAND]
    assert blocks[0].size == len(good)
    assert blocks[1].instant_time == "4"


def test_garbage_between_blocks(tmp_path: Path, trips_log: Path) -> None:
    good = trips_log.read_bytes()
    garbage = b"\x00garbage\xff" * 3
    blocks = read(tmp_path, good + garbage + command("5") + good)
    assert kinds(blocks) == [BlockType.AVRO_DATA, BlockType.CORRUPT, BlockType.COMMAND, BlockType.AVRO_DATA]
    assert blocks[1].content == garbage
    assert blocks[3].records().column("fare").to_pylist() == [25.0]


def test_size_past_eof_and_partial_magic(tmp_path: Path) -> None:
    block = bytearray(command("6"))
    block[6:14] = (10**9).to_bytes(8, "big")
    blocks = read(tmp_path, command("1") + bytes(block) + b"#HU")
    assert kinds(blocks) == [BlockType.COMMAND, BlockType.CORRUPT]
    assert blocks[1].size == len(block) + 3


def test_bad_magic_at_start(tmp_path: Path) -> None:
    blocks = read(tmp_path, b"XXXXXX" + command("7"))
    assert kinds(blocks) == [BlockType.CORRUPT, BlockType.COMMAND]


def test_empty_file_has_no_blocks(tmp_path: Path) -> None:
    assert read(tmp_path, b"") == []
