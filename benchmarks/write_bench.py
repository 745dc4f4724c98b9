"""Write benchmark: bulk_insert N trips-like rows (10 columns, 5 partitions), then 5 upserts of
N/10 rows (half updates) into COW and MOR, for each log block format and index type.

Prints seconds, rows/s, peak RSS and ratios to floors measured in the same run (floors best of
3, our bulk_insert best of 2, upserts once):
bulk_insert vs ``pyarrow.parquet.write_to_dataset`` (target <= 1.5x; gzip level 6 on both sides,
the Arrow-default-level floor printed too), MOR avro+BUCKET upsert vs a
plain fastavro write of the upsert rows (<= 1.5x), MOR parquet+BUCKET upsert vs a plain parquet
write (<= 3x).  ``python benchmarks/write_bench.py --rows 100000``

``--stream-gb 2`` instead streams 2 GB of generated batches as one upsert (``--stream-type``,
``--stream-index``, ``--stream-op``, ``--option k=v``) and prints peak RSS next to the write
buffer's limits.
"""

from __future__ import annotations

import argparse
import io
import resource
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hudi_core import HudiTable
from hudi_core.schema.avro_schema import arrow_to_avro

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


def timed_cpu(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, process CPU seconds): CPU time is steadier on a shared, loaded machine."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def trips_fast(start: int, n: int, ts: int, rng: np.random.Generator) -> pa.RecordBatch:
    """Like :func:`trips`, strings built with Arrow compute (a stream generates GBs of them)."""
    ids = pa.array(np.arange(start, start + n, dtype=np.int64))
    num = pc.utf8_lpad(pc.cast(ids, pa.string()), 9, "0")
    return pa.RecordBatch.from_pydict({
        "uuid": pc.binary_join_element_wise("trip-", num, ""),
        "ts": pa.array(np.full(n, ts, dtype=np.int64)),
        "rider": pc.binary_join_element_wise("rider-", pc.cast(pc.divide(ids, 1000), pa.string()), ""),
        "driver": pc.binary_join_element_wise("driver-", pc.cast(pc.divide(ids, 500), pa.string()), ""),
        "begin_lat": rng.random(n), "begin_lon": rng.random(n),
        "end_lat": rng.random(n), "end_lon": rng.random(n),
        "fare": rng.random(n) * 100,
        "city": pc.take(pa.array(CITIES), pa.array(np.arange(start, start + n) % 5)),
    })  # fmt: skip


