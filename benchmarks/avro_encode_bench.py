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


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    table = trips(n)
    user = table.drop_columns([c for c in table.column_names if c.startswith("_hoodie_")])
    schema = add_meta_fields(arrow_to_avro(user.schema, "trips"))
    rows = table.to_pylist()
    parsed = fastavro.parse_schema(schema)

    def vectorised() -> None:
        encode_avro_data_block(table, schema)

    def plain_fastavro() -> None:
        fastavro.writer(io.BytesIO(), parsed, rows, codec="null")

    t_vec = best_of(vectorised)
    t_fa = best_of(plain_fastavro)
    print(f"rows: {n}")
    print(f"vectorised encode_avro_data_block: {t_vec * 1000:8.1f} ms")
    print(f"fastavro.writer (rows prebuilt):    {t_fa * 1000:8.1f} ms")
    print(f"ratio vectorised / fastavro:        {t_vec / t_fa:8.2f}  (target <= 1.5)")

    block = encode_avro_data_block(table, schema)
    container = io.BytesIO()
    fastavro.writer(container, parsed, rows, codec="null")
    container_bytes = container.getvalue()

    def decode_block() -> None:
        decode_avro_data_block(block, json.dumps(schema))

    def bounds() -> None:
        record_bounds(block)

    def plain_reader() -> None:
        list(fastavro.reader(io.BytesIO(container_bytes)))

    t_dec = best_of(decode_block)
    t_bounds = best_of(bounds)
    t_rd = best_of(plain_reader)
    print(f"decode_avro_data_block:             {t_dec * 1000:8.1f} ms")
    print(f"  of which record_bounds:           {t_bounds * 1000:8.1f} ms")
    print(f"fastavro.reader (to rows):          {t_rd * 1000:8.1f} ms")
    print(f"ratio decode / fastavro:            {t_dec / t_rd:8.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
