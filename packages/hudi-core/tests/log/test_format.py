"""Block framing and header maps, against the exact bytes of spec 5.3."""

from __future__ import annotations

from hudi_core.log import BlockType, HeaderKey, encode_block, encode_command_block, read_log_bytes
from hudi_core.log.format import decode_header, encode_header

# Spec 5.3: the 105-byte rollback command block of the v6_nonpartitioned_rollback sample.
SPEC_COMMAND_BLOCK = bytes.fromhex(
    "234855444923"
    "000000000000005b"
    "00000001"
    "00000000"
    "00000003"
    "00000000"
    "00000011" + b"20250126040936578".hex() + "00000003"
    "00000001" + b"0".hex() + "00000001"
    "00000011" + b"20250126040826878".hex() + "0000000000000000"
    "00000000"
    "0000000000000061"
)


def test_command_block_bytes_equal_spec_example() -> None:
    header = {
        HeaderKey.INSTANT_TIME: "20250126040936578",
        HeaderKey.COMMAND_BLOCK_TYPE: "0",
        HeaderKey.TARGET_INSTANT_TIME: "20250126040826878",
    }
    block = encode_block(BlockType.COMMAND, header, encode_command_block())
    assert len(block) == 105
    assert block == SPEC_COMMAND_BLOCK


def test_reading_spec_command_block() -> None:
    (block,) = read_log_bytes(SPEC_COMMAND_BLOCK)
    assert block.block_type is BlockType.COMMAND
    assert block.instant_time == "20250126040936578"
    assert block.target_instant_time == "20250126040826878"
    assert block.command_type == "0"
    assert (block.offset, block.size) == (0, 105)
    # header order is kept as written, so re-encoding reproduces the bytes
    assert list(block.header) == [
        HeaderKey.INSTANT_TIME,
        HeaderKey.COMMAND_BLOCK_TYPE,
        HeaderKey.TARGET_INSTANT_TIME,
    ]
    assert encode_block(block.block_type, block.header, block.content) == SPEC_COMMAND_BLOCK


def test_header_map_round_trip_with_utf8() -> None:
    header = {HeaderKey.SCHEMA: '{"doc":"é"}', HeaderKey.INSTANT_TIME: "1"}
    raw = encode_header(header)
    assert raw[:4] == b"\x00\x00\x00\x02"
    decoded, end = decode_header(raw, 0)
    assert decoded == header and end == len(raw)
