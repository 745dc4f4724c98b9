"""Per-generator and per-rule checks of spec 7 with hand-made batches."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from hudi_core.config import HoodieConfig
from hudi_core.errors import ConfigError, InvalidRecordKeyError, UnknownComponentError, UnsafePathError
from hudi_core.keygen import (
    ComplexKeyGenerator,
    CustomKeyGenerator,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
    key_generator_for,
)
from hudi_core.plugins.manager import PluginManager

RK = "hoodie.datasource.write.recordkey.field"
PP = "hoodie.datasource.write.partitionpath.field"
HIVE = "hoodie.datasource.write.hive_style_partitioning"
ENC = "hoodie.datasource.write.partitionpath.urlencode"
TS = "hoodie.keygen.timebased."


def cfg(**kv: str) -> HoodieConfig:
    return HoodieConfig({k.replace("__", "."): v for k, v in kv.items()})


def conf(d: dict[str, str]) -> HoodieConfig:
    return HoodieConfig(d)


# -- choosing a generator -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"},
            SimpleKeyGenerator,
        ),
        (
            {"hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleAvroKeyGenerator"},
            SimpleKeyGenerator,
        ),
        (
            {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator"},
            ComplexKeyGenerator,
        ),
        ({"hoodie.table.keygenerator.type": "NON_PARTITION"}, NonpartitionedKeyGenerator),
        (
            {
                "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
            },
            NonpartitionedKeyGenerator,
        ),
        ({"hoodie.datasource.write.keygenerator.type": "custom", PP: "p:simple"}, CustomKeyGenerator),
        ({PP: "p"}, SimpleKeyGenerator),
        ({PP: "p,q"}, ComplexKeyGenerator),
        ({}, NonpartitionedKeyGenerator),
    ],
)
def test_key_generator_for_picks_by_class_type_or_inference(options: dict, expected: type) -> None:
    kg = key_generator_for(conf({RK: "id", **options}), manager=PluginManager(load_entry_points=False))
    assert type(kg) is expected


def test_key_generator_for_timestamp_by_java_class() -> None:
    kg = key_generator_for(
        conf(
            {
                RK: "id",
                PP: "ts",
                "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedAvroKeyGenerator",
                TS + "timestamp.type": "EPOCHMILLISECONDS",
                TS + "output.dateformat": "yyyy/MM/dd",
            }
        )
    )
    assert type(kg) is TimestampBasedKeyGenerator


def test_unknown_generator_lists_installed_names() -> None:
    with pytest.raises(UnknownComponentError, match="SIMPLE"):
        key_generator_for(conf({RK: "id", "hoodie.table.keygenerator.class": "com.acme.MyKeyGen"}))


def test_table_and_write_generators_must_agree() -> None:
    with pytest.raises(ConfigError, match="ComplexKeyGenerator"):
        key_generator_for(
            conf(
                {
                    RK: "id",
                    "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
                    "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
                }
            )
        )


# -- record keys ----------------------------------------------------------------------------------


def test_simple_key_renders_java_strings() -> None:
    data = pa.table(
        {
            "i": pa.array([1, -2], pa.int64()),
            "b": [True, False],
            "d": [1.0, 2.0**60],
            "f": pa.array([0.1, 2.0**30], pa.float32()),
            "dec": pa.array([Decimal("12345.67890"), Decimal("-0.00100")], pa.decimal128(10, 5)),
            "day": pa.array([dt.date(2023, 4, 1), dt.date(1970, 1, 2)]),
            "ts": pa.array([1680350460123456, 0], pa.timestamp("us", "UTC")),
        }
    )

    def keys(field: str, **extra: str) -> list:
        return SimpleKeyGenerator(conf({RK: field, **extra})).record_keys(data).to_pylist()

    assert keys("i") == ["1", "-2"]
    assert keys("b") == ["true", "false"]
    # (Java 17 prints an integral value from 2^54 (floats: 2^25) as its exact digits, rounded
    # below the type's precision: not the shortest, 1.152921504606847E18 and 1.0737418E9)
    assert keys("d") == ["1.0", "1.15292150460684698E18"]
    assert keys("f") == ["0.1", "1.07374182E9"]
    assert keys("dec") == ["12345.67890", "-0.00100"]
    assert keys("day") == ["2023-04-01", "1970-01-02"]
    assert keys("ts") == ["1680350460123456", "0"]
    consistent = {"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": "true"}
    assert keys("ts", **consistent) == ["2023-04-01 12:01:00.123", "1970-01-01 00:00:00.0"]


def test_key_text_of_far_dates_and_tiny_decimals_is_javas() -> None:
    # (LocalDate.toString and BigDecimal.toString as Java 17 printed them)
    data = pa.table(
        {
            "day": pa.array([2932897, 2932896, -719529, -800000], pa.date32()),
            "dec": pa.array(
                [Decimal("1.234E-7"), Decimal("1E-10"), Decimal("0E-10"), Decimal("-5.000E-7")],
                pa.decimal128(20, 10),
            ),
        }
    )

    def keys(field: str) -> list:
        return SimpleKeyGenerator(conf({RK: field})).record_keys(data).to_pylist()

    assert keys("day") == ["+10000-01-01", "9999-12-31", "-0001-12-31", "-0221-09-04"]
    assert keys("dec") == ["1.234E-7", "1E-10", "0E-10", "-5.000E-7"]


@pytest.mark.parametrize("bad", [None, ""])
def test_simple_null_or_empty_key_names_row_and_field(bad: str | None) -> None:
    data = pa.table({"id": ["a", "b", bad]})
    with pytest.raises(InvalidRecordKeyError, match=r"'id' is (null|empty) at row 2"):
        SimpleKeyGenerator(conf({RK: "id"})).record_keys(data)


def test_complex_key_placeholders_and_rejection() -> None:
    kg = ComplexKeyGenerator(conf({RK: "id,name"}))
    data = pa.table({"id": [1, None, 3], "name": ["Alice", "Bob", ""]})
    assert kg.record_keys(data).to_pylist() == [
        "id:1,name:Alice",
        "id:__null__,name:Bob",
        "id:3,name:__empty__",
    ]
    with pytest.raises(InvalidRecordKeyError, match="row 1"):
        kg.record_keys(pa.table({"id": [1, None], "name": ["A", ""]}))


def test_complex_single_field_encodings() -> None:
    data = pa.table({"id": [7]})
    assert ComplexKeyGenerator(conf({RK: "id"})).record_keys(data).to_pylist() == ["id:7"]
    bare = ComplexKeyGenerator(conf({RK: "id", "hoodie.write.complex.keygen.new.encoding": "true"}))
    assert bare.record_keys(data).to_pylist() == ["7"]


def test_nested_fields() -> None:
    data = pa.table({"s": pa.array([{"a": {"b": 5}, "c": "x"}, {"a": {"b": 6}, "c": "y"}])})
    kg = ComplexKeyGenerator(conf({RK: "s.a.b,s.c", PP: "s.c", HIVE: "true"}))
    assert kg.record_keys(data).to_pylist() == ["s.a.b:5,s.c:x", "s.a.b:6,s.c:y"]
    assert kg.partition_paths(data).to_pylist() == ["s.c=x", "s.c=y"]


def test_nonpartitioned_key_forms() -> None:
    data = pa.table({"id": [1], "name": ["A"]})
    assert NonpartitionedKeyGenerator(conf({RK: "id"})).record_keys(data).to_pylist() == ["1"]
    kg = NonpartitionedKeyGenerator(conf({RK: "id,name"}))
    assert kg.record_keys(data).to_pylist() == ["id:1,name:A"]
    assert kg.partition_paths(data).to_pylist() == [""]


# -- partition paths ------------------------------------------------------------------------------


def test_partition_default_hive_and_complex_join() -> None:
    data = pa.table({"id": [1, 2, 3], "a": ["x", None, ""], "b": [10, 20, None]})
    kg = ComplexKeyGenerator(conf({RK: "id", PP: "a,b", HIVE: "true"}))
    assert kg.partition_paths(data).to_pylist() == [
        "a=x/b=10",
        "a=__HIVE_DEFAULT_PARTITION__/b=20",
        "a=__HIVE_DEFAULT_PARTITION__/b=__HIVE_DEFAULT_PARTITION__",
    ]


def test_url_encoding_escapes_hive_characters() -> None:
    data = pa.table({"id": [1, 2], "p": ["a/b:c%d=e", "é ok#[x]\x01"]})
    kg = SimpleKeyGenerator(conf({RK: "id", PP: "p", ENC: "true"}))
    assert kg.partition_paths(data).to_pylist() == ["a%2Fb%3Ac%25d%3De", "é ok%23%5Bx%5D%01"]


@pytest.mark.parametrize("value", ["..", "../etc", "a/../../x", "/abs", ".", "a//b"])
def test_partition_values_cannot_escape_the_table(value: str) -> None:
    data = pa.table({"id": [1, 2], "p": ["ok", value]})
    with pytest.raises(UnsafePathError, match="row 1"):
        SimpleKeyGenerator(conf({RK: "id", PP: "p"})).partition_paths(data)


def test_dotdot_is_rejected_even_when_url_encoding() -> None:
    data = pa.table({"id": [1], "p": [".."]})
    with pytest.raises(UnsafePathError):
        SimpleKeyGenerator(conf({RK: "id", PP: "p", ENC: "true"})).partition_paths(data)
    slashes = pa.table({"id": [1], "p": ["../x"]})
    assert SimpleKeyGenerator(conf({RK: "id", PP: "p", ENC: "true"})).partition_paths(
        slashes
    ).to_pylist() == ["..%2Fx"]


# -- timestamp based ------------------------------------------------------------------------------


def ts_kg(**opts: str) -> TimestampBasedKeyGenerator:
    base = {RK: "id", PP: "ts"}
    base.update({TS + k.replace("__", "."): v for k, v in opts.items()})
    return TimestampBasedKeyGenerator(conf(base))


def test_timestamp_date_string_like_the_spec_sample() -> None:
    kg = ts_kg(input__dateformat="yyyy-MM-dd'T'HH:mm:ss.SSSZ", output__dateformat="yyyy/MM/dd/HH")
    data = pa.table({"id": [1, 2], "ts": ["2023-04-01T12:01:00.123Z", "2023-04-04T13:01:00.123Z"]})
    assert kg.partition_paths(data).to_pylist() == ["2023/04/01/12", "2023/04/04/13"]


def test_timestamp_numeric_types_and_zones() -> None:
    millis = 1680350460123  # 2023-04-01T12:01:00.123Z
    data = pa.table({"id": [1], "ts": [millis]})
    assert ts_kg(
        timestamp__type="EPOCHMILLISECONDS", output__dateformat="yyyy-MM-dd HH:mm:ss.SSS"
    ).partition_paths(data).to_pylist() == ["2023-04-01 12:01:00.123"]
    secs = pa.table({"id": [1], "ts": [millis // 1000]})
    assert ts_kg(
        timestamp__type="UNIX_TIMESTAMP", output__dateformat="yyyyMMddHH", output__timezone="Asia/Kolkata"
    ).partition_paths(secs).to_pylist() == ["2023040117"]
    micros = pa.table({"id": [1], "ts": [millis * 1000]})
    assert ts_kg(
        timestamp__type="EPOCHMICROSECONDS", output__dateformat="yyyy/MM/dd", timezone="GMT-8"
    ).partition_paths(micros).to_pylist() == ["2023/04/01"]
    hours = pa.table({"id": [1], "ts": [24 * 365]})
    assert ts_kg(
        timestamp__type="SCALAR", timestamp__scalar__time__unit="hours", output__dateformat="yyyy-MM-dd"
    ).partition_paths(hours).to_pylist() == ["1971-01-01"]


def test_timestamp_input_timezone_and_several_input_formats() -> None:
    kg = ts_kg(
        input__dateformat="yyyy-MM-dd HH:mm:ss,yyyyMMdd",
        input__timezone="America/New_York",
        output__dateformat="yyyy-MM-dd-HH",
        output__timezone="UTC",
    )
    data = pa.table({"id": [1, 2], "ts": ["2023-04-01 22:00:00", "20230402"]})
    assert kg.partition_paths(data).to_pylist() == ["2023-04-02-02", "2023-04-02-04"]


def test_timestamp_nulls_take_the_epoch_default_and_hive_style() -> None:
    kg = ts_kg(timestamp__type="EPOCHMILLISECONDS", output__dateformat="yyyy/MM/dd")
    data = pa.table({"id": [1, 2], "ts": pa.array([None, 86_400_000], pa.int64())})
    assert kg.partition_paths(data).to_pylist() == ["1970/01/01", "1970/01/02"]
    hive = TimestampBasedKeyGenerator(
        conf(
            {
                RK: "id",
                PP: "ts",
                HIVE: "true",
                TS + "timestamp.type": "EPOCHMILLISECONDS",
                TS + "output.dateformat": "yyyy-MM-dd",
            }
        )
    )
    assert hive.partition_paths(data).to_pylist() == ["ts=1970-01-01", "ts=1970-01-02"]


def test_timestamp_arrow_timestamp_and_date_columns() -> None:
    kg = ts_kg(timestamp__type="EPOCHMILLISECONDS", output__dateformat="yyyy/MM/dd/HH")
    ts = pa.table({"id": [1], "ts": pa.array([dt.datetime(2023, 4, 1, 17, 1)], pa.timestamp("us", "UTC"))})
    assert kg.partition_paths(ts).to_pylist() == ["2023/04/01/17"]
    day = pa.table({"id": [1], "ts": [dt.date(2024, 2, 29)]})
    assert kg.partition_paths(day).to_pylist() == ["2024/02/29/00"]


def test_timestamp_unparseable_value_names_the_row() -> None:
    kg = ts_kg(input__dateformat="yyyy-MM-dd", output__dateformat="yyyy")
    with pytest.raises(Exception, match="row 1"):
        kg.partition_paths(pa.table({"id": [1, 2], "ts": ["2023-01-01", "nope"]}))


def test_timestamp_needs_an_output_format() -> None:
    with pytest.raises(ConfigError, match=r"output\.dateformat"):
        ts_kg(timestamp__type="UNIX_TIMESTAMP")


# -- custom ---------------------------------------------------------------------------------------


def test_custom_mixes_simple_and_timestamp_fields() -> None:
    kg = CustomKeyGenerator(
        conf(
            {
                RK: "id,name",
                PP: "region:simple,ts:TIMESTAMP",
                HIVE: "true",
                TS + "timestamp.type": "EPOCHMILLISECONDS",
                TS + "output.dateformat": "yyyyMMdd",
            }
        )
    )
    data = pa.table({"id": [1, 2], "name": ["A", "B"], "region": ["eu", None], "ts": [0, 86_400_000]})
    assert kg.record_keys(data).to_pylist() == ["id:1,name:A", "id:2,name:B"]
    assert kg.partition_paths(data).to_pylist() == [
        "region=eu/ts=19700101",
        "region=__HIVE_DEFAULT_PARTITION__/ts=19700102",
    ]


def test_custom_single_key_and_no_partition() -> None:
    kg = CustomKeyGenerator(conf({RK: "id"}))
    data = pa.table({"id": [5]})
    assert kg.record_keys(data).to_pylist() == ["5"]
    assert kg.partition_paths(data).to_pylist() == [""]


def test_custom_requires_typed_fields() -> None:
    with pytest.raises(ConfigError, match="region:simple"):
        CustomKeyGenerator(conf({RK: "id", PP: "region"}))
