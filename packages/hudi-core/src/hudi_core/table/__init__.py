"""The table: config (``hoodie.properties``), paths and the ``HudiTable`` entry point."""

from __future__ import annotations

from hudi_core.table.config import TableConfig, table_checksum
from hudi_core.table.hudi_table import META_FOLDER, HudiTable
from hudi_core.table.paths import check_relative_path, join_table_path

__all__ = [
    "META_FOLDER",
    "HudiTable",
    "TableConfig",
    "check_relative_path",
    "join_table_path",
    "table_checksum",
]
