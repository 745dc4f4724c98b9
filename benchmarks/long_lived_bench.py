"""A long-lived table: does a commit cost the same after 2,000 commits as after 20?

The issue's workload: a MERGE_ON_READ table (BUCKET index), 200-row upserts (half updates, half
new keys), inline compaction every 5 delta commits, Hudi's defaults otherwise (automatic clean
and archival). Prints the median upsert and snapshot read around each checkpoint, the files in
``.hoodie/`` and ``.hoodie/archived/``, and the ratio of the last checkpoint to the first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa
from hudi_core import HudiTable


def _batch(rng: np.random.Generator, commit: int, next_key: int) -> tuple[pa.Table, int]:
    n_new = 100
    old = rng.integers(0, max(next_key, 1), 100) if next_key else np.arange(0)
    keys = [f"k{k:08d}" for k in old] + [f"k{k:08d}" for k in range(next_key, next_key + n_new)]
    n = len(keys)
    table = pa.table({
        "uuid": keys, "ts": pa.array(np.full(n, commit), pa.int64()),
        "fare": rng.random(n), "city": [("sf", "la", "nyc", "chi", "sea")[i % 5] for i in range(n)],
    })  # fmt: skip
    return table, next_key + n_new


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--checkpoints", default="20,600,2000")
    ap.add_argument("--window", type=int, default=15, help="commits timed around each checkpoint")
    args = ap.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",") if int(c) <= args.commits]
    rng = np.random.default_rng(7)
    opts = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "4",
            "hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "5"}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "t")
        HudiTable.create(base, name="t", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=opts)  # fmt: skip
        next_key, times, rows = 0, {}, []
        for commit in range(1, args.commits + 1):
            data, next_key = _batch(rng, commit, next_key)
            start = time.perf_counter()
            HudiTable.open(base, options=opts).upsert(data, options=opts)
            times[commit] = time.perf_counter() - start
            if commit in checkpoints:
                window = [times[c] for c in range(max(1, commit - args.window + 1), commit + 1)]
                start = time.perf_counter()
                HudiTable.open(base).read()
                read_s = time.perf_counter() - start
                meta = os.path.join(base, ".hoodie")
                entries = sum(1 for e in os.scandir(meta) if e.is_file())
                archived = sum(1 for _ in os.scandir(os.path.join(meta, "archived")))
                rows.append((commit, statistics.median(window), read_s, entries, archived))
                print(f"after {commit:>5} commits: median upsert {statistics.median(window) * 1000:7.1f} ms, "
                      f"snapshot read {read_s * 1000:6.1f} ms, .hoodie/ {entries} files, archived/ {archived}",
                      flush=True)  # fmt: skip
        first, last = rows[0], rows[-1]
        print(
            f"median upsert after {last[0]} commits / after {first[0]}: {last[1] / first[1]:.2f}x (target <= 1.25x)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
