"""Arrow <-> Avro binary: the vectorised encoder against a plain ``fastavro.writer`` of the same
rows, and the block decoder against ``fastavro.reader`` of the same rows (to Python rows).

Run: ``.venv/bin/python benchmarks/avro_encode_bench.py [rows]``. Prints timings and ratios
(targets: vectorised <= 1.5x fastavro). A script, not a test: timings vary by machine.
"""

from __future__ import annotations

import io
import json
import sys
import time
import uuid

import fastavro
import numpy as np
import pyarrow as pa
from hudi_core.log.blocks import decode_avro_data_block, encode_avro_data_block, record_bounds
from hudi_core.schema.avro_schema import add_meta_fields, arrow_to_avro


def trips(n: int) -> pa.Table:
    rng = np.random.default_rng(7)
    uuids = [str(uuid.UUID(int=int(x))) for x in rng.integers(0, 2**63, n)]
    cities = np.array(["san_francisco", "sao_paulo", "chennai"])[rng.integers(0, 3, n)]
    instant = "20250331030645735"
    data = {
        "_hoodie_commit_time": pa.array([instant] * n),
        "_hoodie_commit_seqno": pa.array([f"{instant}_0_{i}" for i in range(n)]),
        "_hoodie_record_key": pa.array(uuids),
        "_hoodie_partition_path": pa.array([f"city={c}" for c in cities]),
        "_hoodie_file_name": pa.array(["d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"] * n),
        "ts": pa.array(rng.integers(1_695_000_000_000, 1_696_000_000_000, n)),
        "uuid": pa.array(uuids),
        "rider": pa.array([f"rider-{chr(65 + i % 26)}" for i in range(n)]),
        "driver": pa.array([f"driver-{chr(65 + i % 26)}" for i in range(n)]),
        "fare": pa.array(rng.random(n) * 100),
        "city": pa.array(cities),
    }
    return pa.table(data)


def best_of(fn: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def nested(n: int) -> pa.Table:
    """The trips columns plus a list, a struct and a map column (the nested decoder's path)."""
    base = trips(n)
    point = pa.struct([("lat", pa.float64()), ("tag", pa.string())])
    extra = {
        "tags": pa.array([["a", "b", "c"][: i % 4] for i in range(n)], pa.list_(pa.string())),
        "begin": pa.array([{"lat": i / n, "tag": "s"} for i in range(n)], point),
        "props": pa.array([[("k", i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
    }
    for name, col in extra.items():
        base = base.append_column(name, col)
    return base


def compare(what: str, ours: float, theirs: float, their_label: str) -> None:
    print(f"{what + ':':<36}{ours * 1000:8.1f} ms")
    print(f"{their_label + ':':<36}{theirs * 1000:8.1f} ms")
    print(f"{'ratio ours / fastavro:':<36}{ours / theirs:8.2f}  (target <= 1.5)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print(f"rows: {n}")
    for label, table in (("flat", trips(n)), ("nested", nested(n))):
        user = table.drop_columns([c for c in table.column_names if c.startswith("_hoodie_")])
        schema = add_meta_fields(arrow_to_avro(user.schema, "trips"))
        schema_json = json.dumps(schema)
        rows = table.to_pylist()
        for row in rows:  # fastavro wants maps as dicts; Arrow gives (key, value) pairs
            if row.get("props") is not None:
                row["props"] = dict(row["props"])
        parsed = fastavro.parse_schema(schema)
        block = encode_avro_data_block(table, schema)
        container = io.BytesIO()
        fastavro.writer(container, parsed, rows, codec="null")
        container_bytes = container.getvalue()

        def encode() -> None:
            encode_avro_data_block(table, schema)  # noqa: B023 - called within the iteration

        def fastavro_write() -> None:
            fastavro.writer(io.BytesIO(), parsed, rows, codec="null")  # noqa: B023

        def decode() -> None:
            decode_avro_data_block(block, schema_json)  # noqa: B023

        def fastavro_read() -> None:
            list(fastavro.reader(io.BytesIO(container_bytes)))  # noqa: B023

        print(f"-- {label} schema")
        compare(
            "encode_avro_data_block",
            best_of(encode),
            best_of(fastavro_write),
            "fastavro.writer (rows prebuilt)",
        )
        compare(
            "decode_avro_data_block", best_of(decode), best_of(fastavro_read), "fastavro.reader (to rows)"
        )
        print(f"{'  of which record_bounds:':<36}{best_of(lambda: record_bounds(block)) * 1000:8.1f} ms")  # noqa: B023


if __name__ == "__main__":
    main()
