"""Seed section 3: one test per option-resolution rule."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hudi_core.config.resolution import KEYGEN_CLASSES, keygen_class_name, resolve_table_options
from hudi_core.config.table import TableOptions
from hudi_core.config.write import WriteOptions
from hudi_core.errors import ConfigError


def _keygen(cfg) -> str:  # type: ignore[no-untyped-def]
    return cfg.get_str(TableOptions.KEYGEN_CLASS).rsplit(".", 1)[-1]


def test_explicit_primary_key_beats_the_record_key_option() -> None:
    cfg = resolve_table_options(
        record_key_fields="uuid", partition_fields=None, ordering_field=None,
        options={"hoodie.datasource.write.recordkey.field": "other"},
    )  # fmt: skip
    assert cfg.get_str(TableOptions.RECORDKEY_FIELDS) == "uuid"
    assert cfg.get_str(WriteOptions.RECORDKEY_FIELD) == "uuid"


def test_record_key_option_is_used_without_a_primary_key() -> None:
    cfg = resolve_table_options(
        record_key_fields=None, partition_fields=None, ordering_field=None,
        options={"hoodie.datasource.write.recordkey.field": "id"},
    )  # fmt: skip
    assert cfg.get_str(TableOptions.RECORDKEY_FIELDS) == "id"


@pytest.mark.parametrize(
    ("parts", "keygen"), [(None, "NonpartitionedKeyGenerator"), ("p", "SimpleKeyGenerator")]
)
def test_without_a_record_key_the_table_names_none(parts: str | None, keygen: str) -> None:
    """Hudi 0.14's tables with auto-generated keys: no key field, the generator for the partitions."""
    cfg = resolve_table_options(
        record_key_fields=None, partition_fields=parts, ordering_field=None, options={}
    )
    assert not cfg.get_list(TableOptions.RECORDKEY_FIELDS)
    assert cfg.get_str(TableOptions.KEYGEN_CLASS) == f"org.apache.hudi.keygen.{keygen}"


def test_explicit_partition_fields_beat_the_partition_option() -> None:
    cfg = resolve_table_options(
        record_key_fields="id", partition_fields=["city"], ordering_field=None,
        options={"hoodie.datasource.write.partitionpath.field": "country"},
    )  # fmt: skip
    assert cfg.get_str(TableOptions.PARTITION_FIELDS) == "city"


def test_no_partition_field_selects_nonpartitioned() -> None:
    cfg = resolve_table_options(
        record_key_fields="id", partition_fields=None, ordering_field=None, options={}
    )
    assert _keygen(cfg) == "NonpartitionedKeyGenerator"


def test_one_datetime_partition_field_with_simple_key_selects_timestamp_based() -> None:
    schema = pa.schema([("id", pa.int64()), ("event_time", pa.timestamp("us", tz="UTC"))])
    cfg = resolve_table_options(
        record_key_fields="id", partition_fields="event_time", ordering_field=None, options={}, schema=schema
    )
    assert _keygen(cfg) == "TimestampBasedKeyGenerator"
    assert cfg.get("hoodie.keygen.timebased.output.dateformat") == "yyyyMMddHH"


def test_datetime_partition_with_composite_key_is_complex_not_timestamp() -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("d", pa.date32())])
    cfg = resolve_table_options(
        record_key_fields="id,name", partition_fields="d", ordering_field=None, options={}, schema=schema
    )
    assert _keygen(cfg) == "ComplexKeyGenerator"


def test_several_key_fields_select_complex() -> None:
    cfg = resolve_table_options(
        record_key_fields="id,name", partition_fields="city", ordering_field=None, options={}
    )
    assert _keygen(cfg) == "ComplexKeyGenerator"


def test_several_partition_fields_select_complex() -> None:
    cfg = resolve_table_options(
        record_key_fields="id", partition_fields="a,b", ordering_field=None, options={}
    )
    assert _keygen(cfg) == "ComplexKeyGenerator"


def test_one_key_one_plain_partition_field_selects_simple() -> None:
    cfg = resolve_table_options(
        record_key_fields="id", partition_fields="city", ordering_field=None, options={}
    )
    assert _keygen(cfg) == "SimpleKeyGenerator"


def test_a_configured_key_generator_is_kept() -> None:
    cfg = resolve_table_options(
        record_key_fields="id,name", partition_fields="a,b", ordering_field=None,
        options={"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator"},
    )  # fmt: skip
    assert _keygen(cfg) == "CustomKeyGenerator"


def test_custom_partition_types_are_stripped_in_the_table_config() -> None:
    cfg = resolve_table_options(
        record_key_fields="id", partition_fields="region:simple,ts:timestamp", ordering_field=None,
        options={"hoodie.datasource.write.keygenerator.type": "CUSTOM"},
    )  # fmt: skip
    assert cfg.get_str(TableOptions.PARTITION_FIELDS) == "region,ts"
    assert cfg.get_str(WriteOptions.PARTITIONPATH_FIELD) == "region:simple,ts:timestamp"


def test_keygen_names_and_avro_variants_map_to_spark_class_names() -> None:
    assert keygen_class_name("simple") == KEYGEN_CLASSES["SIMPLE"]
    assert keygen_class_name("org.apache.hudi.keygen.SimpleAvroKeyGenerator") == KEYGEN_CLASSES["SIMPLE"]
    assert keygen_class_name("NonPartitioned") == KEYGEN_CLASSES["NON_PARTITION"]
    with pytest.raises(ConfigError, match="BOGUS"):
        keygen_class_name("BOGUS")
