"""The key generator interface and the record-key builders shared by every generator."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config.keygen import KeyGenOptions
from hudi_core.config.property import HoodieConfig
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError, InvalidRecordKeyError
from hudi_core.keygen.partition import (
    EMPTY_RECORDKEY_PLACEHOLDER,
    NULL_RECORDKEY_PLACEHOLDER,
    check_partition_paths,
    partition_segment,
)
from hudi_core.keygen.values import column_of, to_key_strings

__all__ = ["Data", "KeyGenerator", "complex_record_keys", "simple_record_keys", "unpartitioned"]

Data: TypeAlias = "pa.Table | pa.RecordBatch"


def _first_row(mask: pa.Array) -> int:
    return int(np.flatnonzero(np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool))[0])


def _field_list(raw: str | None) -> list[str]:
    return [p.strip() for p in (raw or "").split(",") if p.strip()]


class KeyGenerator:
    """Turns a batch of records into record keys and partition paths (spec 7).

    >>> kg = SimpleKeyGenerator(HoodieConfig({"hoodie.datasource.write.recordkey.field": "id"}))  # doctest: +SKIP
    >>> kg.record_keys(pa.table({"id": [1, 2]})).to_pylist()  # doctest: +SKIP
    ['1', '2']
    """

    #: the short name it is registered under
    name: str = ""

    def __init__(self, config: HoodieConfig) -> None:
        self.config = config
        self.record_key_fields = _field_list(
            config.raw(WriteOptions.RECORDKEY_FIELD) or config.raw(TableOptions.RECORDKEY_FIELDS)
        )
        self.partition_path_fields = _field_list(
            config.raw(WriteOptions.PARTITIONPATH_FIELD) or config.raw(TableOptions.PARTITION_FIELDS)
        )
        self.hive_style = bool(config.get(TableOptions.HIVE_STYLE_PARTITIONING))
        self.url_encode = bool(config.get(TableOptions.URL_ENCODE_PARTITIONING))
        self.consistent_logical_timestamp = bool(config.get(KeyGenOptions.CONSISTENT_LOGICAL_TIMESTAMP))

    # -- the interface -----------------------------------------------------------------------

    def record_keys(self, data: Data) -> pa.Array:
        """One key string per row; raises InvalidRecordKeyError naming the first bad row.

        Spec 7.1: one key field is rendered as Simple does (the bare value), several as Complex
        (``f1:v1,f2:v2``); Simple and Complex override this."""
        fields = self._require_key_fields()
        if len(fields) == 1:
            return simple_record_keys(self, data, fields[0])
        return complex_record_keys(self, data, fields)

    def partition_paths(self, data: Data) -> pa.Array:
        """One partition path per row (``""`` when not partitioned); never escapes the table."""
        return check_partition_paths(self._partition_paths(data))

    def _partition_paths(self, data: Data) -> pa.Array:
        raise NotImplementedError

    # -- helpers -----------------------------------------------------------------------------

    def _require_key_fields(self) -> list[str]:
        if not self.record_key_fields:
            raise ConfigError(
                f"{type(self).__name__} needs record key fields: set "
                "hoodie.datasource.write.recordkey.field (or hoodie.table.recordkey.fields)"
            )
        return self.record_key_fields

    def _strings(self, data: Data, field: str) -> pa.Array:
        return to_key_strings(
            column_of(data, field), consistent_logical_timestamp=self.consistent_logical_timestamp
        )

    def _simple_partition(self, data: Data, fields: list[str]) -> pa.Array:
        if not fields:
            return unpartitioned(data.num_rows)
        segments = [
            partition_segment(
                self._strings(data, f), f, hive_style=self.hive_style, url_encode=self.url_encode
            )
            for f in fields
        ]
        if len(segments) == 1:
            return segments[0]
        return pc.binary_join_element_wise(*segments, "/")

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(record_key_fields={self.record_key_fields}, "
            f"partition_path_fields={self.partition_path_fields})"
        )


def unpartitioned(num_rows: int) -> pa.Array:
    """The partition path of a non-partitioned table (``""``) for every row."""
    return pa.repeat(pa.scalar("", pa.string()), num_rows)


def simple_record_keys(kg: KeyGenerator, data: Data, field: str) -> pa.Array:
    """The field's value as the key; null or empty is an error (Java ``HoodieKeyException``)."""
    keys = kg._strings(data, field)
    bad = pc.fill_null(pc.equal(keys, ""), True)
    if pc.any(bad).as_py():
        row = _first_row(bad)
        what = "null" if not keys[row].is_valid else "empty"
        raise InvalidRecordKeyError(
            f"record key field {field!r} is {what} at row {row}; every record needs a non-empty "
            "key (fix the data or choose another hoodie.datasource.write.recordkey.field)"
        )
    return keys


def complex_record_keys(kg: KeyGenerator, data: Data, fields: list[str]) -> pa.Array:
    """``f1:v1,f2:v2``; null -> ``f:__null__``, empty -> ``f:__empty__``; all null/empty rejected."""
    parts = []
    all_bad: pa.Array | None = None
    for f in fields:
        s = kg._strings(data, f)
        is_null = s.is_null()
        is_empty = pc.fill_null(pc.equal(s, ""), False)
        bad = pc.or_(is_null, is_empty)
        all_bad = bad if all_bad is None else pc.and_(all_bad, bad)
        v = pc.if_else(
            is_null, NULL_RECORDKEY_PLACEHOLDER, pc.if_else(is_empty, EMPTY_RECORDKEY_PLACEHOLDER, s)
        )
        parts.append(pc.binary_join_element_wise(f"{f}:", v, ""))
    assert all_bad is not None
    if pc.any(all_bad).as_py():
        row = _first_row(all_bad)
        raise InvalidRecordKeyError(
            f"every record key field ({', '.join(fields)}) is null or empty at row {row}; "
            "at least one must hold a value"
        )
    return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, ",")
