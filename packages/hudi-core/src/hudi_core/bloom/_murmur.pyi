"""Types of the compiled bloom filter hashing (``_murmur.c``)."""

from typing_extensions import Buffer

def set_bits(
    bits: Buffer,
    offsets: Buffer,
    data: Buffer,
    num_hashes: int,
    bit_size: int,
    row_base: Buffer | None = None,
    /,
) -> None: ...
def contains(
    found: Buffer, bits: Buffer, offsets: Buffer, data: Buffer, num_hashes: int, bit_size: int, /
) -> None: ...
def positions(out: Buffer, offsets: Buffer, data: Buffer, num_hashes: int, bit_size: int, /) -> None: ...
