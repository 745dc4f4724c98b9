"""Write benchmark: bulk_insert N trips-like rows (10 columns, 5 partitions), then 5 upserts of
N/10 rows (half updates) into COW and MOR, for each log block format and index type.

Prints seconds, rows/s, peak RSS and ratios to floors measured in the same run:
bulk_insert vs ``pyarrow.parquet.write_to_dataset`` (target <= 1.5x), MOR avro+BUCKET upsert vs a
plain fastavro write of the upsert rows (<= 1.5x), MOR parquet+BUCKET upsert vs a plain parquet
write (<= 3x).  ``python benchmarks/write_bench.py --rows 100000``
"""

from __future__ import annotations

import argparse
import io
import resource
import shutil
import tempfile
import time
from collections.abc import Callable

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_core.schema.avro_schema import arrow_to_avro
from hudi_core.table.hudi_table import HudiTable

CITIES = ["san_francisco", "sao_paulo", "chennai", "new_york", "berlin"]


def trips(n: int, start: int, ts: int, rng: np.random.Generator) -> pa.Table:
    ids = np.arange(start, start + n)
    return pa.table({
        "uuid": pa.array([f"trip-{i:09d}" for i in ids]),
        "ts": pa.array(np.full(n, ts, dtype=np.int64)),
        "rider": pa.array([f"rider-{i % 1000:03d}" for i in ids]),
        "driver": pa.array([f"driver-{i % 500:03d}" for i in ids]),
        "begin_lat": rng.random(n), "begin_lon": rng.random(n),
        "end_lat": rng.random(n), "end_lon": rng.random(n),
        "fare": rng.random(n) * 100,
        "city": pa.array([CITIES[i % 5] for i in ids]),
    })  # fmt: skip


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--upserts", type=int, default=5)
    args = ap.parse_args()
    n, m = args.rows, max(2, args.rows // 10)
    rng = np.random.default_rng(7)
    base_data = trips(n, 0, 1, rng)
    work = tempfile.mkdtemp(prefix="hudi-write-bench-")
    try:
        floor_bulk = timed(lambda: pq.write_to_dataset(base_data, f"{work}/floor", partition_cols=["city"],
                                                       compression="gzip"))  # fmt: skip
        ups = [pa.concat_tables([trips(m // 2, k * 7919 % max(1, n - m), 2 + k, rng),
                                 trips(m - m // 2, n + k * m, 2 + k, rng)]) for k in range(args.upserts)]  # fmt: skip
        avro_schema = arrow_to_avro(ups[0].schema, "trips")
        rows = ups[0].to_pylist()
        floor_avro = timed(lambda: fastavro.writer(io.BytesIO(), fastavro.parse_schema(avro_schema), rows))
        floor_parquet = timed(lambda: pq.write_table(ups[0], io.BytesIO(), compression="gzip"))
        print(f"floors: write_to_dataset {floor_bulk:.2f}s, fastavro {floor_avro:.3f}s, parquet {floor_parquet:.3f}s")
        print(f"{'case':44} {'bulk s':>7} {'rows/s':>9} {'x floor':>7} {'upsert s':>9} {'x floor':>7} {'RSS MB':>7}")
        for ttype in ("COPY_ON_WRITE", "MERGE_ON_READ"):
            for fmt in (("avro", "parquet") if ttype == "MERGE_ON_READ" else ("-",)):
                for index in ("BUCKET", "SIMPLE"):
                    path = f"{work}/{ttype}-{fmt}-{index}"
                    opts = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "4",
                            "hoodie.logfile.data.block.format": "avro" if fmt == "-" else fmt}  # fmt: skip
                    t = HudiTable.create(path, name="trips", table_type=ttype, record_key_fields="uuid",
                                         partition_fields="city", ordering_field="ts", options=opts)  # fmt: skip
                    bulk = timed(lambda: t.bulk_insert(base_data))
                    per = [timed(lambda u=u: t.upsert(u)) for u in ups]
                    up = sum(per) / len(per)
                    floor = floor_avro if fmt == "avro" else floor_parquet
                    name = f"{ttype} {fmt} {index}"
                    print(f"{name:44} {bulk:7.2f} {n / bulk:9.0f} {bulk / floor_bulk:7.2f} {up:9.3f} "
                          f"{up / floor:7.2f} {rss_mb():7.0f}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
