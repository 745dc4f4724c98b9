"""Instant times given by users: time travel (Hudi's query forms) and incremental bounds."""

from __future__ import annotations

import pytest
from hudi_core.errors import ConfigError
from hudi_core.timeline import format_query_instant, format_range_instant


@pytest.mark.parametrize(
    ("given", "instant"),
    [("20240418172802262", "20240418172802262"), ("20240418172802", "20240418172802000"),
     ("2024-04-18 17:28:02.262", "20240418172802262"), ("2024-04-18 17:28:02", "20240418172802999"),
     ("2024-04-18", "20240418000000000"), (" 2024-04-18 ", "20240418000000000")],
)  # fmt: skip
def test_query_instant_forms(given: str, instant: str) -> None:
    assert format_query_instant(given, option="as.of.instant") == instant


@pytest.mark.parametrize(
    ("given", "why"),
    [("2024-13-45", "month must be in 1..12"), ("2023-02-29", "day is out of range"),
     ("20240418256000000", "hour must be in 0..23"), ("202404181728", ""), ("2024-04-18 17:28", ""),
     ("2024-04-18 17:28:02.1", ""), ("2024/04/18", ""), ("", "")],
)  # fmt: skip
def test_other_query_instants_are_refused_naming_the_option_and_the_forms(given: str, why: str) -> None:
    with pytest.raises(ConfigError) as err:
        format_query_instant(given, option="as.of.instant")
    msg = str(err.value)
    assert msg.startswith(f"as.of.instant={given!r} is not an instant time")
    assert why in msg and "'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'" in msg


@pytest.mark.parametrize(
    ("given", "bound"),
    [("000", "000"), ("0", "0"), ("20240418", "20240418"), ("20240418172802", "20240418172802"),
     ("20240418172802262", "20240418172802262"), ("2024-04-18 17:28:02.262", "20240418172802262")],
)  # fmt: skip
def test_incremental_bounds_keep_digits_as_hudi_compares_them(given: str, bound: str) -> None:
    assert format_range_instant(given, option="start") == bound


@pytest.mark.parametrize("given", ["yesterday", "202404181728022620", "2024-13-01"])
def test_bad_incremental_bounds_name_the_option(given: str) -> None:
    with pytest.raises(ConfigError, match=r"^start='.*' is not an instant time"):
        format_range_instant(given, option="start")
