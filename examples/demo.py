"""The main job (``make demo``): a change stream of taxi trips ingested with Spark into a
MERGE_ON_READ table on local disk, with asynchronous compaction.

Rounds of JSON files land in ``<output>/incoming``: inserts first, then updates with later event
times and deletes. After each new file the streamer (the engine behind ``hudi-py streamer``)
writes what is new as one deltacommit; every 3 deltacommits a compaction is scheduled and runs in
the background. At the end the demo prints the timeline, the file slices and a query.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path

CITIES = ["san_francisco", "sao_paulo", "chennai"]


def generate_round(
    out: Path, n: int, round_no: int, known: dict[str, dict], rng: random.Random
) -> dict[str, int]:
    """One file of changes: new trips, updates of known trips (later ts), deletes."""
    rows, counts = [], {"insert": 0, "update": 0, "delete": 0}
    base_ts = 1_700_000_000_000 + round_no * 3_600_000
    existing = sorted(known)
    for i in range(n):
        kind = (
            "insert"
            if not existing or round_no == 0
            else rng.choices(["insert", "update", "delete"], [5, 4, 1])[0]
        )
        if kind == "insert":
            uuid = f"trip-{round_no:03d}-{i:05d}"
            row = {"uuid": uuid, "ts": base_ts + i, "rider": f"rider-{rng.randint(1, 500)}",
                   "driver": f"driver-{rng.randint(1, 80)}", "fare": round(rng.uniform(5, 90), 2),
                   "city": rng.choice(CITIES), "_hoodie_is_deleted": False}  # fmt: skip
            known[uuid] = row
        else:
            uuid = rng.choice(existing)
            if uuid not in known:
                continue
            row = dict(known[uuid], ts=base_ts + i, fare=round(known[uuid]["fare"] * 1.1, 2))
            row["_hoodie_is_deleted"] = kind == "delete"
            if kind == "delete":
                known.pop(uuid)
            else:
                known[uuid] = row
        counts[kind] += 1
        rows.append(row)
    tmp = out / f".round-{round_no:03d}.json.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, out / f"round-{round_no:03d}.json")  # appear atomically to the source
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default="demo-output")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--rows", type=int, default=2000, help="changes per round")
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args(argv)

    import hudi_spark
    from hudi_core import HudiTable
    from hudi_spark.services import AsyncCompactor
    from hudi_spark.streamer import FileSource, Streamer

    out = Path(args.output).resolve()
    shutil.rmtree(out, ignore_errors=True)
    incoming, table_path = out / "incoming", str(out / "trips")
    incoming.mkdir(parents=True)
    options = {
        "hoodie.table.name": "trips",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
        # no small-file packing: inserts open new file groups, updates and deletes go to logs
        "hoodie.parquet.small.file.limit": "0",
    }
    started = time.monotonic()
    print(f"[demo] starting Spark ({args.master}) ...", flush=True)
    spark = hudi_spark.spark_session(args.master, app_name="hudi-py-demo")
    print(f"[demo] Spark ready in {time.monotonic() - started:.1f}s", flush=True)
    compactor = AsyncCompactor(spark, table_path, every=3, options=options)
    schema = "uuid string, ts long, rider string, driver string, fare double, city string, _hoodie_is_deleted boolean"
    streamer = Streamer(
        spark, table_path, FileSource(str(incoming), "json", schema=schema), options, "upsert", compactor
    )
    rng, known = random.Random(42), {}
    for r in range(args.rounds):
        counts = generate_round(incoming, args.rows, r, known, rng)
        t0 = time.monotonic()
        res = streamer.run_round(r)
        sched = (
            f"; compaction {res.compaction_scheduled} scheduled (runs in background)"
            if res.compaction_scheduled
            else ""
        )
        bar = "#" * (r + 1) + "-" * (args.rounds - r - 1)
        print(f"[demo] [{bar}] round {r + 1}/{args.rounds}: {counts} -> deltacommit {res.instant} "
              f"({res.rows} records, {time.monotonic() - t0:.1f}s){sched}", flush=True)  # fmt: skip
    print("[demo] waiting for the background compaction ...", flush=True)
    compactor.close()

    table = HudiTable.open(table_path)
    print("\n== timeline ==")
    for inst in table.timeline:
        print(f"  {inst.timestamp}  {inst.action:<12} {inst.state.name}")
    print("\n== latest file slices ==")
    for s in sorted(table.file_slices(), key=lambda s: (s.partition_path, s.file_id)):
        base = (
            f"base@{s.base_file.instant} ({s.base_file.size // 1024} KiB)" if s.base_file else "no base file"
        )
        print(f"  {s.partition_path:<14} file group {s.file_id[:8]}  {base}  log files: {len(s.log_files)}")
    df = spark.read.format("hudi").load(table_path)
    df.createOrReplaceTempView("trips")
    print("\n== SELECT city, count(*), round(avg(fare), 2) FROM trips GROUP BY city ==")
    for row in spark.sql(
        "SELECT city, count(*) AS trips, round(avg(fare), 2) AS avg_fare FROM trips GROUP BY city ORDER BY city"
    ).collect():
        print(f"  {row['city']:<14} {row['trips']:>6} {row['avg_fare']:>8}")
    total = df.count()
    print(
        f"\n[demo] {total} live trips (expected {len(known)}) in {time.monotonic() - started:.1f}s; table at {table_path}"
    )
    spark.stop()
    return 0 if total == len(known) else 1


if __name__ == "__main__":
    sys.exit(main())
