"""Hudi's CDC JSON text, Java's way (``read.json_text``): numbers as Java 17's ``Double.toString``
and ``Float.toString`` print them, strings escaped as Avro's and Jackson's renderings do. The
expected texts were printed by Java 17 (OpenJDK 17.0.15) and by Apache Hudi 0.15's CDC query."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
from hudi_core.read.json_text import escaped, images_json, java_float, java_floats, rows_json

#: (value, Double.toString)
DOUBLES = [
    (1.0, "1.0"), (-0.0, "-0.0"), (0.0, "0.0"), (0.1, "0.1"), (0.001, "0.001"),
    (0.0009999999999999998, "9.999999999999998E-4"), (0.00015, "1.5E-4"), (-2.5e-05, "-2.5E-5"),
    (123.456, "123.456"), (9999999.0, "9999999.0"), (9999999.999999998, "9999999.999999998"),
    (10000000.0, "1.0E7"), (-12345678.9, "-1.23456789E7"), (1e21, "1.0E21"),
    (0.30000000000000004, "0.30000000000000004"), (1.7976931348623157e308, "1.7976931348623157E308"),
    (5e-324, "4.9E-324"), (9007199254740992.0, "9.007199254740992E15"),
    (9007199254740994.0, "9.007199254740994E15"),
    # integral values from 2^54: the exact integer, the digits below 53 bits rounded away
    (2.0**60, "1.15292150460684698E18"), (-(2.0**62), "-4.6116860184273879E18"),
    (1234567890123456789.0, "1.23456789012345677E18"), (1e16, "1.0E16"), (4.35e-10, "4.35E-10"),
]  # fmt: skip

#: (value, Float.toString)
FLOATS = [
    (1.0, "1.0"), (0.30000001192092896, "0.3"), (10000000.0, "1.0E7"), (0.0001500000071246177, "1.5E-4"),
    (12345679.0, "1.2345679E7"), (16777216.0, "1.6777216E7"), (16777218.0, "1.6777218E7"),
    (33554436.0, "3.3554436E7"), (1073741824.0, "1.07374182E9"), (-1099511627776.0, "-1.09951163E12"),
    (3.4028234663852886e38, "3.4028235E38"), (1.401298464324817e-45, "1.4E-45"), (123.45600128173828, "123.456"),
]  # fmt: skip


@pytest.mark.parametrize(("single", "cases"), [(False, DOUBLES), (True, FLOATS)])
def test_numbers_print_as_java_17_prints_them(single: bool, cases: list[tuple[float, str]]) -> None:
    t = pa.float32() if single else pa.float64()
    values = [v for v, _ in cases]
    expected = [text for _, text in cases]
    assert java_floats(pa.array(values, t)).to_pylist() == expected
    assert [java_float(v, single=single) for v in values] == expected
    # one by one, within a null and the values that are not finite (JSON strings, as Hudi's)
    mixed = pa.array([values[0], None, float("nan"), float("inf"), float("-inf")], t)
    assert java_floats(mixed).to_pylist() == [expected[0], None, '"NaN"', '"Infinity"', '"-Infinity"']


@pytest.mark.parametrize("single", [False, True])
def test_columns_and_single_values_print_alike(single: bool) -> None:
    """The column-wide printing and the one for values nested in lists agree on any bit pattern
    (Java's own output for 400k of them was compared once: equal but for the deviations the
    module names, from 2^63 to ~10^26 and subnormal)."""
    rng = np.random.default_rng(16)
    if single:
        x = rng.integers(0, 2**32, 20_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        x = rng.integers(0, 2**64, 20_000, dtype=np.uint64).view(np.float64)
    more = np.concatenate([rng.lognormal(0, 8, 5_000), np.round(rng.random(5_000) * 100, 2)])
    x = np.concatenate([x, more.astype(x.dtype)])
    column = java_floats(pa.array(x)).to_pylist()
    assert column == [java_float(float(v), single=single) for v in x]
    finite = np.isfinite(x)
    read_back = np.array([float(t) for t, f in zip(column, finite, strict=True) if f], x.dtype)
    assert (read_back == x[finite]).all()  # the text reads back as the value


def test_strings_escape_as_avro_and_jackson_do() -> None:
    """Avro's rendering (a CDC log's images) escapes U+007F-U+009F and U+2000-U+20FF besides the
    control characters; Jackson's (the rows Hudi reads from base files) only the latter; both
    write hex in upper case, as Hudi's CDC query answered for these values."""
    values = [
        "a/b",
        "€5",
        "x—y",
        "\x7f",
        "\x01",
        "\b\f",
        "é",
        "\u2028",
        "t\tn\n",
        "𝄞",
        'q"b\\',
        "\x1f",
        "\x9f",
        "\u3000",
    ]
    avro = ["a/b", "\\u20AC5", "x\\u2014y", "\\u007F", "\\u0001", "\\b\\f", "é", "\\u2028", "t\\tn\\n", "𝄞",
            'q\\"b\\\\', "\\u001F", "\\u009F", "\u3000"]  # fmt: skip
    jackson = ["a/b", "€5", "x—y", "\x7f", "\\u0001", "\\b\\f", "é", "\u2028", "t\\tn\\n", "𝄞", 'q\\"b\\\\', "\\u001F",
               "\x9f", "\u3000"]  # fmt: skip
    for one, avro_text, jackson_text in zip(values, avro, jackson, strict=True):
        assert escaped(pa.array([one]), avro=True).to_pylist() == [avro_text], one
        assert escaped(pa.array([one]), avro=False).to_pylist() == [jackson_text], one
    assert escaped(pa.array(values), avro=True).to_pylist() == avro
    assert escaped(pa.array(values, pa.large_string()).slice(2), avro=False).to_pylist() == jackson[2:]
    rows = pa.table({"s": values})
    assert [json.loads(j)["s"] for j in rows_json(rows).to_pylist()] == values
    assert [json.loads(j)["s"] for j in rows_json(rows, compact=True).to_pylist()] == values


