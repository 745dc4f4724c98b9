"""Change data capture: upserts into a table that keeps a change log, and the query of their
changes, against deltalake's Change Data Feed, in one run.

The defaults benchmark's trips data (``defaults_bench.generate``: uuid key, ``ts``, 9 columns,
partitioned by ``city``; each upsert half updates, half new keys), written by:

- ``ours``: a COPY_ON_WRITE table created with ``hoodie.table.cdc.enabled=true`` (its merges write
  CDC log files, ``DATA_BEFORE_AFTER``), queried with ``HudiTable.read_changes``: Hudi's answer,
  the images as JSON text, and ``images="struct"``, the images as typed structs (``typed``);
- ``ours_plain``: the same table without a change log (what the change log costs a write);
- ``deltalake``: ``delta.enableChangeDataFeed=true``, ``merge`` (update all, insert all), queried
  with ``DeltaTable.load_cdf`` to Arrow;
- the floor of the query: pyarrow reading the upsert's rows from parquet twice (the images
  before and after of every change).

Each engine runs in a fresh process; seconds, medians of the upserts (the first excluded as a
warm-up when there are more than two) and of ``--repeat`` queries of the last upsert's changes.
Our answer holds the images as JSON text (Hudi's CDC query's four string columns) or as structs,
deltalake's as typed columns with a pre- and post-image row per update: the rows differ, the
changes match (checked: the same counts of inserts, updates and deletes).

    .venv/bin/python benchmarks/cdc_bench.py --rows 1000000 --upserts 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from defaults_bench import generate  # noqa: E402

ENGINES = ("ours", "ours_plain", "deltalake", "floor")


def _ours(data: Path, work: Path, upserts: int, repeat: int, cdc: bool) -> dict[str, Any]:
    from hudi_core import HudiTable

    t = HudiTable.create(str(work / "t"), name="trips", record_key_fields="uuid", partition_fields="city",
                         ordering_field="ts", options={"hoodie.table.cdc.enabled": str(cdc).lower()})  # fmt: skip
    t.bulk_insert(pq.read_table(data / "base.parquet"))
    times = []
    for k in range(upserts):
        batch = pq.read_table(data / f"upsert-{k}.parquet")
        start = time.perf_counter()
        t.upsert(batch)
        times.append(time.perf_counter() - start)
    out: dict[str, Any] = {"upsert": times}
    if cdc:
        since = t.timeline.completed_commits().timestamps()[-2]
        queries, typed, counts = [], [], {}
        for _ in range(repeat):
            start = time.perf_counter()
            changes = t.read_changes(since)
            queries.append(time.perf_counter() - start)
            ops = changes.column("op").to_pylist()
            counts = {op: ops.count(op) for op in ("i", "u", "d")}
            start = time.perf_counter()
            structs = t.read_changes(since, images="struct")
            typed.append(time.perf_counter() - start)
            assert structs.num_rows == changes.num_rows
        out.update(query=queries, typed=typed, counts=counts)
    return out


def _delta(data: Path, work: Path, upserts: int, repeat: int) -> dict[str, Any]:
    from deltalake import DeltaTable, write_deltalake

    path = str(work / "t")
    write_deltalake(path, pq.read_table(data / "base.parquet"), partition_by=["city"],
                    configuration={"delta.enableChangeDataFeed": "true"})  # fmt: skip
    times = []
    for k in range(upserts):
        batch = pq.read_table(data / f"upsert-{k}.parquet")
        start = time.perf_counter()
        (DeltaTable(path).merge(batch, predicate="t.uuid = s.uuid", source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())  # fmt: skip
        times.append(time.perf_counter() - start)
    version = DeltaTable(path).version()
    queries, counts = [], {}
    for _ in range(repeat):
        start = time.perf_counter()
        changes = pa.RecordBatchReader.from_stream(
            DeltaTable(path).load_cdf(starting_version=version)
        ).read_all()
        queries.append(time.perf_counter() - start)
        kinds = changes.column("_change_type").to_pylist()
        counts = {
            "i": kinds.count("insert"),
            "u": kinds.count("update_postimage"),
            "d": kinds.count("delete"),
        }
    return {"upsert": times, "query": queries, "counts": counts}


def _floor(data: Path, upserts: int, repeat: int) -> dict[str, Any]:
    path = data / f"upsert-{upserts - 1}.parquet"
    queries = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _image in range(2):
            pq.read_table(path)
        queries.append(time.perf_counter() - start)
    return {"query": queries}


def worker(engine: str, data: Path, work: Path, upserts: int, repeat: int, out: Path) -> None:
    if engine == "deltalake":
        result = _delta(data, work, upserts, repeat)
    elif engine == "floor":
        result = _floor(data, upserts, repeat)
    else:
        result = _ours(data, work, upserts, repeat, cdc=engine == "ours")
    out.write_text(json.dumps(result))


def _median_upsert(times: list[float]) -> float:
    return statistics.median(times[1:] if len(times) > 2 else times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--upserts", type=int, default=3)
    p.add_argument("--upsert-rows", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3, help="queries of the last upsert's changes")
    p.add_argument("--worker", nargs=4, metavar=("ENGINE", "DATA", "WORK", "OUT"), help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        engine, data, work, out = a.worker
        worker(engine, Path(data), Path(work), a.upserts, a.repeat, Path(out))
        return 0
    root = Path(tempfile.mkdtemp(prefix="hudi-cdc-bench-"))
    try:
        data = root / "data"
        data.mkdir()
        generate(data, a.rows, a.upserts, a.upsert_rows)
        results: dict[str, dict[str, Any]] = {}
        for engine in ENGINES:
            work, out = root / engine, root / f"{engine}.json"
            work.mkdir()
            cmd = [sys.executable, __file__, "--upserts", str(a.upserts), "--repeat", str(a.repeat),
                   "--worker", engine, str(data), str(work), str(out)]  # fmt: skip
            subprocess.run(cmd, check=True)
            results[engine] = json.loads(out.read_text())
            shutil.rmtree(work, ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ours, delta = results["ours"], results["deltalake"]
    up = {e: _median_upsert(results[e]["upsert"]) for e in ("ours", "ours_plain", "deltalake")}
    q = {e: statistics.median(results[e]["query"]) for e in ("ours", "deltalake", "floor")}
    q["typed"] = statistics.median(ours["typed"])
    print(f"cdc_bench: {a.rows} rows, {a.upserts} upserts of {a.upsert_rows} (half updates), COPY_ON_WRITE")
    print(f"  changes of the last upsert: ours {ours['counts']}, deltalake {delta['counts']}")
    print(f"  upsert, median (s): ours {up['ours']:.3f}, ours without a change log {up['ours_plain']:.3f}, "
          f"deltalake with its change data feed {up['deltalake']:.3f}")  # fmt: skip
    print(f"  upsert ours / deltalake: {up['ours'] / up['deltalake']:.2f}x; "
          f"the change log's cost, ours / ours without: {up['ours'] / up['ours_plain']:.2f}x")  # fmt: skip
    print(f"  query of the changes, median (s): ours {q['ours']:.3f}, ours typed {q['typed']:.3f}, "
          f"deltalake {q['deltalake']:.3f}, floor {q['floor']:.3f}")  # fmt: skip
    print(
        f"  query ours / deltalake: {q['ours'] / q['deltalake']:.2f}x; ours / floor: {q['ours'] / q['floor']:.2f}x"
    )
    print(f"  query ours typed / deltalake: {q['typed'] / q['deltalake']:.2f}x; "
          f"ours typed / floor: {q['typed'] / q['floor']:.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
