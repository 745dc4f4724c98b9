"""LogWriter: one new log version per append on local storage, with its own write token."""

from __future__ import annotations

from pathlib import Path

import pytest
from hudi_core.log import BlockType, HeaderKey, LogWriter, encode_block, encode_command_block, read_log_file
from hudi_core.storage import LocalStorage
from hudi_core.table.file_names import LogFileName

#: every test twice: the compiled Avro codec (hudi_core.avro._codec) and the numpy one
pytestmark = pytest.mark.usefixtures("avro_codec")

FILE_ID = "0712b9f9-d2a9-4bfd-8b58-1e5b8e3d6a8e-0"
BASE = "20250126040823628"


def command(instant: str) -> bytes:
    header = {
        HeaderKey.INSTANT_TIME: instant,
        HeaderKey.COMMAND_BLOCK_TYPE: "0",
        HeaderKey.TARGET_INSTANT_TIME: "1",
    }
    return encode_block(BlockType.COMMAND, header, encode_command_block())


def test_first_append_creates_version_1(tmp_path: Path) -> None:
    writer = LogWriter(LocalStorage(), str(tmp_path), FILE_ID, BASE, "0-33-43")
    blocks_bytes = [command("2"), command("3")]
    result = writer.append(blocks_bytes)
    size = sum(map(len, blocks_bytes))
    assert result.file_name == f".{FILE_ID}_{BASE}.log.1_0-33-43"
    assert (result.version, result.offset, result.size_written, result.file_size) == (1, 0, size, size)
    assert Path(result.path).read_bytes() == b"".join(blocks_bytes)
    blocks = read_log_file(LocalStorage(), result.path)
    assert [b.instant_time for b in blocks] == ["2", "3"]


def test_new_version_after_existing_ones(tmp_path: Path) -> None:
    (tmp_path / LogFileName(FILE_ID, BASE, 1, "0-33-43").name).write_bytes(command("2"))
    (tmp_path / LogFileName(FILE_ID, BASE, 2, "1-0-1").name).write_bytes(command("3"))
    # other slices and file groups do not count
    (tmp_path / LogFileName(FILE_ID, "20990101000000000", 7, "0-1-1").name).write_bytes(b"")
    (tmp_path / LogFileName("other-0", BASE, 9, "0-1-1").name).write_bytes(b"")
    writer = LogWriter(LocalStorage(), str(tmp_path), FILE_ID, BASE, "0-13-9")
    first = writer.append([command("4")])
    second = writer.append([command("5")])
    assert first.file_name == f".{FILE_ID}_{BASE}.log.3_0-13-9"
    assert second.file_name == f".{FILE_ID}_{BASE}.log.4_0-13-9"
    # earlier files are never touched
    assert (
        read_log_file(LocalStorage(), str(tmp_path / LogFileName(FILE_ID, BASE, 1, "0-33-43").name))[
            0
        ].instant_time
        == "2"
    )


def test_same_token_collision_steps_past(tmp_path: Path) -> None:
    storage = LocalStorage()
    a = LogWriter(storage, str(tmp_path), FILE_ID, BASE, "0-1-1")
    b = LogWriter(storage, str(tmp_path), FILE_ID, BASE, "0-1-1")
    ra = a.append([command("1")])
    rb = b.append([command("2")])
    assert (ra.version, rb.version) == (1, 2)
