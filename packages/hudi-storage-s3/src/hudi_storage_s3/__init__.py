"""S3 storage for hudi-py via s3fs: conditional create for timeline files, multipart writes, retries."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
