"""Hudi's CDC JSON text, Java's way (``read.json_text``): numbers as Java 17's ``Double.toString``
and ``Float.toString`` print them, strings escaped as Avro's and Jackson's renderings do, a
compact row's fields in Hudi's hash map order. The expected texts were printed by Apache Hudi
0.15's CDC query."""

from __future__ import annotations

import json

import pyarrow as pa
from hudi_core.read.json_text import escaped, images_json, rows_json


def test_numbers_are_javas_and_the_words_strings() -> None:
    """Doubles and floats as Java 17 prints them (``hudi_core.java_text``, held to Java's own
    output in ``tests/schema/test_promotion.py``), NaN and the infinities as JSON strings, as
    Hudi's CDC query answers them."""
    rows = pa.table({
        "d": pa.array([1e7, 2.0**60, float("nan"), None], pa.float64()),
        "f": pa.array([1.5e-4, 2.0**30, float("-inf"), 0.5], pa.float32()),
    })  # fmt: skip
    assert rows_json(rows).to_pylist() == [
        '{"d": 1.0E7, "f": 1.5E-4}', '{"d": 1.15292150460684698E18, "f": 1.07374182E9}',
        '{"d": "NaN", "f": "-Infinity"}', '{"d": null, "f": 0.5}',
    ]  # fmt: skip


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
