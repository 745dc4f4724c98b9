"""What a partition's path tells of its rows' partition columns (``path_partition_values``), which
engines may use instead of the rows' own values (hudi_spark's literal partition columns)."""

from __future__ import annotations

import pytest
from hudi_core.read import path_partition_values
from hudi_core.table.config import TableConfig

SIMPLE = "org.apache.hudi.keygen.SimpleKeyGenerator"


def _config(fields: str, keygen: str | None = SIMPLE, **extra: str) -> TableConfig:
    props = {"hoodie.table.partition.fields": fields, **extra}
    if keygen:
        props["hoodie.table.keygenerator.class"] = keygen
    return TableConfig(props)


@pytest.mark.parametrize(
    ("config", "partition", "expected"),
    [
        (_config("city"), "berlin", {"city": "berlin"}),
        (_config("city", keygen=None), "berlin", {"city": "berlin"}),
        (
            _config("country,city", "org.apache.hudi.keygen.ComplexKeyGenerator"),
            "de/berlin",
            {"country": "de", "city": "berlin"},
        ),
        (
            _config("city", **{"hoodie.datasource.write.hive_style_partitioning": "true"}),
            "city=berlin",
            {"city": "berlin"},
        ),
        (
            _config("city", **{"hoodie.datasource.write.partitionpath.urlencode": "true"}),
            "s%C3%A3o%2Fpaulo",
            {"city": "são/paulo"},
        ),
        (_config("city:simple", "org.apache.hudi.keygen.CustomKeyGenerator"), "berlin", {"city": "berlin"}),
        (_config("a.b"), "x", {}),  # a nested field: not a top-level column
    ],
    ids=["simple", "no-keygen-recorded", "complex", "hive-style", "url-encoded", "custom", "nested"],
)
def test_paths_that_tell_the_values(config: TableConfig, partition: str, expected: dict[str, str]) -> None:
    assert path_partition_values(config, partition) == expected


@pytest.mark.parametrize(
    ("config", "partition"),
    [
        (_config("city"), "__HIVE_DEFAULT_PARTITION__"),  # rows whose value is null
        (_config("city"), "default"),  # older Hudi's partition of nulls
        (_config("dt", "org.apache.hudi.keygen.TimestampBasedKeyGenerator"), "2024/01/01"),
        (_config("dt:timestamp", "org.apache.hudi.keygen.CustomKeyGenerator"), "2024010100"),
        (_config("city", "com.example.LowerCaseKeyGenerator"), "berlin"),  # a user's own mapping
        (_config("date"), "2024/01/01"),  # a value holding "/" without URL encoding
        (_config(""), ""),  # not partitioned
    ],
    ids=["null", "old-null", "timestamp", "custom-timestamp", "user-keygen", "slashes", "unpartitioned"],
)
def test_paths_that_cannot_tell(config: TableConfig, partition: str) -> None:
    assert path_partition_values(config, partition) == {}
