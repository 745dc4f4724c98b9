"""TimestampBasedKeyGenerator (spec 7.3): the partition path is a formatted date."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config.keygen import TimestampKeyGenOptions as TS
from hudi_core.config.property import HoodieConfig
from hudi_core.errors import ConfigError, SchemaMismatchError
from hudi_core.keygen.base import Data, KeyGenerator, unpartitioned
from hudi_core.keygen.java_datetime import JavaDatePattern
from hudi_core.keygen.partition import partition_segment
from hudi_core.keygen.values import column_of

__all__ = ["TimestampBasedKeyGenerator", "TimestampPartitioner"]

_TYPES = ("UNIX_TIMESTAMP", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR", "DATE_STRING", "MIXED")
# java.util.concurrent.TimeUnit -> microseconds per unit
_UNIT_MICROS = {
    "NANOSECONDS": 0.001,
    "MICROSECONDS": 1,
    "MILLISECONDS": 1000,
    "SECONDS": 1_000_000,
    "MINUTES": 60_000_000,
    "HOURS": 3_600_000_000,
    "DAYS": 86_400_000_000,
}


class TimestampPartitioner:
    """Converts one column to partition values per the ``hoodie.keygen.timebased.*`` options."""

    def __init__(self, config: HoodieConfig) -> None:
        ts_type = (config.get_str(TS.TIMESTAMP_TYPE) or "").strip().upper()
        input_fmt = config.get_str(TS.INPUT_DATE_FORMAT) or ""
        if not ts_type:
            # 0.14 persisted only the date formats (spec 7.3): an input format implies DATE_STRING.
            ts_type = "DATE_STRING" if input_fmt else ""
        if ts_type not in _TYPES:
            raise ConfigError(f"{TS.TIMESTAMP_TYPE.key}={ts_type!r} is not one of {', '.join(_TYPES)}")
        self.timestamp_type = ts_type
        if ts_type == "UNIX_TIMESTAMP":
            unit = "SECONDS"
        elif ts_type == "EPOCHMILLISECONDS":
            unit = "MILLISECONDS"
        elif ts_type == "EPOCHMICROSECONDS":
            unit = "MICROSECONDS"
        elif ts_type == "SCALAR":
            unit = (config.get_str(TS.SCALAR_TIME_UNIT) or "SECONDS").strip().upper()
            if unit not in _UNIT_MICROS:
                raise ConfigError(
                    f"{TS.SCALAR_TIME_UNIT.key}={unit!r} is not a TimeUnit ({', '.join(_UNIT_MICROS)})"
                )
        else:
            unit = "MILLISECONDS"
        self.unit = unit
        delim = config.get_str(TS.INPUT_DATE_FORMAT_DELIMITER) or ","
        self.input_patterns = [JavaDatePattern(p.strip()) for p in re.split(delim, input_fmt) if p.strip()]
        if ts_type in ("DATE_STRING", "MIXED") and not self.input_patterns:
            raise ConfigError(f"{TS.INPUT_DATE_FORMAT.key} is required when the type is {ts_type}")
        output_fmt = config.get_str(TS.OUTPUT_DATE_FORMAT) or ""
        if not output_fmt:
            raise ConfigError(f"{TS.OUTPUT_DATE_FORMAT.key} is required, e.g. yyyy/MM/dd")
        self.output_pattern = JavaDatePattern(output_fmt)
        zone = config.get_str(TS.TIMEZONE) or "UTC"
        self.input_zone = config.get_str(TS.INPUT_TIMEZONE) or zone
        self.output_zone = config.get_str(TS.OUTPUT_TIMEZONE) or zone

    def _numbers_to_micros(self, values: pa.Array) -> np.ndarray:
        # Java first takes longValue() and converts to millis (TimeUnit.convert truncates).
        longs = np.asarray(
            pc.fill_null(
                values.cast(pa.float64()) if not pa.types.is_integer(values.type) else values, 0
            ).to_numpy(zero_copy_only=False)
        )
        longs = np.trunc(longs).astype(np.int64)
        per_unit = _UNIT_MICROS[self.unit]
        if per_unit >= 1000:
            millis = longs * int(per_unit // 1000)
        elif per_unit == 1:
            millis = np.trunc(longs / 1000).astype(np.int64)
        else:
            millis = np.trunc(longs / 1_000_000).astype(np.int64)
        return millis * 1000

    def _strings_to_micros(self, values: pa.Array, field: str) -> np.ndarray:
        result = np.zeros(len(values), dtype=np.int64)
        done = np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        for pattern in self.input_patterns:
            parsed, ok = pattern.parse_micros(values, zone=self.input_zone)
            ok_np = np.asarray(ok.to_numpy(zero_copy_only=False), dtype=bool) & ~done
            result[ok_np] = np.asarray(pc.fill_null(parsed, 0).to_numpy(zero_copy_only=False))[ok_np]
            done |= ok_np
        if not done.all():
            row = int(np.flatnonzero(~done)[0])
            raise SchemaMismatchError(
                f"partition field {field!r} value {values[row].as_py()!r} at row {row} matches none "
                f"of the input date formats {[p.pattern for p in self.input_patterns]}"
            )
        # Java keeps millisecond precision
        return (result // 1000) * 1000

    def _default_micros(self) -> int:
        """What Java substitutes for a null value (spec 7.3)."""
        if self.timestamp_type in ("DATE_STRING", "MIXED"):
            # epoch + 1 ms printed with the first input pattern and parsed back
            return 1000 if any(t.letter == "S" for t in self.input_patterns[0].tokens) else 0
        return int(self._numbers_to_micros(pa.array([1], pa.int64()))[0])

    def partition_values(self, values: pa.Array, field: str) -> pa.Array:
        t = values.type
        if pa.types.is_timestamp(t):
            micros = np.asarray(
                pc.fill_null(values.cast(pa.timestamp("us", t.tz), safe=False).cast(pa.int64()), 0).to_numpy(
                    zero_copy_only=False
                )
            )
            micros = (micros // 1000) * 1000
        elif pa.types.is_date(t):
            days = np.asarray(
                pc.fill_null(values.cast(pa.date32()).cast(pa.int32()), 0).to_numpy(zero_copy_only=False)
            )
            micros = days.astype(np.int64) * 86_400_000_000
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            strings = values.cast(pa.string())
            if self.timestamp_type in ("DATE_STRING", "MIXED"):
                micros = self._strings_to_micros(strings, field)
            else:
                try:
                    micros = self._numbers_to_micros(strings.cast(pa.int64()))
                except pa.ArrowInvalid as e:
                    raise SchemaMismatchError(
                        f"partition field {field!r} holds strings that are not {self.timestamp_type} "
                        f"numbers ({e}); set {TS.TIMESTAMP_TYPE.key}=DATE_STRING with an input format"
                    ) from e
        elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
            if self.timestamp_type in ("DATE_STRING", "MIXED"):
                raise SchemaMismatchError(
                    f"partition field {field!r} is numeric ({t}) but {TS.TIMESTAMP_TYPE.key} is "
                    f"{self.timestamp_type}; use UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS or SCALAR"
                )
            micros = self._numbers_to_micros(values)
        else:
            raise SchemaMismatchError(f"partition field {field!r} of type {t} cannot be a timestamp")
        nulls = np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if nulls.any():
            micros = np.where(nulls, self._default_micros(), micros)
        return self.output_pattern.format(pa.array(micros, pa.int64()), zone=self.output_zone)


class TimestampBasedKeyGenerator(KeyGenerator):
    """Simple record key; one partition field rendered as a date (``yyyy/MM/dd``...)."""

    name = "TIMESTAMP"

    def __init__(self, config: HoodieConfig) -> None:
        super().__init__(config)
        if len(self.partition_path_fields) > 1:
            raise ConfigError(
                "TimestampBasedKeyGenerator takes one partition field, got "
                f"{','.join(self.partition_path_fields)!r}; use CustomKeyGenerator for several"
            )
        self.partitioner = TimestampPartitioner(config)

    def _partition_paths(self, data: Data) -> pa.Array:
        if not self.partition_path_fields:
            return unpartitioned(data.num_rows)
        field = self.partition_path_fields[0]
        values = self.partitioner.partition_values(column_of(data, field), field)
        return partition_segment(values, field, hive_style=self.hive_style, url_encode=self.url_encode)
