"""Storage options: object-store endpoints, credentials, retries and multipart sizes.

Credentials may also come from the standard AWS environment variables (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``,
``AWS_REGION`` / ``AWS_DEFAULT_REGION``); table options win over the environment.
"""

from __future__ import annotations

from hudi_core.config.property import ConfigProperty

__all__ = ["StorageOptions"]


def _s(key: str, default: object, doc: str, *aliases: str) -> ConfigProperty:  # type: ignore[type-arg]
    return ConfigProperty(key, default, doc, aliases=aliases, group="storage")


class StorageOptions:
    S3_ENDPOINT = _s("hoodie.storage.s3.endpoint", None, "S3 endpoint URL (e.g. http://127.0.0.1:9000).")
    S3_REGION = _s("hoodie.storage.s3.region", None, "S3 region.")
    S3_ACCESS_KEY = _s("hoodie.storage.s3.access.key", None, "S3 access key id.")
    S3_SECRET_KEY = _s("hoodie.storage.s3.secret.key", None, "S3 secret access key (never logged).")
    S3_SESSION_TOKEN = _s("hoodie.storage.s3.session.token", None, "S3 session token (never logged).")
    S3_MAX_RETRIES = _s(
        "hoodie.storage.s3.max.retries", 4,
        "Retries of one S3 request on transient errors (5xx, throttling, connection resets).",
    )  # fmt: skip
    S3_RETRY_BASE_DELAY_MS = _s(
        "hoodie.storage.s3.retry.base.delay.ms", 100, "First retry back-off; doubles per retry (with jitter)."
    )
    S3_MULTIPART_PART_SIZE = _s(
        "hoodie.storage.s3.multipart.part.size", 8 * 1024 * 1024,
        "Part size of streamed (multipart) writes; at least 5 MiB.",
    )  # fmt: skip
