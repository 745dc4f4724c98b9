"""The log file format (spec 5): block framing, block contents, reader and writer."""

from __future__ import annotations

from hudi_core.log.blocks import (
    ROLLBACK_COMMAND,
    encode_avro_data_block,
    encode_command_block,
    encode_delete_block,
    encode_parquet_data_block,
)
from hudi_core.log.format import BlockType, HeaderKey, encode_block
from hudi_core.log.reader import LogBlock, read_log_bytes, read_log_file
from hudi_core.log.writer import LogAppendResult, LogWriter, latest_log_version

__all__ = [
    "ROLLBACK_COMMAND",
    "BlockType",
    "HeaderKey",
    "LogAppendResult",
    "LogBlock",
    "LogWriter",
    "encode_avro_data_block",
    "encode_block",
    "encode_command_block",
    "encode_delete_block",
    "encode_parquet_data_block",
    "latest_log_version",
    "read_log_bytes",
    "read_log_file",
]
