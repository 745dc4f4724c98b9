"""HFile cells as Apache Hudi's bootstrap index and metadata table store them: data blocks
uncompressed or gzip, index and bloom blocks between them skipped, the blocks loaded on open
ending the scan; truncated blocks refused."""

from __future__ import annotations

import gzip
import struct

import pytest
from hudi_core.io.hfile import HFileError, cells

_PER_CHECKSUM = 16384
#: the end of a trailer: format version 3.3 (minor version in the high byte)
_TRAILER = b'TRABLK"$' + b"\x00" * 40 + struct.pack(">i", 3 << 24 | 3)


def _cell(row: bytes, value: bytes, mvcc: bytes = b"\x00") -> bytes:
    # key: row length, row, family length (0), no qualifier, timestamp, type (Put)
    key = struct.pack(">h", len(row)) + row + b"\x00" + struct.pack(">q", 2**63 - 1) + b"\x04"
    return struct.pack(">ii", len(key), len(value)) + key + value + mvcc


def _block(magic: bytes, content: bytes, *, compress: bool = False) -> bytes:
    stored = gzip.compress(content) if compress else content
    with_header = 33 + len(stored)
    checksums = b"\x00\x00\x00\x00" * -(-with_header // _PER_CHECKSUM)
    header = struct.pack(">8siiqbii", magic, len(stored) + len(checksums), len(content), -1, 2, _PER_CHECKSUM,
                         with_header)  # fmt: skip
    return header + stored + checksums


def test_cells_of_every_data_block_in_file_order() -> None:
    first = (
        _cell(b"part=p1", b"one")
        + _cell(b"part=p2", b"two" * 9000, mvcc=b"\x8f\x01")  # an MVCC version of two bytes
        + _cell(b"part=p2a", b"four")
    )
    data = (
        _block(b"DATABLK*", first)
        + _block(b"IDXLEAF2", b"\x00" * 40)  # inline blocks between data blocks
        + _block(b"DATABLK*", _cell(b"part=p3", b"three"), compress=True)
        + _block(b"BLMFBLK2", b"\x01" * 16)
        + _block(b"IDXROOT2", _cell(b"not", b"a cell"))  # loaded on open: the scan stops
        + _TRAILER
    )
    assert [(row, value[:5]) for row, value in cells(data)] == [
        (b"part=p1", b"one"), (b"part=p2", b"twotw"), (b"part=p2a", b"four"), (b"part=p3", b"three")
    ]  # fmt: skip


def test_an_hfile_without_cells_a_truncated_one_and_other_bytes() -> None:
    assert list(cells(_block(b"IDXROOT2", b"") + _TRAILER)) == []
    whole = _block(b"DATABLK*", _cell(b"part=p1", b"x" * 200))
    with pytest.raises(HFileError, match="past the end"):
        list(cells(whole[:100] + _TRAILER))
    with pytest.raises(HFileError, match="not an HFile"):
        list(cells(whole))  # no trailer: a parquet file, say
