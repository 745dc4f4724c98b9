"""The storage conformance suite over S3Storage on the moto server, for s3:// and s3a://."""

from __future__ import annotations

import pytest
from hudi_core.testing.s3 import S3Bucket
from hudi_core.testing.storage import StorageCase, StorageConformance
from hudi_storage_s3 import S3Storage

pytestmark = pytest.mark.s3


class TestS3Storage(StorageConformance):
    @pytest.fixture
    def storage_case(self, s3_bucket: S3Bucket) -> StorageCase:
        return StorageCase(S3Storage(s3_bucket.uri, s3_bucket.options), base=f"{s3_bucket.uri}/t")


class TestS3aStorage(StorageConformance):
    @pytest.fixture
    def storage_case(self, s3_bucket: S3Bucket) -> StorageCase:
        uri = f"s3a://{s3_bucket.name}"
        return StorageCase(S3Storage(uri, s3_bucket.options), base=f"{uri}/t")
