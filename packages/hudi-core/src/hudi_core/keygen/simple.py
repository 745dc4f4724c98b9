"""SimpleKeyGenerator, ComplexKeyGenerator and NonpartitionedKeyGenerator (spec 7.1, 7.2)."""

from __future__ import annotations

import pyarrow as pa

from hudi_core.config.keygen import KeyGenOptions
from hudi_core.errors import ConfigError
from hudi_core.keygen.base import Data, KeyGenerator, complex_record_keys, simple_record_keys, unpartitioned

__all__ = ["ComplexKeyGenerator", "NonpartitionedKeyGenerator", "SimpleKeyGenerator"]


class SimpleKeyGenerator(KeyGenerator):
    """One key field (its value is the key) and at most one partition field."""

    name = "SIMPLE"

    def __init__(self, config):  # type: ignore[no-untyped-def]
        super().__init__(config)
        if len(self.record_key_fields) > 1:
            raise ConfigError(
                f"SimpleKeyGenerator takes one record key field, got {','.join(self.record_key_fields)!r}; "
                "use ComplexKeyGenerator for several"
            )
        if len(self.partition_path_fields) > 1:
            raise ConfigError(
                f"SimpleKeyGenerator takes one partition field, got "
                f"{','.join(self.partition_path_fields)!r}; use ComplexKeyGenerator for several"
            )

    def record_keys(self, data: Data) -> pa.Array:
        return simple_record_keys(self, data, self._require_key_fields()[0])

    def _partition_paths(self, data: Data) -> pa.Array:
        return self._simple_partition(data, self.partition_path_fields)


class ComplexKeyGenerator(KeyGenerator):
    """``f1:v1,f2:v2`` keys; partition fields joined with ``/``.

    With one key field the key is ``f:v``, or the bare ``v`` when
    ``hoodie.write.complex.keygen.new.encoding=true`` (the 0.14.1/0.15.0 encoding, HUDI-7001).
    """

    name = "COMPLEX"

    def __init__(self, config):  # type: ignore[no-untyped-def]
        super().__init__(config)
        self.bare_single_field = bool(config.get(KeyGenOptions.COMPLEX_BARE_SINGLE_FIELD))

    def record_keys(self, data: Data) -> pa.Array:
        fields = self._require_key_fields()
        if len(fields) == 1 and self.bare_single_field:
            return simple_record_keys(self, data, fields[0])
        return complex_record_keys(self, data, fields)

    def _partition_paths(self, data: Data) -> pa.Array:
        return self._simple_partition(data, self.partition_path_fields)


class NonpartitionedKeyGenerator(KeyGenerator):
    """Every record in the one partition ``""``; key as Simple (one field) or Complex (several)."""

    name = "NON_PARTITION"

    def _partition_paths(self, data: Data) -> pa.Array:
        return unpartitioned(data.num_rows)