def test_nested_values_print_their_floats_and_strings_as_java_does() -> None:
    t = pa.struct([("f", pa.float64()), ("l", pa.list_(pa.float32())), ("m", pa.map_(pa.string(), pa.float64())),
                   ("s", pa.string())])  # fmt: skip
    images = pa.array(
        [{"f": 1e7, "l": [0.3, None], "m": [("€", float("nan"))], "s": "x\u2014"}, None, {"f": None, "l": [], "m": [],
         "s": None}],
        t,
    )  # fmt: skip
    rows = pa.table({"n": pa.array([images[0].as_py(), None, images[2].as_py()], t)})
    assert rows_json(rows).to_pylist() == [
        '{"n": {"f": 1.0E7, "l": [0.3, null], "m": {"\\u20AC": "NaN"}, "s": "x\\u2014"}}',
        '{"n": null}',
        '{"n": {"f": null, "l": [], "m": {}, "s": null}}',
    ]
    assert images_json(images).to_pylist()[1] == "null"


def test_compact_rows_take_the_order_of_hudis_scala_hash_map() -> None:
    """Hudi 0.15 puts a row it reads from a base file into a Scala ``mutable.HashMap`` before
    Jackson writes it: the fields come in the map's order, as its CDC query answered for these
    tables (the map's growth past 12 and 24 entries: ``tests/interop/test_cdc.py``)."""
    from hudi_core.read.json_text import scala_hash_order

    meta = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
            "_hoodie_file_name")  # fmt: skip
    assert scala_hash_order((*meta, "id", "p", "ts", "v", "f")) == (
        "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name", "_hoodie_commit_seqno", "v", "p",
        "_hoodie_commit_time", "f", "ts", "id",
    )  # fmt: skip
    assert scala_hash_order((*meta, "id", "p", "ts", "v", "f", "s"))[4:6] == ("s", "v")
    rows = pa.table({"id": ["x", "y"], "p": [None, "q"], "ts": [1, 2]})
    assert rows_json(rows, compact=True).to_pylist() == ['{"ts":1,"id":"x"}', '{"p":"q","ts":2,"id":"y"}']
    assert rows_json(rows).to_pylist() == [
        '{"id": "x", "p": null, "ts": 1}',
        '{"id": "y", "p": "q", "ts": 2}',
    ]
