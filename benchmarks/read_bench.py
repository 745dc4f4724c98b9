"""Read-path benchmark: hudi_core vs hudi-rs (snapshot) and vs plain pyarrow (read-optimized).

    .venv/bin/python benchmarks/read_bench.py                 # the compat corpus tables
    .venv/bin/python benchmarks/read_bench.py --rows 1000000  # also a generated table (needs the writer)

Prints wall times (best of ``--repeat``) and ratios measured in this run; nothing is asserted.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
from hudi_core import HudiTable
from hudi_core.fs_view import FileSystemView
from hudi_core.testing.corpus import corpus_root, corpus_tables


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def best_of_pair(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[float, Any, float, Any]:
    """Best times of ``a`` and ``b`` run alternately (after one warm-up each), so that load from
    elsewhere on the machine hits both sides alike."""
    out_a, out_b = a(), b()
    best_a = best_b = float("inf")
    for _ in range(repeat):
        t_a, out_a = best_of(a, 1)
        t_b, out_b = best_of(b, 1)
        best_a, best_b = min(best_a, t_a), min(best_b, t_b)
    return best_a, out_a, best_b, out_b


def _rows(result: Any) -> int:
    if isinstance(result, pa.Table):
        return result.num_rows
    return sum(b.num_rows for b in result)


def hudi_rs_snapshot(path: str) -> Any:
    import hudi

    table = hudi.HudiTableBuilder.from_base_uri(path).build()
    reader = getattr(table, "read_snapshot", None) or table.read
    return reader()


def plain_pyarrow_base_files(path: str) -> pa.Table:
    """The same base files the read-optimized query reads, through pyarrow.dataset."""
    files = [b.path for b in FileSystemView(HudiTable.open(path)).latest_base_files()]
    return ds.dataset(files, format="parquet").to_table() if files else pa.table({})


def bench_table(label: str, path: str, *, mor: bool, repeat: int) -> None:
    ours, ours_out, rs, rs_out = best_of_pair(
        lambda: HudiTable.open(path).read(), lambda: hudi_rs_snapshot(path), repeat
    )
    print(
        f"{label:<58} snapshot  ours {ours * 1e3:8.1f} ms  hudi-rs {rs * 1e3:8.1f} ms  "
        f"ratio {ours / rs:5.2f}x  rows {_rows(ours_out)}/{_rows(rs_out)}"
    )
    if mor:
        ro, ro_out, pa_t, pa_out = best_of_pair(
            lambda: HudiTable.open(path).read("read_optimized"),
            lambda: plain_pyarrow_base_files(path),
            repeat,
        )
        print(
            f"{'':<58} read_opt  ours {ro * 1e3:8.1f} ms  pyarrow {pa_t * 1e3:8.1f} ms  "
            f"ratio {ro / pa_t:5.2f}x  rows {_rows(ro_out)}/{_rows(pa_out)}"
        )


def make_large_table(rows: int, table_type: str, where: Path, *, upserts: int = 5) -> str:
    """A table written by our own writer (``hudi_core.write.WriteClient``), the issue's shape:
    ``rows`` trips inserted, then ``upserts`` upsert commits of ``rows // 10`` random existing
    keys each (for MOR these land in log files). Reused when ``where`` already holds it."""
    import numpy as np
    from hudi_core.client.write_client import WriteClient

    path = str(where / f"trips_{table_type.lower()}_{rows}_u{upserts}")
    if HudiTable.exists(path):
        return path
    table = HudiTable.create(path, name="bench_trips", table_type=table_type, record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts")  # fmt: skip
    rng = np.random.default_rng(7)
    cities = np.array(["san_francisco", "sao_paulo", "chennai", "amsterdam"])
    data = pa.table({
        "ts": pa.array(np.arange(rows, dtype=np.int64)),
        "uuid": pa.array([f"key-{i:09d}" for i in range(rows)]),
        "rider": pa.array(rng.integers(0, 1000, rows).astype(str)),
        "fare": pa.array(rng.random(rows) * 100),
        "city": pa.array(cities[np.arange(rows) % len(cities)]),
    })  # fmt: skip
    WriteClient(table).write(data, operation="insert")
    n_upd = max(1, rows // 10)
    for u in range(upserts):
        idx = np.sort(rng.choice(rows, size=n_upd, replace=False))
        upd = data.take(pa.array(idx))
        upd = upd.set_column(0, "ts", pa.array(upd.column("ts").to_numpy() + rows * (u + 1)))
        upd = upd.set_column(3, "fare", pa.array(rng.random(n_upd) * 100))
        WriteClient(HudiTable.open(path)).write(upd, operation="upsert")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", type=int, default=0, help="also benchmark a generated table of this many rows")
    ap.add_argument("--table-type", default="MERGE_ON_READ", choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
    ap.add_argument(
        "--upserts", type=int, default=5, help="upsert commits of rows/10 keys on the generated table"
    )
    ap.add_argument("--keep-dir", help="build (or reuse) the generated table here instead of a temp dir")
    ap.add_argument("--skip-corpus", action="store_true", help="only the generated table")
    args = ap.parse_args()

    root = corpus_root()
    if root is None:
        raise SystemExit("the compat corpus (shared/compat) is not available")
    for t in [] if args.skip_corpus else corpus_tables():
        if t["table_version"] != 6:
            continue
        bench_table(f"{t['category']}/{t['name']}", str(root / t["table_path"]),
                    mor=t["table_type"] == "MERGE_ON_READ", repeat=args.repeat)  # fmt: skip
    if args.rows:
        tmp = Path(args.keep_dir) if args.keep_dir else Path(tempfile.mkdtemp(prefix="read-bench-"))
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            path = make_large_table(args.rows, args.table_type, tmp, upserts=args.upserts)
            label = f"generated {args.table_type} {args.rows} rows + {args.upserts} upserts"
            bench_table(label, path, mor=args.table_type == "MERGE_ON_READ", repeat=args.repeat)
        finally:
            if not args.keep_dir:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
