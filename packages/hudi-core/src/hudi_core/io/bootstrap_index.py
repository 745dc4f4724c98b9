"""Apache Hudi's bootstrap index (``HFileBootstrapIndex``): where a METADATA_ONLY bootstrap left
each file group's data. Its skeleton base files (instant :data:`METADATA_BOOTSTRAP_INSTANT`) hold
the meta columns only; the rows' data stay in the source table's parquet files, row for row.

``.hoodie/.aux/.bootstrap/.partitions/<...>.hfile`` holds a cell per partition (row
``part=<partition path>``) whose value is an Avro container of one
``HoodieBootstrapPartitionMetadata``: ``fileIdToBootstrapFile`` maps each file id to the source
file's status (``path.uri``). (The ``.fileids`` file holds the same by file id.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hudi_core.avro.container import read_container
from hudi_core.config.table import TableOptions
from hudi_core.errors import HudiError, UnsupportedTableError
from hudi_core.io.hfile import cells

if TYPE_CHECKING:
    from hudi_core.table.meta_client import MetaClient

__all__ = ["METADATA_BOOTSTRAP_INSTANT", "bootstrap_sources", "source_path"]

#: the instant of the skeleton files Apache Hudi's METADATA_ONLY bootstrap writes
METADATA_BOOTSTRAP_INSTANT = "00000000000001"
_PARTITIONS = ".aux/.bootstrap/.partitions"


def bootstrap_sources(table: MetaClient) -> dict[str, str]:
    """``{file id: source file}`` of a bootstrapped table's skeleton files (empty for a table
    without a bootstrap index: a FULL_RECORD bootstrap, or none; no listing for a table that was
    never bootstrapped)."""
    if not table.config.get_str(TableOptions.BOOTSTRAP_BASE_PATH):
        return {}
    folder = f"{table.meta_path}/{_PARTITIONS}"
    files = sorted(f.name for f in table.storage.list(folder) if f.name.endswith(".hfile"))
    sources: dict[str, str] = {}
    for name in files:
        path = f"{folder}/{name}"
        try:
            for row, value in cells(table.storage.read_bytes(path)):
                if not row.startswith(b"part="):
                    continue
                for meta in read_container(value)[0]:
                    for file_id, status in (meta.get("fileIdToBootstrapFile") or {}).items():
                        uri = _uri(status)
                        if uri:
                            sources[file_id] = source_path(uri)
        except HudiError as e:
            raise UnsupportedTableError(
                f"{table.base_uri}: cannot read Hudi's bootstrap index {path}: {e}"
            ) from e
    return sources


def _uri(status: Any) -> str | None:
    path = (status or {}).get("path") or {}
    uri = path.get("uri") if isinstance(path, dict) else None
    return str(uri) if uri else None


def source_path(uri: str) -> str:
    """A Hadoop file URI as this library's storages take it: ``file:/a/b`` and ``file:///a/b``
    as ``/a/b``, any other scheme as it is."""
    if uri.startswith("file:"):
        rest = uri[len("file:") :]
        return "/" + rest.lstrip("/") if rest.startswith("//") or rest.startswith("/") else rest
    return uri
