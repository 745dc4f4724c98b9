from __future__ import annotations

from hudi_core.testing.s3 import moto_s3_server, s3_bucket

__all__ = ["moto_s3_server", "s3_bucket"]
