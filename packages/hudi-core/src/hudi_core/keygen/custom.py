"""CustomKeyGenerator: partition fields typed ``field:simple`` or ``field:timestamp``."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError
from hudi_core.keygen.base import Data, KeyGenerator, unpartitioned
from hudi_core.keygen.partition import partition_segment
from hudi_core.keygen.timestamp import TimestampPartitioner
from hudi_core.keygen.values import column_of

__all__ = ["CustomKeyGenerator"]


class CustomKeyGenerator(KeyGenerator):
    """Each partition field is built by the Simple or the Timestamp rule and joined with ``/``.

    Record key: Simple for one key field, Complex for several.
    """

    name = "CUSTOM"

    def __init__(self, config: HoodieConfig) -> None:
        super().__init__(config)
        self.typed_fields: list[tuple[str, str]] = []
        for spec in self.partition_path_fields:
            name, sep, kind = spec.rpartition(":")
            if not sep or not name:
                raise ConfigError(
                    f"CustomKeyGenerator partition field {spec!r} has no type; write it as "
                    f"'{spec}:simple' or '{spec}:timestamp' in hoodie.datasource.write.partitionpath.field"
                )
            kind = kind.strip().upper()
            if kind not in ("SIMPLE", "TIMESTAMP"):
                raise ConfigError(
                    f"CustomKeyGenerator partition field {spec!r}: type {kind!r} is not SIMPLE or TIMESTAMP"
                )
            self.typed_fields.append((name.strip(), kind))
        self._timestamp = (
            TimestampPartitioner(config) if any(k == "TIMESTAMP" for _, k in self.typed_fields) else None
        )

    def _partition_paths(self, data: Data) -> pa.Array:
        if not self.typed_fields:
            return unpartitioned(data.num_rows)
        segments = []
        for field, kind in self.typed_fields:
            if kind == "SIMPLE":
                segments.append(self._simple_partition(data, [field]))
            else:
                assert self._timestamp is not None
                values = self._timestamp.partition_values(column_of(data, field), field)
                segments.append(
                    partition_segment(values, field, hive_style=self.hive_style, url_encode=self.url_encode)
                )
        return segments[0] if len(segments) == 1 else pc.binary_join_element_wise(*segments, "/")