def stream_bench(gb: float, table_type: str, index: str, operation: str, opts: dict[str, str]) -> None:
    """Write ``gb`` GB (Arrow bytes) of generated batches as one streamed write; peak RSS vs limits."""
    from hudi_core.config.property import HoodieConfig
    from hudi_core.config.write import WriteBufferOptions

    rng = np.random.default_rng(7)
    probe = trips_fast(0, 50_000, 1, rng)
    per_batch = probe.nbytes
    batches = max(1, int(gb * 1e9 / per_batch))
    base_rss = rss_mb()

    def gen() -> Iterator[pa.RecordBatch]:
        for k in range(batches):
            yield trips_fast(k * 50_000, 50_000, 1, rng)

    work = tempfile.mkdtemp(prefix="hudi-stream-bench-")
    try:
        o = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "4", **opts}
        cfg = HoodieConfig(o)
        t = HudiTable.create(f"{work}/t", name="trips", table_type=table_type, record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=o)  # fmt: skip
        t0 = time.perf_counter()
        res = t.write(gen(), operation=operation) if hasattr(t, "write") else getattr(t, operation)(gen())
        secs = time.perf_counter() - t0
        limits = {p.key: int(cfg.get(p)) for p in (WriteBufferOptions.STREAM_CHUNK_MAX_BYTES,
                  WriteBufferOptions.BUCKET_MAX_BYTES, WriteBufferOptions.TOTAL_MAX_BYTES)}  # fmt: skip
        print(
            f"stream {operation} {table_type} {index}: {batches} batches x {per_batch / 1e6:.1f} MB = "
            f"{batches * per_batch / 1e9:.2f} GB logical, {batches * 50_000} rows in {secs:.1f}s "
            f"({batches * 50_000 / secs:.0f} rows/s), files {res.files_written}"
        )
        print("limits: " + ", ".join(f"{k}={v / 2**20:.0f} MB" for k, v in limits.items()))
        print(
            f"peak RSS {rss_mb():.0f} MB (before the write {base_rss:.0f} MB; Arrow pool "
            f"{pa.default_memory_pool().backend_name}, Arrow peak {pa.default_memory_pool().max_memory() / 2**20:.0f} MB)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--upserts", type=int, default=5)
    ap.add_argument(
        "--stream-gb",
        type=float,
        default=0.0,
        help="instead: stream this many GB of generated batches as one write; prints peak RSS",
    )
    ap.add_argument("--stream-type", default="MERGE_ON_READ")
    ap.add_argument("--stream-index", default="BUCKET")
    ap.add_argument("--stream-op", default="upsert")
    ap.add_argument("--option", action="append", default=[], help="k=v write option (stream mode)")
    ap.add_argument(
        "--arrow-pool",
        choices=("default", "jemalloc", "mimalloc", "system"),
        default="default",
        help="Arrow memory pool for the run (jemalloc with decay 0: freed pages go back at once)",
    )
    args = ap.parse_args()
    if args.arrow_pool != "default":
        pool = getattr(pa, f"{args.arrow_pool}_memory_pool")()
        pa.set_memory_pool(pool)
        if args.arrow_pool == "jemalloc":
            pa.jemalloc_set_decay_ms(0)
    if args.stream_gb > 0:
        opts = dict(o.split("=", 1) for o in args.option)
        stream_bench(args.stream_gb, args.stream_type, args.stream_index, args.stream_op, opts)
        return
    n, m = args.rows, max(2, args.rows // 10)
    rng = np.random.default_rng(7)
    base_data = trips(n, 0, 1, rng)
    work = tempfile.mkdtemp(prefix="hudi-write-bench-")
    try:
        # warm-up (imports, first-call costs of every code path timed below) on throwaway tables
        for k, (ttype, index) in enumerate(
            [(t, i) for t in ("COPY_ON_WRITE", "MERGE_ON_READ") for i in ("BUCKET", "SIMPLE")]
        ):
            w = HudiTable.create(f"{work}/warm{k}", name="trips", table_type=ttype, record_key_fields="uuid",
                                 partition_fields="city", ordering_field="ts",
                                 options={"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "4"})  # fmt: skip
            w.bulk_insert(base_data.slice(0, 20000))
            w.upsert(base_data.slice(10000, 20000))

        # floors: best of 3; gzip at Arrow's default level and at level 6 (what Hudi's parquet-mr
        # writer uses, and what our base files use): the ratios are to the level-6 floor
        def best(fn: Callable[[int], object]) -> tuple[float, float]:
            return min(timed_cpu(lambda i=i: fn(i)) for i in range(3))

        fb_default = best(lambda i: pq.write_to_dataset(base_data, f"{work}/floor-d{i}", partition_cols=["city"],
                                                        compression="gzip"))  # fmt: skip
        fb = best(lambda i: pq.write_to_dataset(base_data, f"{work}/floor{i}", partition_cols=["city"],
                                                compression="gzip", compression_level=6))  # fmt: skip
        ups = [pa.concat_tables([trips(m // 2, k * 7919 % max(1, n - m), 2 + k, rng),
                                 trips(m - m // 2, n + k * m, 2 + k, rng)]) for k in range(max(1, args.upserts))]  # fmt: skip
        avro_schema = arrow_to_avro(ups[0].schema, "trips")
        rows = ups[0].to_pylist()
        fa = best(lambda i: fastavro.writer(io.BytesIO(), fastavro.parse_schema(avro_schema), rows))
        fp_default = best(lambda i: pq.write_table(ups[0], io.BytesIO(), compression="gzip"))
        fp = best(lambda i: pq.write_table(ups[0], io.BytesIO(), compression="gzip", compression_level=6))
        print(
            f"floors (best of 3, wall/cpu s): write_to_dataset gzip-6 {fb[0]:.2f}/{fb[1]:.2f} (Arrow default "
            f"gzip {fb_default[0]:.2f}/{fb_default[1]:.2f}), fastavro {fa[0]:.3f}/{fa[1]:.3f}, parquet gzip-6 "
            f"{fp[0]:.3f}/{fp[1]:.3f} (default gzip {fp_default[0]:.3f}/{fp_default[1]:.3f})"
        )
        print("x floor = wall ratio (cpu ratio: our CPU seconds over both threads / the floor's)")
        print(
            f"{'case':30} {'bulk s':>7} {'rows/s':>9} {'x floor':>13} {'upsert s':>9} {'x floor':>13} {'RSS MB':>7}"
        )
        for ttype in ("COPY_ON_WRITE", "MERGE_ON_READ"):
            for fmt in ("avro", "parquet") if ttype == "MERGE_ON_READ" else ("-",):
                for index in ("BUCKET", "SIMPLE"):
                    path = f"{work}/{ttype}-{fmt}-{index}"
                    opts = {"hoodie.index.type": index, "hoodie.bucket.index.num.buckets": "4",
                            "hoodie.logfile.data.block.format": "avro" if fmt == "-" else fmt}  # fmt: skip
                    # bulk_insert best of 2 (into two new tables), as the floors are best of 3:
                    # the first write of a case pays the process's page faults for its buffers
                    runs = []
                    for attempt in (f"{path}-warm", path):
                        t = HudiTable.create(attempt, name="trips", table_type=ttype, record_key_fields="uuid",
                                             partition_fields="city", ordering_field="ts", options=opts)  # fmt: skip
                        runs.append(timed_cpu(lambda t=t: t.bulk_insert(base_data)))
                    shutil.rmtree(f"{path}-warm", ignore_errors=True)
                    bulk = min(runs)
                    per = [timed_cpu(lambda u=u, t=t: t.upsert(u)) for u in ups[: args.upserts]]
                    n_up = max(1, len(per))  # --upserts 0: bulk_insert only (upsert columns print 0)
                    up = (sum(p[0] for p in per) / n_up, sum(p[1] for p in per) / n_up)
                    floor = fa if fmt == "avro" else fp
                    name = f"{ttype} {fmt} {index}"
                    print(f"{name:30} {bulk[0]:7.2f} {n / bulk[0]:9.0f} {bulk[0] / fb[0]:6.2f} ({bulk[1] / fb[1]:4.2f}) "
                          f"{up[0]:9.3f} {up[0] / floor[0]:6.2f} ({up[1] / floor[1]:4.2f}) {rss_mb():7.0f}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
