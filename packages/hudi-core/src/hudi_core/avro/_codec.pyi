"""Types of the compiled Avro codec (``_codec.c``); a column is the tuple its header describes."""

from collections.abc import Sequence
from typing import Any

from typing_extensions import Buffer

def encode(
    columns: Sequence[tuple[Any, ...]],
    n: int,
    header: Buffer,
    prefixed: bool,
    starts: Buffer | None = None,
    /,
) -> bytes: ...
def decode(
    columns: Sequence[tuple[Any, ...]], data: Buffer, starts: Buffer, ends: Buffer, /
) -> list[tuple[int, int]]: ...
def bounds(content: Buffer, pos: int, starts: Buffer, ends: Buffer, /) -> None: ...
