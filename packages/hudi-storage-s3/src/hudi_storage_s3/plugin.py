"""Entry point of the hudi-storage-s3 plugin (group ``hudi_py``): the hooks it implements."""

from __future__ import annotations

from collections.abc import Mapping

from hudi_core.plugins.hookspecs import hookimpl
from hudi_core.storage.base import Storage

__all__ = ["STORAGE_NAME", "hudi_storage_for_uri"]

#: The name `hudi-py plugins` lists for this storage.
STORAGE_NAME = "s3"

_SCHEMES = ("s3", "s3a")


@hookimpl
def hudi_storage_for_uri(uri: str, options: Mapping[str, str]) -> Storage | None:
    """``s3://`` and ``s3a://`` URIs (Hadoop's s3a name for the same buckets)."""
    scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
    if scheme not in _SCHEMES:
        return None
    from hudi_storage_s3.storage import S3Storage  # s3fs/aiobotocore load only when S3 is used

    return S3Storage(uri, options)
