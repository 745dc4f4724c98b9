"""Types of the compiled Java string hash (``_javahash.c``)."""

from typing_extensions import Buffer

def hashes(out: Buffer, offsets: Buffer, data: Buffer, /) -> int: ...
