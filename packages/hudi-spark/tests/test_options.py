"""Option handling that needs no Spark: instant times in read options, operation names."""

from __future__ import annotations

from typing import Any

import pytest
from hudi_core.errors import ConfigError
from hudi_core.timeline import format_query_instant


@pytest.mark.parametrize(
    ("given", "instant"),
    [("20240418173213674", "20240418173213674"), ("2024-04-18 17:32:13.674", "20240418173213674"),
     ("20240418173213", "20240418173213000"), ("2024-04-18", "20240418000000000")],
)  # fmt: skip
def test_instant_times_in_hudis_formats(given: str, instant: str) -> None:
    assert format_query_instant(given, option="as.of.instant") == instant


@pytest.mark.parametrize("given", ["", "yesterday", "2024", "202404181732136741"])
def test_a_bad_instant_time_names_the_option(given: str) -> None:
    with pytest.raises(ConfigError, match=r"as\.of\.instant="):
        format_query_instant(given, option="as.of.instant")


def test_an_unknown_operation_is_refused_before_any_work() -> None:
    import hudi_spark

    df: Any = None  # never looked at: the operation is checked first
    with pytest.raises(ConfigError, match="'merge' is not one of upsert, insert, bulk_insert"):
        hudi_spark.write(df, "/nowhere", operation="merge")
