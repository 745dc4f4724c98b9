"""Where S3 connection settings come from: table options first, then the AWS environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hudi_core.config import HoodieConfig, StorageOptions
from hudi_core.errors import ConfigError

__all__ = ["MIN_PART_SIZE", "S3Settings"]

#: S3 refuses multipart parts below 5 MiB (except the last one).
MIN_PART_SIZE = 5 * 1024 * 1024


@dataclass(frozen=True, repr=False)
class S3Settings:
    """Resolved settings. ``repr`` never shows the secret or the session token."""

    endpoint_url: str | None = None
    region: str | None = None
    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None
    max_retries: int = 4
    base_delay: float = 0.1
    part_size: int = 8 * 1024 * 1024

    @classmethod
    def resolve(
        cls, options: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
    ) -> S3Settings:
        """Options (``hoodie.storage.s3.*``) win; otherwise the standard AWS variables
        ``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL``, ``AWS_REGION``/``AWS_DEFAULT_REGION``.
        Keys left unset here fall back to botocore's own chain (env vars, profiles)."""
        conf = options if isinstance(options, HoodieConfig) else HoodieConfig(options or {})
        env = os.environ if env is None else env
        endpoint = (
            conf.get_str(StorageOptions.S3_ENDPOINT)
            or env.get("AWS_ENDPOINT_URL_S3")
            or env.get("AWS_ENDPOINT_URL")
        )
        region = (
            conf.get_str(StorageOptions.S3_REGION) or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        )
        access = conf.get_str(StorageOptions.S3_ACCESS_KEY)
        secret = conf.get_str(StorageOptions.S3_SECRET_KEY)
        if (access is None) != (secret is None):
            raise ConfigError(
                "set both hoodie.storage.s3.access.key and hoodie.storage.s3.secret.key, or neither "
                "(then the AWS environment variables or profile are used)"
            )
        part_size = int(conf.get(StorageOptions.S3_MULTIPART_PART_SIZE))
        if part_size < MIN_PART_SIZE:
            raise ConfigError(
                f"hoodie.storage.s3.multipart.part.size={part_size} is below S3's 5 MiB minimum "
                f"part size; use at least {MIN_PART_SIZE}"
            )
        retries = int(conf.get(StorageOptions.S3_MAX_RETRIES))
        if retries < 0:
            raise ConfigError(f"hoodie.storage.s3.max.retries={retries} must be >= 0")
        return cls(
            endpoint_url=endpoint or None,
            region=region or None,
            access_key=access,
            secret_key=secret,
            session_token=conf.get_str(StorageOptions.S3_SESSION_TOKEN),
            max_retries=retries,
            base_delay=int(conf.get(StorageOptions.S3_RETRY_BASE_DELAY_MS)) / 1000.0,
            part_size=part_size,
        )

    def s3fs_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if self.access_key is not None:
            kwargs["key"] = self.access_key
            kwargs["secret"] = self.secret_key
        if self.session_token is not None:
            kwargs["token"] = self.session_token
        if self.endpoint_url:
            kwargs["endpoint_url"] = self.endpoint_url
        if self.region:
            kwargs["client_kwargs"] = {"region_name": self.region}
        return kwargs

    def __repr__(self) -> str:
        key = None if self.access_key is None else self.access_key[:4] + "****"
        return (
            f"S3Settings(endpoint_url={self.endpoint_url!r}, region={self.region!r}, "
            f"access_key={key!r}, max_retries={self.max_retries}, part_size={self.part_size})"
        )
