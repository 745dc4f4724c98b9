"""Executors benchmark (seed 5.2.2): SIMPLE vs BOUNDED_IN_MEMORY vs DISRUPTOR.

1. The insert phase of the write benchmark: ``HudiTable.insert`` of N trips-like rows (10
   columns, 5 partitions) into a fresh COPY_ON_WRITE table per run, ``hoodie.write.executor.type``
   set on the table, on local disk and on the moto S3 test server (127.0.0.1, ``s3://`` table
   through hudi-storage-s3). Prints rows/s and the ratio to SIMPLE measured in the same run.
2. (secondary) The executors alone: trips-like Arrow batches built by a producer that does real
   work, pushed into a consumer that writes parquet per batch; then the peak RSS of a fresh
   process per executor with a slow consumer, to show the back-pressure bound.

    .venv/bin/python benchmarks/executor_bench.py                      # 1M rows local, 200k on S3
    .venv/bin/python benchmarks/executor_bench.py --rows 200000 --s3-rows 100000 --skip-plain
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from hudi_core.executor import Producers, executor_for

PARTITIONS = pa.array(
    [
        "americas/brazil/sao_paulo",
        "americas/united_states/san_francisco",
        "asia/india/chennai",
        "europe/france/paris",
        "asia/japan/tokyo",
    ]
)


@dataclass(frozen=True)
class Setup:
    label: str
    options: dict[str, str]
    producers: int = 1


SETUPS: tuple[Setup, ...] = (
    Setup("SIMPLE", {"hoodie.write.executor.type": "SIMPLE"}),
    Setup("BOUNDED_IN_MEMORY", {"hoodie.write.executor.type": "BOUNDED_IN_MEMORY"}),
    Setup("BOUNDED_IN_MEMORY x2 producers", {"hoodie.write.executor.type": "BOUNDED_IN_MEMORY"}, 2),
    *(
        Setup(
            f"DISRUPTOR {w}",
            {
                "hoodie.write.executor.type": "DISRUPTOR",
                # Items are ~1.5 MB batches, not records: 4 slots hold about what 4 MiB does.
                "hoodie.write.executor.disruptor.buffer.size": "4",
                "hoodie.write.executor.disruptor.wait.strategy": w,
            },
        )
        for w in ("BLOCKING_WAIT", "SLEEPING_WAIT", "YIELDING_WAIT", "BUSY_SPIN_WAIT")
    ),
)

MEMORY_SETUPS: tuple[Setup, ...] = (
    SETUPS[0],
    SETUPS[1],
    Setup(
        "BOUNDED_IN_MEMORY limit 1 GiB (no back-pressure)",
        {"hoodie.write.executor.type": "BOUNDED_IN_MEMORY", "hoodie.write.buffer.limit.bytes": str(1 << 30)},
    ),
    SETUPS[3],
    Setup(
        "DISRUPTOR 1024 slots (default)",
        {"hoodie.write.executor.type": "DISRUPTOR", "hoodie.write.executor.disruptor.buffer.size": "1024"},
    ),
)


def trip_batches(
    first: int, count: int, rows: int, seed: int, wait_s: float = 0.0
) -> Iterator[pa.RecordBatch]:
    """``count`` batches of ``rows`` trips, built column by column (the producer's real work),
    each after ``wait_s`` of simulated source latency (a Kafka poll, an object-store read)."""
    rng = np.random.default_rng(seed)
    for b in range(first, first + count):
        if wait_s:
            time.sleep(wait_s)
        ids = np.arange(b * rows, (b + 1) * rows, dtype=np.int64)
        id_str = pc.cast(pa.array(ids), pa.string())
        yield pa.record_batch(
            {
                "uuid": pc.binary_join_element_wise("trip-", id_str, ""),
                "ts": pa.array(1_700_000_000_000 + ids * 37),
                "rider": pc.binary_join_element_wise("rider-", pc.cast(pa.array(ids % 997), pa.string()), ""),
                "driver": pc.binary_join_element_wise(
                    "driver-", pc.cast(pa.array(ids % 211), pa.string()), ""
                ),
                "begin_lat": rng.random(rows),
                "begin_lon": rng.random(rows),
                "end_lat": rng.random(rows),
                "end_lon": rng.random(rows),
                "fare": pc.round(pa.array(rng.random(rows) * 100.0), 2),
                "partitionpath": PARTITIONS.take(pa.array(ids % len(PARTITIONS))),
            }
        )


# -- 1. the insert phase through HudiTable.insert --------------------------------------------------

TABLE_SETUPS: tuple[Setup, ...] = (
    Setup("SIMPLE", {"hoodie.write.executor.type": "SIMPLE"}),
    Setup("BOUNDED_IN_MEMORY", {"hoodie.write.executor.type": "BOUNDED_IN_MEMORY"}),
    Setup("DISRUPTOR BLOCKING_WAIT", {"hoodie.write.executor.type": "DISRUPTOR"}),
    Setup(
        "DISRUPTOR BUSY_SPIN_WAIT",
        {
            "hoodie.write.executor.type": "DISRUPTOR",
            "hoodie.write.executor.disruptor.wait.strategy": "BUSY_SPIN_WAIT",
        },
    ),
)


def rotated(setups: tuple[Setup, ...], r: int) -> list[tuple[int, Setup]]:
    """Round ``r`` starts at a different setup, so no executor always runs first (right after the
    previous round's files are flushed and deleted)."""
    k = r % len(setups)
    return list(enumerate(setups))[k:] + list(enumerate(setups))[:k]


def trips_table(rows: int, batch_rows: int) -> pa.Table:
    """``rows`` trips (10 columns, 5 partitions), built before the clock starts."""
    batches = list(trip_batches(0, -(-rows // batch_rows), batch_rows, seed=7))
    return pa.Table.from_batches(batches).slice(0, rows).combine_chunks()


def insert_once(base_uri: str, setup: Setup, data: pa.Table, options: dict[str, str]) -> float:
    """Seconds for ``HudiTable.insert(data)`` into a fresh table at ``base_uri``."""
    from hudi_core import HudiTable

    table = HudiTable.create(
        base_uri, name="trips", table_type="COPY_ON_WRITE", record_key_fields="uuid",
        partition_fields="partitionpath", ordering_field="ts", options={**options, **setup.options},
    )  # fmt: skip
    gc.collect()
    start = time.perf_counter()
    result = table.insert(data)
    elapsed = time.perf_counter() - start
    assert result.inserted == data.num_rows, (setup.label, result.inserted)
    return elapsed


def report(title: str, rows: int, results: dict[str, float]) -> None:
    print(title)
    base = rows / results["SIMPLE"]
    for label, t in results.items():
        rate = rows / t
        print(f"  {label:<34} {rate:>12,.0f} rows/s   x{rate / base:.2f} vs SIMPLE   ({t:.2f} s)")


def table_throughput_local(args: argparse.Namespace) -> None:
    data = trips_table(args.rows, args.batch_rows)
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):  # interleaved, so load drift hits every executor alike
            for i, setup in rotated(TABLE_SETUPS, r):
                root = Path(tmp) / f"t{r}-{i}"
                t = insert_once(str(root), setup, data, {})
                results[setup.label] = min(t, results.get(setup.label, float("inf")))
                shutil.rmtree(root)
    report(f"insert phase, local disk: HudiTable.insert of {args.rows:,} rows (10 columns, 5 partitions, "
           f"COPY_ON_WRITE, gzip), best of {args.repeat}, {os.cpu_count()} cores", args.rows, results)  # fmt: skip


def table_throughput_s3(args: argparse.Namespace) -> None:
    from hudi_core.testing.s3 import FAKE_AWS_ENV, MotoS3Server

    os.environ.update(FAKE_AWS_ENV)
    rows = args.s3_rows
    data = trips_table(rows, args.batch_rows)
    results: dict[str, float] = {}
    with MotoS3Server() as server:
        for r in range(args.repeat):
            for i, setup in rotated(TABLE_SETUPS, r):
                server.reset()  # moto keeps objects in memory: one table at a time
                bucket = server.create_bucket("bench")
                t = insert_once(f"{bucket.uri}/t{r}-{i}", setup, data, bucket.options)
                results[setup.label] = min(t, results.get(setup.label, float("inf")))
    note = (f" (fewer than the {args.rows:,} local rows to keep the run short: moto serves from one "
            "in-process server and holds every object in memory)") if rows < args.rows else ""  # fmt: skip
    report(f"insert phase, S3 test server (moto, 127.0.0.1, s3:// via hudi-storage-s3): {rows:,} rows{note}, "
           f"best of {args.repeat}", rows, results)  # fmt: skip


# -- 2. the executors alone, into a plain parquet consumer -----------------------------------------


def producer_for(setup: Setup, batches: int, rows: int, wait_s: float) -> Any:
    if setup.producers == 1:
        return trip_batches(0, batches, rows, seed=1, wait_s=wait_s)
    share = -(-batches // setup.producers)
    return Producers(
        trip_batches(i * share, min(share, batches - i * share), rows, seed=1 + i, wait_s=wait_s)
        for i in range(setup.producers)
    )


def stamp(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The transform: what Hudi's insert path adds before the handle (a commit-time column)."""
    return batch.append_column(
        "_hoodie_commit_time", pa.repeat(pa.scalar("20240101000000000"), batch.num_rows)
    )


class ParquetConsumer:
    """Writes every batch to one parquet file; ``finish`` returns the rows written."""

    def __init__(self, path: Path, compression: str, delay_s: float = 0.0) -> None:
        self.path, self.compression, self.delay_s = path, compression, delay_s
        self.writer: pq.ParquetWriter | None = None
        self.rows = 0

    def consume(self, batch: pa.RecordBatch) -> None:
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, batch.schema, compression=self.compression)
        if self.delay_s:
            time.sleep(self.delay_s)  # a slow sink (network storage)
        self.writer.write_batch(batch)
        self.rows += batch.num_rows

    def finish(self) -> int:
        if self.writer is not None:
            self.writer.close()
        return self.rows


def make_consumer(path: Path, compression: str, delay_s: float = 0.0) -> ParquetConsumer:
    # The real insert handle is measured by ``table_throughput``; this one writes per batch.
    return ParquetConsumer(path, compression, delay_s)


def run_once(
    setup: Setup, batches: int, rows: int, out: Path, compression: str, *, source_s: float, sink_s: float
) -> float:
    consumer = make_consumer(out / f"{abs(hash(setup.label))}.parquet", compression, sink_s)
    producer = producer_for(setup, batches, rows, source_s)
    start = time.perf_counter()
    written = executor_for(setup.options).execute(producer, stamp, consumer)
    elapsed = time.perf_counter() - start
    assert written == batches * rows, (setup.label, written)
    return elapsed


def throughput(args: argparse.Namespace, *, wait_ms: float) -> None:
    batches = args.rows // args.batch_rows
    total = batches * args.batch_rows
    waits = f"source and sink wait {wait_ms:g} ms per batch" if wait_ms else "no I/O waits"
    print(f"throughput: {total:,} rows in {batches} batches of {args.batch_rows:,}, parquet {args.compression}, "
          f"{waits}, best of {args.repeat}, {os.cpu_count()} cores")  # fmt: skip
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):  # interleave repeats so load drift hits every setup alike
            for setup in SETUPS:
                gc.collect()
                t = run_once(setup, batches, args.batch_rows, Path(tmp), args.compression,
                             source_s=wait_ms / 1000, sink_s=wait_ms / 1000)  # fmt: skip
                results[setup.label] = min(t, results.get(setup.label, float("inf")))
    base = total / results["SIMPLE"]
    for label, t in results.items():
        rate = total / t
        print(f"  {label:<34} {rate:>12,.0f} rows/s   x{rate / base:.2f} vs SIMPLE")


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_child(args: argparse.Namespace) -> None:
    """In a fresh process: one slow-consumer run of ``--child``; prints the peak growth of RSS
    and of Arrow-allocated bytes over the idle process, sampled every millisecond."""
    setup = {s.label: s for s in MEMORY_SETUPS}[args.setup]
    batches = args.memory_rows // args.batch_rows
    executor_for(setup.options)  # load plugins before the baseline
    gc.collect()
    base_rss, base_arrow = _rss_bytes(), pa.total_allocated_bytes()
    peak = {"rss": base_rss, "arrow": base_arrow}
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.001):
            peak["rss"] = max(peak["rss"], _rss_bytes())
            peak["arrow"] = max(peak["arrow"], pa.total_allocated_bytes())

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_once(setup, batches, args.batch_rows, Path(tmp), args.compression,
                     source_s=0.0, sink_s=args.delay_ms / 1000)  # fmt: skip
    finally:
        stop.set()
        sampler.join()
    print(peak["rss"] - base_rss, peak["arrow"] - base_arrow)


def memory(args: argparse.Namespace) -> None:
    batches = args.memory_rows // args.batch_rows
    batch_mb = stamp(next(trip_batches(0, 1, args.batch_rows, 1))).nbytes / 2**20
    print(f"\nmemory: slow consumer ({args.delay_ms:g} ms per batch), {batches} batches of {batch_mb:.2f} MiB, "
          "peak growth over the idle process, a fresh process per executor")  # fmt: skip
    for setup in MEMORY_SETUPS:
        cmd = [sys.executable, __file__, "--child", setup.label, "--memory-rows", str(args.memory_rows),
               "--batch-rows", str(args.batch_rows), "--delay-ms", str(args.delay_ms),
               "--compression", args.compression]  # fmt: skip
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        rss, arrow = (int(v) / 2**20 for v in out.split()[-2:])
        print(f"  {setup.label:<50} RSS {rss:+7.1f} MiB   Arrow {arrow:+7.1f} MiB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1_000_000, help="rows per run (local disk; plain consumer)")
    p.add_argument("--s3-rows", type=int, default=200_000, help="rows per run on the S3 test server")
    p.add_argument("--batch-rows", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--compression", default="gzip", help="parquet codec (Hudi's default is gzip)")
    p.add_argument("--memory-rows", type=int, default=400_000)
    p.add_argument("--delay-ms", type=float, default=20.0)
    p.add_argument("--io-wait-ms", type=float, default=10.0,
                   help="plain consumer, second run: simulated source and sink latency per batch (0: skip)")  # fmt: skip
    p.add_argument("--skip-local", action="store_true", help="skip the insert phase on local disk")
    p.add_argument("--skip-s3", action="store_true", help="skip the insert phase on the S3 test server")
    p.add_argument("--skip-plain", action="store_true", help="skip the plain-consumer section")
    p.add_argument("--skip-memory", action="store_true")
    p.add_argument("--child", dest="setup", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.setup:
        peak_rss_child(args)
        return
    if not args.skip_local:
        table_throughput_local(args)
        print()
    if not args.skip_s3:
        table_throughput_s3(args)
        print()
    if not args.skip_plain:
        print("executors alone (secondary): batches into a parquet-writing consumer, no table")
        throughput(args, wait_ms=0.0)
        if args.io_wait_ms:
            print()
            throughput(args, wait_ms=args.io_wait_ms)
    if not args.skip_memory:
        memory(args)


if __name__ == "__main__":
    main()
