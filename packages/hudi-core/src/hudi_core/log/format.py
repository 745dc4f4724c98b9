"""Log file block framing (spec 5, 5.2): magic, sizes, header/footer maps, trailer. Big-endian."""

from __future__ import annotations

import enum
import mmap
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from hudi_core.errors import CorruptedLogBlockError

#: a log file's bytes: read, or mapped (``Storage.read_mapped``)
LogBytes = bytes | mmap.mmap

__all__ = [
    "DATA_BLOCK_TYPES",
    "LOG_FORMAT_VERSION",
    "MAGIC",
    "BlockType",
    "FramedBlock",
    "HeaderKey",
    "decode_header",
    "encode_block",
    "encode_header",
    "scan_blocks",
]

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class BlockType(enum.IntEnum):
    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


#: the blocks whose records a reader merges (a CDC block's are the change log's, not the table's)
DATA_BLOCK_TYPES = frozenset({BlockType.AVRO_DATA, BlockType.PARQUET_DATA, BlockType.HFILE_DATA})


class HeaderKey(enum.IntEnum):
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6


def encode_header(header: Mapping[HeaderKey, str]) -> bytes:
    """int32 count, then per entry int32 key, int32 length, UTF-8 value; in ``header``'s order."""
    parts = [_I32.pack(len(header))]
    for key, value in header.items():
        raw = value.encode("utf-8")
        parts.append(_I32.pack(int(key)) + _I32.pack(len(raw)) + raw)
    return b"".join(parts)


def decode_header(data: bytes | memoryview, pos: int) -> tuple[dict[HeaderKey, str], int]:
    """The map at ``pos`` and the position after it; raises ``CorruptedLogBlockError``."""
    try:
        (count,) = _I32.unpack_from(data, pos)
        pos += 4
        if count < 0:
            raise CorruptedLogBlockError(f"negative header entry count {count}")
        out: dict[HeaderKey, str] = {}
        for _ in range(count):
            code, length = struct.unpack_from(">ii", data, pos)
            pos += 8
            if length < 0 or pos + length > len(data):
                raise CorruptedLogBlockError(f"header value length {length} runs past the block")
            value = bytes(data[pos : pos + length]).decode("utf-8")
            pos += length
            try:
                out[HeaderKey(code)] = value
            except ValueError as e:
                # Java 0.14 fails on codes it does not know (spec 5.2); so do we, as corruption.
                raise CorruptedLogBlockError(f"unknown log block header key code {code}") from e
        return out, pos
    except struct.error as e:
        raise CorruptedLogBlockError(f"header map truncated at byte {pos}") from e


def encode_block(
    block_type: BlockType,
    header: Mapping[HeaderKey, str],
    content: bytes,
    footer: Mapping[HeaderKey, str] | None = None,
) -> bytes:
    """A whole block, magic through trailer (spec 5)."""
    head = encode_header(header)
    foot = encode_header(footer or {})
    block_size = 4 + 4 + len(head) + 8 + len(content) + len(foot) + 8
    return b"".join(
        (
            MAGIC,
            _I64.pack(block_size),
            _I32.pack(LOG_FORMAT_VERSION),
            _I32.pack(int(block_type)),
            head,
            _I64.pack(len(content)),
            content,
            foot,
            _I64.pack(block_size + len(MAGIC)),
        )
    )


@dataclass(frozen=True)
class FramedBlock:
    """Where one block sits in a file. ``corrupt_reason`` is set for CORRUPT spans, whose
    header is empty and whose content covers the whole unreadable span."""

    block_type: BlockType
    header: dict[HeaderKey, str]
    footer: dict[HeaderKey, str]
    offset: int
    size: int
    content_offset: int
    content_length: int
    format_version: int
    corrupt_reason: str | None = None


def _next_magic(data: LogBytes, start: int) -> int:
    found = data.find(MAGIC, start)
    return len(data) if found < 0 else found


def _frame_one(data: LogBytes, pos: int) -> FramedBlock:
    """The well-formed block at ``pos``; raises ``CorruptedLogBlockError`` otherwise."""
    end = len(data)
    if data[pos : pos + len(MAGIC)] != MAGIC:
        raise CorruptedLogBlockError(f"no {MAGIC!r} magic at byte {pos}")
    size_pos = pos + len(MAGIC)
    if size_pos + 8 > end:
        raise CorruptedLogBlockError(f"block size field at byte {size_pos} runs past end of file")
    (block_size,) = _I64.unpack_from(data, size_pos)
    body = size_pos + 8
    if block_size < 4 + 4 + 4 + 8 + 4 + 8 or body + block_size > end:
        raise CorruptedLogBlockError(f"block size {block_size} at byte {pos} runs past end of file")
    (trailer,) = _I64.unpack_from(data, body + block_size - 8)
    if trailer - len(MAGIC) != block_size:
        raise CorruptedLogBlockError(f"trailer {trailer} does not match block size {block_size}")
    version, type_code = struct.unpack_from(">ii", data, body)
    try:
        block_type = BlockType(type_code)
    except ValueError as e:
        raise CorruptedLogBlockError(f"unknown block type {type_code} at byte {pos}") from e
    stop = body + block_size - 8
    if version == 0:
        # Legacy layout: no type/header/footer, the content follows the version directly.
        return FramedBlock(block_type, {}, {}, pos, stop + 8 - pos, body + 4, stop - body - 4, 0)
    # the header and footer may not run past the trailer: read them through a view that ends
    # there (a ``bytes`` slice copied the file up to the block's end, twice per block)
    bounded = memoryview(data)[:stop]
    header, p = decode_header(bounded, body + 8)
    if p + 8 > stop:
        raise CorruptedLogBlockError(f"content length field of block at byte {pos} is missing")
    (content_length,) = _I64.unpack_from(data, p)
    content_offset = p + 8
    if content_length < 0 or content_offset + content_length > stop:
        raise CorruptedLogBlockError(f"content length {content_length} runs past block at byte {pos}")
    footer, p = decode_header(bounded, content_offset + content_length)
    if p != stop:
        raise CorruptedLogBlockError(f"block at byte {pos} has {stop - p} stray bytes before its trailer")
    return FramedBlock(
        block_type, header, footer, pos, stop + 8 - pos, content_offset, content_length, version
    )


def scan_blocks(data: LogBytes) -> list[FramedBlock]:
    """Every block of a log file's bytes; unreadable spans become CORRUPT blocks that run to the
    next magic (or EOF), per spec 5.8. Never raises."""
    out: list[FramedBlock] = []
    pos = 0
    end = len(data)
    while pos < end:
        try:
            block = _frame_one(data, pos)
        except CorruptedLogBlockError as e:
            stop = _next_magic(data, pos + 1)
            out.append(FramedBlock(BlockType.CORRUPT, {}, {}, pos, stop - pos, pos, stop - pos, -1, str(e)))
            pos = stop
            continue
        out.append(block)
        pos += block.size
    return out
