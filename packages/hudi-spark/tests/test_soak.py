"""Soak (issue #17): a thousand micro-batches through ``write_stream`` and ``hudi-py streamer
--continuous`` into a MERGE_ON_READ table with compaction, automatic clean and archival.

Marked ``soak`` (``make soak``, about 15 minutes on 2 cores; not in ``make test``). The checks
are what a user of a long-running job would look at: every batch committed exactly once, every
row there once, ``.hoodie/`` bounded, the archived timeline holding the rest. The per-batch cost
at the start and at the end is printed (the figures in benchmarks/README.md), never asserted.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.soak, pytest.mark.xdist_group("spark")]

BATCHES = int(os.environ.get("HUDI_SOAK_BATCHES", "1000"))
OPTS = {
    "hoodie.table.name": "soak",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.compact.inline.max.delta.commits": "5",
}


def _deltacommits(base: str) -> list[str]:
    """Instant times of every completed deltacommit, archived ones included."""
    from hudi_core.archival import archived_instants

    table = HudiTable.open(base)
    active = [i.timestamp for i in table.timeline.completed() if i.action == "deltacommit"]
    archived = [a.instant.timestamp for a in archived_instants(table) if a.instant.action == "deltacommit"]
    return sorted(set(active) | set(archived))


def _cost(instants: list[str]) -> tuple[float, float]:
    """Median seconds between consecutive commits over the first and the last 50 batches."""
    times = [datetime.strptime(t, "%Y%m%d%H%M%S%f") for t in instants]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    return statistics.median(gaps[5:55]), statistics.median(gaps[-50:])


def _meta_files(base: str) -> tuple[int, int]:
    meta = Path(base) / ".hoodie"
    return sum(1 for p in meta.iterdir() if p.is_file()), sum(1 for _ in (meta / "archived").iterdir())


def _report(name: str, base: str, instants: list[str]) -> dict[str, Any]:
    first, last = _cost(instants)
    active, archived = _meta_files(base)
    figures = {"job": name, "batches": len(instants), "first_50_s": round(first, 3), "last_50_s": round(last, 3),
               "ratio": round(last / first, 2), "hoodie_files": active, "archived_files": archived}  # fmt: skip
    print(f"\nsoak {json.dumps(figures)}")
    return figures


def test_write_stream_runs_a_thousand_micro_batches(spark: Any, tmp_path: Path) -> None:
    import hudi_spark

    src, base, ckpt = tmp_path / "src", str(tmp_path / "t"), str(tmp_path / "ckpt")
    src.mkdir()
    for n in range(BATCHES):  # 100 rows each: 50 updates of earlier keys, 50 new keys
        keys = [f"k{(n * 50 + i) % max(50, n * 50):07d}" for i in range(50)] + [
            f"k{n * 50 + i:07d}" for i in range(50)
        ]
        rows = pa.table({"key": keys, "ts": [n] * 100, "part": [f"p{int(k[1:]) % 4}" for k in keys]})
        pq.write_table(rows, src / f"part-{n:05d}.parquet")
    stream = spark.readStream.schema("key string, ts long, part string").option("maxFilesPerTrigger", 1)
    q = hudi_spark.write_stream(stream.parquet(str(src)), base, options=OPTS, checkpoint_location=ckpt,
                                operation="upsert", trigger={"availableNow": True})  # fmt: skip
    q.awaitTermination()
    if q.hudi_sink.compactor is not None:
        q.hudi_sink.compactor.wait()

    instants = _deltacommits(base)
    assert len(instants) == BATCHES  # one deltacommit per micro-batch, none twice
    data = HudiTable.open(base).read(columns=["key", "ts"])
    keys = data.column("key").to_pylist()
    assert len(keys) == len(set(keys)) == BATCHES * 50
    figures = _report("write_stream", base, instants)
    assert figures["hoodie_files"] < 250  # bounded by archival, whatever the number of batches
    assert figures["archived_files"] > 0 or BATCHES < 100  # (a short run for a try-out archives nothing)


def test_streamer_continuous_runs_a_thousand_rounds(tmp_path: Path) -> None:
    base = str(tmp_path / "t")
    cmd = [
        sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", base,
        "--target-table", "soak", "--table-type", "MERGE_ON_READ", "--source-kind", "rate",
        "--rate-rows", "100", "--record-key", "key", "--partition-field", "part",
        "--source-ordering-field", "ts", "--continuous", "--max-rounds", str(BATCHES),
        "--compact-every", "5", "--quick-start",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-3000:]
    instants = _deltacommits(base)
    assert len(instants) == BATCHES
    data = HudiTable.open(base).read(columns=["key"])
    keys = data.column("key").to_pylist()
    assert len(keys) == len(set(keys)) == BATCHES * 100
    figures = _report("streamer --continuous", base, instants)
    assert figures["hoodie_files"] < 250
    assert figures["archived_files"] > 0 or BATCHES < 100  # (a short run for a try-out archives nothing)
