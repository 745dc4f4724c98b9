"""Run every benchmark in one go (`make bench`), each printing the ratios it measured.

By default the issue sizes are used (1M rows and 5 x 100k upserts); ``--quick`` runs small
sizes to check that everything still works. Benchmarks are scripts, not tests: they print
figures and never fail on a ratio.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

FULL: list[tuple[str, list[str]]] = [
    ("avro_encode_bench.py", []),
    ("write_bench.py", ["--rows", "1000000", "--upserts", "5"]),
    ("read_bench.py", ["--rows", "1000000", "--upserts", "5"]),
    ("compaction_bench.py", ["--rows", "1000000", "--upserts", "5"]),
    ("executor_bench.py", []),
    ("spark_bench.py", ["--rows", "1000000", "10000000", "--driver-memory", "6g"]),
    ("long_lived_bench.py", ["--commits", "2000", "--checkpoints", "20,600,2000"]),
    ("defaults_bench.py", ["--rows", "1000000"]),
    ("spark_vs_hudi_bench.py", ["--rows", "1000000"]),
    ("s3_requests.py", []),
    ("spark_s3_read_bench.py", ["--rows", "2000000"]),
    ("cdc_bench.py", ["--rows", "1000000", "--upserts", "3"]),
]
QUICK: list[tuple[str, list[str]]] = [
    ("avro_encode_bench.py", []),
    ("write_bench.py", ["--rows", "50000", "--upserts", "2"]),
    ("read_bench.py", ["--rows", "50000", "--upserts", "2", "--repeat", "2"]),
    ("compaction_bench.py", ["--rows", "50000", "--upserts", "2"]),
    (
        "executor_bench.py",
        ["--rows", "50000", "--s3-rows", "20000", "--repeat", "1", "--memory-rows", "50000"],
    ),
    ("spark_bench.py", ["--rows", "50000"]),
    ("long_lived_bench.py", ["--commits", "60", "--checkpoints", "20,60"]),
    ("defaults_bench.py", ["--rows", "50000", "--upserts", "2"]),
    ("spark_vs_hudi_bench.py", ["--rows", "20000", "--upserts", "2", "--index", "BUCKET"]),
    ("s3_requests.py", ["--upserts", "3", "--partitions", "5"]),
    ("spark_s3_read_bench.py", ["--rows", "50000", "--repeat", "2"]),
    ("cdc_bench.py", ["--rows", "50000", "--upserts", "2", "--upsert-rows", "5000", "--repeat", "1"]),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes, to check the scripts run")
    ap.add_argument("--only", nargs="+", help="benchmark script names to run")
    args = ap.parse_args()
    failed = []
    for script, extra in QUICK if args.quick else FULL:
        if args.only and script not in args.only and script.removesuffix(".py") not in args.only:
            continue
        cmd = [sys.executable, str(HERE / script), *extra]
        print(f"\n=== {' '.join(cmd[1:])}", flush=True)
        start = time.perf_counter()
        rc = subprocess.call(cmd)
        print(f"=== {script}: exit {rc} after {time.perf_counter() - start:.1f} s", flush=True)
        if rc:
            failed.append(script)
    if failed:
        print(f"\nbenchmarks that did not run to the end: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
