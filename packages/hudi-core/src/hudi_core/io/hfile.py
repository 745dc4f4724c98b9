"""Reading the key/value cells of an HFile (HBase's sorted key/value file, format versions 2 and
3), as Apache Hudi writes them for its bootstrap index: every data block in file order.

A block starts with a 33-byte header: an 8-byte magic (``DATABLK*`` for data), the on-disk
size without the header (checksums included), the uncompressed size without the header, the
previous block's offset, the checksum type, the bytes per checksum chunk and the on-disk size of
the data with the header. A data block holds cells one after another: key length and value
length (4-byte ints), the key (2-byte row length, the row, 1-byte family length, the family, the
qualifier, an 8-byte timestamp, a type byte), the value, then the cell's MVCC version as a
Hadoop variable-length long. Index and bloom blocks may sit between data blocks (skipped); the
blocks loaded on open (root index, file info, trailer) follow the last one.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator

from hudi_core.errors import HudiError

__all__ = ["HFileError", "cells"]

_HEADER = struct.Struct(">8siiqbii")
_DATA = b"DATABLK*"
#: blocks HBase writes inline, between data blocks (leaf index, bloom chunks)
_INLINE = frozenset({b"IDXLEAF2", b"BLMFBLK2"})


class HFileError(HudiError):
    """An HFile that cannot be read: a truncated block, an unknown compression."""


def cells(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(row, value) of every cell, in file order; HFileError for bytes that are not an HFile
    (its last 4 bytes give the format version: minor version in the high byte, major 2 or 3)."""
    if len(data) < 4 or struct.unpack_from(">i", data, len(data) - 4)[0] & 0xFFFFFF not in (2, 3):
        raise HFileError(f"not an HFile of format version 2 or 3 ({len(data)} bytes)")
    offset = 0
    while offset + _HEADER.size <= len(data):
        magic, on_disk, uncompressed, _prev, _kind, _per_checksum, with_header = _HEADER.unpack_from(
            data, offset
        )
        if magic != _DATA and magic not in _INLINE:
            return
        end = offset + _HEADER.size + on_disk
        if (
            on_disk < 0
            or uncompressed < 0
            or end > len(data)
            or not _HEADER.size <= with_header <= end - offset
        ):
            raise HFileError(f"block at byte {offset} runs past the end of the file ({len(data)} bytes)")
        if magic == _DATA:
            yield from _block_cells(_content(data, offset, with_header, uncompressed), offset)
        offset = end


def _content(data: bytes, offset: int, with_header: int, uncompressed: int) -> bytes:
    """The block's cells, uncompressed: the bytes after the header up to its checksums (the
    header's on-disk size of the data with the header)."""
    stored = data[offset + _HEADER.size : offset + with_header]
    if len(stored) == uncompressed:
        return stored
    try:  # Hudi's HFiles are uncompressed or GZ
        content = zlib.decompress(stored, wbits=47)
    except zlib.error as e:
        raise HFileError(f"block at byte {offset} is compressed with a codec other than gzip: {e}") from e
    if len(content) != uncompressed:
        raise HFileError(f"block at byte {offset} holds {len(content)} bytes, its header says {uncompressed}")
    return content


def _block_cells(block: bytes, at: int) -> Iterator[tuple[bytes, bytes]]:
    pos = 0
    while pos + 8 <= len(block):
        key_length, value_length = struct.unpack_from(">ii", block, pos)
        key_at, value_at = pos + 8, pos + 8 + key_length
        pos = value_at + value_length
        if key_length < 2 or value_length < 0 or pos > len(block):
            raise HFileError(f"cell at byte {key_at} of the block at byte {at} runs past the block")
        (row_length,) = struct.unpack_from(">h", block, key_at)
        yield bytes(block[key_at + 2 : key_at + 2 + row_length]), bytes(block[value_at:pos])
        pos += _vlong_size(block[pos]) if pos < len(block) else 0


def _vlong_size(first: int) -> int:
    """Bytes of a Hadoop variable-length long from its first byte."""
    signed = first - 256 if first > 127 else first
    if signed >= -112:
        return 1
    return (-119 - signed) if signed < -120 else (-111 - signed)
