"""Option resolution when a table is created (seed section 3, HoodieTableFactory).

* An explicit primary key beats ``hoodie.datasource.write.recordkey.field``.
* Explicit partition fields beat ``hoodie.datasource.write.partitionpath.field``.
* Unless a key generator is configured: no partition field -> NonPartitioned; one datetime
  partition field with at most one key field -> TimestampBased; several key or partition
  fields -> Complex; otherwise Simple.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError

__all__ = ["KEYGEN_CLASSES", "keygen_class_name", "resolve_table_options"]

_PKG = "org.apache.hudi.keygen."
#: short name -> Java class name persisted in hoodie.properties
KEYGEN_CLASSES = {
    "SIMPLE": _PKG + "SimpleKeyGenerator",
    "COMPLEX": _PKG + "ComplexKeyGenerator",
    "NON_PARTITION": _PKG + "NonpartitionedKeyGenerator",
    "TIMESTAMP": _PKG + "TimestampBasedKeyGenerator",
    "CUSTOM": _PKG + "CustomKeyGenerator",
}
_ALIASES = {
    "NONPARTITIONED": "NON_PARTITION",
    "NON_PARTITIONED": "NON_PARTITION",
    "TIMESTAMPBASED": "TIMESTAMP",
    "TIMESTAMP_BASED": "TIMESTAMP",
}


def keygen_class_name(name: str) -> str:
    """Java class name for a short name or class name (Avro variants map to Spark ones)."""
    n = name.strip()
    if "." in n:
        simple = n.rsplit(".", 1)[-1].replace("AvroKeyGenerator", "KeyGenerator")
        for cls in KEYGEN_CLASSES.values():
            if cls.rsplit(".", 1)[-1].lower() == simple.lower():
                return cls
        return n  # a user class: kept as given, resolved through the plugin registry
    key = _ALIASES.get(n.upper(), n.upper())
    if key not in KEYGEN_CLASSES:
        raise ConfigError(f"unknown key generator type {name!r}; use one of {', '.join(KEYGEN_CLASSES)}")
    return KEYGEN_CLASSES[key]


def _split(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    return [str(p).strip() for p in value if str(p).strip()]


def _is_datetime(schema: pa.Schema | None, field: str) -> pa.DataType | None:
    if schema is None or field not in schema.names:
        return None
    dt = schema.field(field).type
    return dt if pa.types.is_timestamp(dt) or pa.types.is_date(dt) else None


def resolve_table_options(
    *,
    record_key_fields: str | Sequence[str] | None,
    partition_fields: str | Sequence[str] | None,
    ordering_field: str | None,
    options: Mapping[str, Any] | None,
    schema: pa.Schema | None = None,
) -> HoodieConfig:
    """Resolve the write/table options of a new table; returns the merged options."""
    cfg = HoodieConfig(options or {})

    keys = (
        _split(record_key_fields)
        or cfg.get_list(WriteOptions.RECORDKEY_FIELD)
        or cfg.get_list(TableOptions.RECORDKEY_FIELDS)
    )
    # no record key fields: the writes make keys up (Hudi 0.14's auto-generated keys,
    # hudi_core.keygen.auto); hoodie.properties then names none, as Hudi's does
    parts = _split(partition_fields)
    if not parts:
        parts = cfg.get_list(WriteOptions.PARTITIONPATH_FIELD) or cfg.get_list(TableOptions.PARTITION_FIELDS)
    ordering = (
        ordering_field
        or cfg.get_str(WriteOptions.PRECOMBINE_FIELD)
        or cfg.get_str(TableOptions.PRECOMBINE_FIELD)
    )

    configured = (
        cfg.get_str(WriteOptions.KEYGEN_CLASS)
        or cfg.get_str(TableOptions.KEYGEN_CLASS)
        or cfg.get_str(WriteOptions.KEYGEN_TYPE)
    )
    if configured:
        keygen = keygen_class_name(configured)
    elif not parts:
        keygen = KEYGEN_CLASSES["NON_PARTITION"]
    elif len(parts) == 1 and len(keys) <= 1 and (dt := _is_datetime(schema, parts[0])) is not None:
        keygen = KEYGEN_CLASSES["TIMESTAMP"]
        _setup_timestamp_options(cfg, dt)
    elif len(parts) > 1 or len(keys) > 1:
        keygen = KEYGEN_CLASSES["COMPLEX"]
    else:
        keygen = KEYGEN_CLASSES["SIMPLE"]

    cfg.set(WriteOptions.RECORDKEY_FIELD, ",".join(keys))
    cfg.set(TableOptions.RECORDKEY_FIELDS, ",".join(keys))
    cfg.set(WriteOptions.PARTITIONPATH_FIELD, ",".join(parts) if parts else None)
    # CustomKeyGenerator's "field:type" pairs are persisted without the type (spec 2.3).
    stored_parts = [p.split(":", 1)[0] for p in parts]
    cfg.set(TableOptions.PARTITION_FIELDS, ",".join(stored_parts) if parts else None)
    cfg.set(WriteOptions.PRECOMBINE_FIELD, ordering)
    cfg.set(TableOptions.PRECOMBINE_FIELD, ordering)
    cfg.set(WriteOptions.KEYGEN_CLASS, keygen)
    cfg.set(TableOptions.KEYGEN_CLASS, keygen)
    return cfg


def _setup_timestamp_options(cfg: HoodieConfig, dt: pa.DataType) -> None:
    """Flink's ``setupTimestampKeygenOptions``: hourly partitions for timestamps, daily for dates."""
    prefix = "hoodie.keygen.timebased."
    defaults = (
        {"timestamp.type": "DATE_STRING", "input.dateformat": "yyyy-MM-dd", "output.dateformat": "yyyyMMdd"}
        if pa.types.is_date(dt)
        else {"timestamp.type": "EPOCHMILLISECONDS", "output.dateformat": "yyyyMMddHH"}
    )
    for k, v in defaults.items():
        if cfg.get(prefix + k) is None:
            cfg.set(prefix + k, v)
