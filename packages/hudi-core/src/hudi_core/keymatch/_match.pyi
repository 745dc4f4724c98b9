"""Types of the compiled key matching (``_match.c``)."""

from typing_extensions import Buffer

def index_in(
    out: Buffer, offsets: Buffer, data: Buffer, set_offsets: Buffer, set_data: Buffer, /
) -> None: ...
def first_rows(out: Buffer, offsets: Buffer, data: Buffer, /) -> int: ...
