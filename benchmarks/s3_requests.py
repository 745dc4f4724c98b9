"""Requests a write makes on S3: small upserts into a merge-on-read table on the moto server,
counted by a proxy in front of it (``hudi_core.testing.s3.FlakyS3Proxy``, no faults).

On S3 each request is tens of milliseconds and LISTs cost more than GETs, so for the small,
frequent commits of a streaming writer the count is the cost. Three sequences, each in its own
table, one process:

- ``occ``: optimistic concurrency control (the table lock, heartbeats, the conflict check);
- ``single``: the default single-writer mode (the lease);
- ``partitions``: single writer, a table of ``--partitions`` partitions, upserts into 2 of them.

Each prints, per upsert of 8 rows (half updates), the requests by kind; the first upserts merge
the bulk of new keys into small base files, the later ones append logs, then compaction, clean
and archival come by (commits 10 on). Figures are counts, not timings: loopback moto answers in
about a millisecond.

    .venv/bin/python benchmarks/s3_requests.py
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

import pyarrow as pa
from hudi_core import HudiTable
from hudi_core.testing.s3 import FAKE_AWS_ENV, FlakyS3Proxy, MotoS3Server, Request


def _kind(q: Request) -> str:
    return "LIST" if q.prefix is not None else q.method


def run(name: str, server: MotoS3Server, options: dict[str, str], *, partitions: int, upserts: int) -> None:
    bucket = server.create_bucket(f"requests-{name}")
    with FlakyS3Proxy(server.endpoint_url) as proxy:
        opts = {**options, **server.options(), "hoodie.storage.s3.endpoint": proxy.endpoint_url}
        uri = f"{bucket.uri}/t"
        table = HudiTable.create(uri, name="t", table_type="MERGE_ON_READ", record_key_fields="key",
                                 partition_fields="part", ordering_field="ts", options=opts)  # fmt: skip
        parts = [f"p{i:03d}" for i in range(partitions)]
        if partitions > 2:  # every partition holds a file group before the measured upserts
            seed = pa.table(
                {"key": [f"s{i}" for i in range(partitions)], "ts": [0] * partitions, "part": parts}
            )
            table.upsert(seed, options=opts)
        print(f"\n{name}: {partitions} partitions, upserts of 8 rows into 2 of them")
        totals: Counter[str] = Counter()
        for i in range(upserts):
            start = len(proxy.seen)
            keys = [f"k{(i * 5 + j) % 40}" for j in range(8)]
            rows = pa.table({"key": keys, "ts": [i + 1] * 8, "part": [parts[1], parts[2 % partitions]] * 4})
            HudiTable.open(uri, options=opts).upsert(rows, options=opts)
            kinds = Counter(_kind(q) for q in proxy.seen[start:])
            totals.update(kinds)
            shown = "  ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
            print(f"  upsert {i + 1:2d}: {sum(kinds.values()):3d} requests  ({shown})")
        print(
            f"  mean {sum(totals.values()) / upserts:.1f} requests an upsert; LIST {totals['LIST'] / upserts:.1f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upserts", type=int, default=12)
    ap.add_argument("--partitions", type=int, default=30, help="partitions of the third table")
    args = ap.parse_args()
    os.environ.update(FAKE_AWS_ENV)
    server = MotoS3Server().start()
    try:
        occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"}
        run("occ", server, occ, partitions=2, upserts=args.upserts)
        run("single", server, {}, partitions=2, upserts=args.upserts)
        run("partitions", server, {}, partitions=args.partitions, upserts=args.upserts)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
