"""S3 storage for hudi-py via s3fs: conditional create for timeline files, multipart writes, retries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hudi_storage_s3.settings import S3Settings
    from hudi_storage_s3.storage import S3Storage

__version__ = "0.1.0"

__all__ = ["S3Settings", "S3Storage", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy: loading the plugin entry point must not import s3fs/aiobotocore for local tables.
    if name == "S3Storage":
        from hudi_storage_s3.storage import S3Storage

        return S3Storage
    if name == "S3Settings":
        from hudi_storage_s3.settings import S3Settings

        return S3Settings
    raise AttributeError(name)
