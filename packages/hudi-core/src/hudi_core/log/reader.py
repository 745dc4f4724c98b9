"""Reading log files: blocks with lazily decoded content; corruption never raises (spec 5.8)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hudi_core.errors import CorruptedLogBlockError
from hudi_core.log.blocks import (
    decode_avro_data_block,
    decode_delete_block,
    decode_hfile_data_block,
    decode_parquet_data_block,
)
from hudi_core.log.format import (
    DATA_BLOCK_TYPES,
    MAGIC,
    BlockType,
    FramedBlock,
    HeaderKey,
    LogBytes,
    decode_header,
    scan_blocks,
)
from hudi_core.storage.base import Storage

__all__ = ["LogBlock", "first_block_instant", "read_log_bytes", "read_log_file"]

log = logging.getLogger(__name__)


@dataclass
class LogBlock:
    """One block of a log file. Content is decoded on demand by :meth:`records` / :meth:`deletes`."""

    block_type: BlockType
    header: dict[HeaderKey, str]
    offset: int
    size: int
    file_path: str
    footer: dict[HeaderKey, str] = field(default_factory=dict)
    format_version: int = 1
    corrupt_reason: str | None = None
    _content: memoryview | None = field(default=None, repr=False)

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema(self) -> str | None:
        """The writer Avro schema (JSON, with meta fields) of a data or delete block."""
        return self.header.get(HeaderKey.SCHEMA)

    @property
    def command_type(self) -> str | None:
        return self.header.get(HeaderKey.COMMAND_BLOCK_TYPE)

    @property
    def content(self) -> bytes:
        """The raw content bytes (for CORRUPT blocks: the whole unreadable span)."""
        return bytes(self._content) if self._content is not None else b""

    @property
    def is_data(self) -> bool:
        return self.block_type in DATA_BLOCK_TYPES or self.block_type is BlockType.CDC_DATA

    def records(self, reader_schema: str | dict[str, Any] | None = None) -> pa.Table:
        """The block's records as Arrow (meta columns first), resolved to ``reader_schema``."""
        content = self._content if self._content is not None else memoryview(b"")
        if self.block_type in (BlockType.AVRO_DATA, BlockType.CDC_DATA, BlockType.HFILE_DATA):
            if self.schema is None:
                raise CorruptedLogBlockError(
                    f"{self.block_type.name} block at byte {self.offset} of {self.file_path} has no SCHEMA header"
                )
            if self.block_type is BlockType.HFILE_DATA:
                return decode_hfile_data_block(content, self.schema, reader_schema)
            return decode_avro_data_block(content, self.schema, reader_schema)
        if self.block_type is BlockType.PARQUET_DATA:
            return decode_parquet_data_block(content, self.schema, reader_schema)
        raise CorruptedLogBlockError(
            f"block at byte {self.offset} of {self.file_path} is a {self.block_type.name} block, "
            "which holds no records"
        )

    def deletes(self) -> pa.Table:
        """Deleted keys: ``_hoodie_record_key``, ``_hoodie_partition_path``, ``_ordering_val``,
        ``_ordering_natural``."""
        if self.block_type is not BlockType.DELETE:
            raise CorruptedLogBlockError(
                f"block at byte {self.offset} of {self.file_path} is a {self.block_type.name} block, not a DELETE block"
            )
        return decode_delete_block(self._content if self._content is not None else memoryview(b""))


def _to_block(framed: FramedBlock, data: LogBytes, path: str) -> LogBlock:
    view = memoryview(data)[framed.content_offset : framed.content_offset + framed.content_length]
    return LogBlock(
        block_type=framed.block_type,
        header=framed.header,
        offset=framed.offset,
        size=framed.size,
        file_path=path,
        footer=framed.footer,
        format_version=framed.format_version,
        corrupt_reason=framed.corrupt_reason,
        _content=view,
    )


def read_log_bytes(data: LogBytes, path: str = "<memory>") -> list[LogBlock]:
    """The blocks of a log file's bytes (or of its memory map); see :func:`read_log_file`."""
    blocks = []
    for framed in scan_blocks(data):
        if framed.block_type is BlockType.CORRUPT:
            log.warning(
                "corrupt log block in %s at byte %d (%d bytes): %s; skipping to the next block",
                path,
                framed.offset,
                framed.size,
                framed.corrupt_reason,
            )
        blocks.append(_to_block(framed, data, path))
    return blocks


def read_log_file(storage: Storage, path: str) -> list[LogBlock]:
    """Every block of the log file at ``path``, in file order. Unreadable spans (bad magic,
    sizes past EOF, trailer mismatch, a truncated last block) come back as CORRUPT blocks with
    a logged warning; reading continues after them. The blocks' content is read in place where
    the storage maps files (``Storage.read_mapped``)."""
    return read_log_bytes(storage.read_mapped(path), path)


def first_block_instant(storage: Storage, path: str) -> str | None:
    """The INSTANT_TIME header of the file's first block, read from the file's head only (None:
    no readable header there)."""
    size = storage.size(path)
    length = 64 * 1024
    while True:
        head = storage.read_range(path, 0, min(length, size))
        if (
            head[: len(MAGIC)] != MAGIC
            or len(head) < len(MAGIC) + 16
            or head[len(MAGIC) + 8 : len(MAGIC) + 12] == bytes(4)
        ):
            return None  # not a log file, or format version 0 (no header)
        try:  # magic, int64 block size, int32 format version, int32 block type, then the header
            header, _ = decode_header(head, len(MAGIC) + 16)
            return header.get(HeaderKey.INSTANT_TIME)
        except CorruptedLogBlockError:
            if length >= size:
                return None
            length *= 8  # a header holding a large schema: read further
