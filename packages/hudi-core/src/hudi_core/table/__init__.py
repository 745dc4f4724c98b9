"""The table's metadata: config (``hoodie.properties``), file names, paths and the
:class:`MetaClient` handle every layer above passes around."""

from __future__ import annotations

from hudi_core.table.config import TableConfig, table_checksum
from hudi_core.table.meta_client import META_FOLDER, MetaClient
from hudi_core.table.paths import check_relative_path, join_table_path

__all__ = [
    "META_FOLDER",
    "MetaClient",
    "TableConfig",
    "check_relative_path",
    "join_table_path",
    "table_checksum",
]
