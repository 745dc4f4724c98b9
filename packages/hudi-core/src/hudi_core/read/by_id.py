"""Files written under another version of a table's internal schema (Hudi's schema on read
renamed a column since, or dropped one and added it again): their columns matched with the
query's by id (:mod:`hudi_core.schema.internal`), for base files (``read.files``'s ``by_id``)
and for log blocks (:func:`blocks_by_id`)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from hudi_core.fs_view.model import BaseFile
from hudi_core.log.format import DATA_BLOCK_TYPES
from hudi_core.schema.internal import FileColumns, SchemaHistory

__all__ = ["blocks_by_id", "file_columns"]


def file_columns(history: SchemaHistory | None, base_file: BaseFile | None) -> FileColumns | None:
    """How ``base_file`` holds the query's columns, where they are matched by id (None: by name)."""
    return history.file_columns(base_file.instant) if history is not None and base_file is not None else None


def blocks_by_id(blocks: list[Any], history: SchemaHistory | None) -> list[Any]:
    """``blocks`` with each data block written under another version giving its records under
    the query's names."""
    if history is None:
        return blocks
    out = []
    for block in blocks:
        columns = history.file_columns(block.instant_time) if block.block_type in DATA_BLOCK_TYPES else None
        out.append(block if columns is None else _BlockById(block, columns))
    return out


class _BlockById:
    """A data block whose records hold the query's columns under the names of the schema it was
    written with: its records under the query's names, the rest as the block's."""

    def __init__(self, block: Any, columns: FileColumns) -> None:
        self._block, self._columns = block, columns

    def __getattr__(self, name: str) -> Any:
        return getattr(self._block, name)

    def records(self) -> pa.Table:
        return self._columns.to_query(self._block.records())
