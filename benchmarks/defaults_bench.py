"""Fast by default (issue 16): our MERGE_ON_READ table at its defaults against deltalake and the
pyarrow/fastavro floors, on one deterministic trips-like workload, in one run.

    .venv/bin/python benchmarks/defaults_bench.py                    # 1M rows, 5 x 100k upserts
    .venv/bin/python benchmarks/defaults_bench.py --scale            # also 10M rows (long)
    .venv/bin/python benchmarks/defaults_bench.py --profile upsert   # cProfile one phase of ours

Workload: ``--rows`` rows (uuid key, ``ts`` int64 event time, rider, driver, fare, begin_lat,
begin_lon, a 16-hex ``payload`` and ``city``, 5 values, the partition field), then ``--upserts``
batches of ``--upsert-rows`` rows: half updates of existing keys (same city, larger ts), half new
keys. The data are generated once from a seeded generator and written to parquet; every engine
reads the same bytes before each phase (loading is not timed).

Each engine (deltalake; ours with nothing set beyond name, key, partition and ordering fields;
ours with ``hoodie.index.type=BUCKET``; the pyarrow floors) runs its whole sequence in its own
subprocess, after a warm-up on a small throwaway table: bulk load, the upserts, snapshot read
(twice: the second, on the memory the first freed, is printed without a target), compaction, read
after compaction; the floors also write the rows our compaction wrote (the data columns of its
files, left in the workload's folder by ours' run, which comes first), the issue's "same rows".
The engines take turns, ``--repeat`` times; each figure is the median over repeats (an upsert
figure: the median of a run's upserts). Peak memory of a phase is the peak RSS during it
(``VmHWM``, reset through ``/proc/self/clear_refs`` at the phase's start) minus the RSS at its
start, after freeing what the previous phase left (what can be freed: pages jemalloc has not
handed back yet, within its decay time of about a second, count in ours' starting RSS; the
process's peak RSS of each phase is printed too).

Prints seconds, the issue's ratios and their targets; nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import functools
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

CITIES = ["san_francisco", "sao_paulo", "chennai", "new_york", "berlin"]
DAY_MS = 86_400_000
T0_MS = 1_767_225_600_000  # 2026-01-01: base rows get a ts within the day after, upsert k the day k+1
#: hoodie.bucket.index.num.buckets for the BUCKET line: 8 per partition (40 file groups of ~25k
#: rows at 1M), twice Hudi's default of 4 so that both cores have file groups to write
BUCKETS = 8
BUCKET_OPTIONS = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(BUCKETS)}
ENGINES = ("deltalake", "ours", "ours_bucket", "floor_snappy", "floor_zstd")
#: ``read_again``: the snapshot read once more right after the first (memory the first freed is
#: warm), printed beside the issue's lines without a target
PHASES = ("bulk", "upsert", "read", "read_again", "compact", "read_compacted")
#: the floors' phase writing the rows our default compaction wrote (in ``SAME_ROWS`` of the data)
SAME_PHASE = "compact_same"
ALL_PHASES = (*PHASES, SAME_PHASE)
SAME_ROWS = "compacted-by-ours.parquet"

# ---------------------------------------------------------------------------------------------
# data


def _hex_strings(raw: np.ndarray, dashes: Sequence[int] = ()) -> pa.Array:
    """Lower-case hex of each row of ``raw`` (uint8, n x k), with '-' at the ``dashes`` offsets;
    built as one Arrow buffer (a Python string per row would dominate the generation)."""
    n, k = raw.shape
    width = 2 * k + len(dashes)
    nibbles = np.empty((n, 2 * k), dtype=np.uint8)
    nibbles[:, 0::2], nibbles[:, 1::2] = raw >> 4, raw & 15
    chars = np.full((n, width), ord("-"), dtype=np.uint8)
    chars[:, [i for i in range(width) if i not in dashes]] = np.frombuffer(b"0123456789abcdef", np.uint8)[
        nibbles
    ]
    offsets = np.arange(0, width * (n + 1), width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes()))


def _rows(
    ids: np.ndarray, version: int, keys: pa.Array, city_of: np.ndarray, rng: np.random.Generator
) -> pa.Table:
    """Rows for the key ids ``ids`` at ``version`` (0 = bulk load, k + 1 = upsert k)."""
    n = len(ids)
    return pa.table({
        "uuid": keys.take(pa.array(ids)),
        "ts": pa.array(T0_MS + version * DAY_MS + rng.integers(0, DAY_MS, n)),
        "rider": pa.array([f"rider-{i:03d}" for i in range(1000)]).take(pa.array(rng.integers(0, 1000, n))),
        "driver": pa.array([f"driver-{i:03d}" for i in range(500)]).take(pa.array(rng.integers(0, 500, n))),
        "fare": pa.array(rng.random(n) * 100),
        "begin_lat": pa.array(rng.random(n) * 180 - 90),
        "begin_lon": pa.array(rng.random(n) * 360 - 180),
        "payload": _hex_strings(rng.integers(0, 256, (n, 8), dtype=np.uint8)),
        "city": pa.array(CITIES).take(pa.array(city_of[ids])),
    })  # fmt: skip


def generate(out: Path, rows: int, upserts: int, upsert_rows: int, seed: int = 16) -> dict[str, int]:
    """Write base.parquet, upsert-K.parquet and final.parquet (the table's expected content) into
    ``out``; returns the expected row count and ts sum (every read is checked against them)."""
    rng = np.random.default_rng(seed)
    new_per = upsert_rows - upsert_rows // 2
    total = rows + upserts * new_per
    keys = _hex_strings(rng.integers(0, 256, (total, 16), dtype=np.uint8), dashes=(8, 13, 18, 23))
    if pc.count_distinct(keys).as_py() != total:
        raise SystemExit(f"seed {seed} drew a duplicate uuid; choose another")
    city_of = rng.integers(0, len(CITIES), total)
    id_lists = [np.arange(rows)]
    batches = [_rows(id_lists[0], 0, keys, city_of, rng)]
    pq.write_table(batches[0], out / "base.parquet")
    for k in range(upserts):
        existing = rows + k * new_per
        ids = np.concatenate([rng.choice(existing, upsert_rows // 2, replace=False),
                              np.arange(existing, existing + new_per)])  # fmt: skip
        id_lists.append(rng.permutation(ids))
        batches.append(_rows(id_lists[-1], k + 1, keys, city_of, rng))
        pq.write_table(batches[-1], out / f"upsert-{k}.parquet")
    # every batch holds a key once and later batches have larger ts: a key's final row is its last
    everything = pa.concat_tables(batches)
    all_ids = np.concatenate(id_lists)
    last = np.empty(total, dtype=np.int64)
    last[all_ids] = np.arange(len(all_ids))  # numpy fancy assignment: the last write wins
    final = everything.take(pa.array(last))
    pq.write_table(final, out / "final.parquet")
    return {"rows": final.num_rows, "ts_sum": pc.sum(final["ts"]).as_py()}


# ---------------------------------------------------------------------------------------------
# memory: peak RSS of a phase


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class PhaseMemory:
    """Peak RSS growth of one phase: free what earlier phases left (Python, Arrow's pool, glibc),
    take the RSS, reset the high-water mark; at the end VmHWM minus that RSS."""

    def __enter__(self) -> PhaseMemory:
        gc.collect()
        pa.default_memory_pool().release_unused()
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except OSError:
            pass
        self.start_kb = _status_kb("VmRSS")
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
        except OSError:
            pass
        return self

    def __exit__(self, *exc: object) -> None:
        peak_kb = _status_kb("VmHWM")
        self.growth_mb = max(0, peak_kb - self.start_kb) / 1024
        self.peak_mb = peak_kb / 1024  # the process's whole resident set at its peak


# ---------------------------------------------------------------------------------------------
# engines: each phase is a callable over data loaded before it


class Engine:
    def __init__(self, path: str) -> None:
        self.path = path

    def bulk(self, data: pa.Table) -> None:
        raise NotImplementedError

    def upsert(self, batch: pa.Table) -> None:
        raise NotImplementedError

    def read(self) -> pa.Table:
        raise NotImplementedError

    def compact(self, final: pa.Table | None) -> int | None:
        """Compact (the floor: write ``final``); the rows written, where the engine says."""
        raise NotImplementedError

    def compacted_rows(self) -> pa.Table:
        """The data columns of the rows the last :meth:`compact` wrote (after the clock)."""
        raise NotImplementedError


class Delta(Engine):
    # keys never change city here, so "AND t.city = s.city" would be correct too, but every batch
    # touches all five cities and with it delta-rs merged 1.3-1.6x slower (1M rows, 2026-11-25)
    predicate = "t.uuid = s.uuid"

    def bulk(self, data: pa.Table) -> None:
        from deltalake import write_deltalake

        write_deltalake(self.path, data, partition_by=["city"])

    def upsert(self, batch: pa.Table) -> None:
        from deltalake import DeltaTable

        (DeltaTable(self.path).merge(batch, predicate=self.predicate, source_alias="s", target_alias="t")
         .when_matched_update_all().when_not_matched_insert_all().execute())  # fmt: skip

    def read(self) -> pa.Table:
        from deltalake import DeltaTable

        return DeltaTable(self.path).to_pyarrow_table()

    def compact(self, final: pa.Table | None) -> int | None:
        from deltalake import DeltaTable

        DeltaTable(self.path).optimize.compact()
        return None


class Ours(Engine):
    options: dict[str, str] | None = None  # None: nothing beyond the table's fields

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.written: list[str] = []  # the base files the last compaction wrote, relative to the table

    def bulk(self, data: pa.Table) -> None:
        from hudi_core import HudiTable

        table = HudiTable.create(self.path, name="trips", table_type="MERGE_ON_READ", record_key_fields="uuid",
                                 partition_fields="city", ordering_field="ts", options=self.options)  # fmt: skip
        table.bulk_insert(data, options=self.options)

    def upsert(self, batch: pa.Table) -> None:
        from hudi_core import HudiTable

        HudiTable.open(self.path).upsert(batch, options=self.options)

    def read(self) -> pa.Table:
        from hudi_core import HudiTable

        return HudiTable.open(self.path).read()

    def compact(self, final: pa.Table | None) -> int | None:
        from hudi_core import HudiTable

        results = HudiTable.open(self.path).compact(self.options)
        self.written = [op.path for r in results for op in r.operations if op.path]
        return sum(r.records_written for r in results)

    def compacted_rows(self) -> pa.Table:
        from hudi_core.schema.avro_schema import META_FIELDS

        files = [pq.read_table(f"{self.path}/{p}") for p in self.written]
        return pa.concat_tables(files).drop_columns(list(META_FIELDS))


class OursBucket(Ours):
    options = BUCKET_OPTIONS


class Floor(Engine):
    """pyarrow.parquet.write_to_dataset for the bulk load and for "compaction" (the final rows,
    and apart the rows our compaction wrote, :meth:`write_same`), a fastavro file of the batch
    for an upsert, pyarrow.dataset reading the final rows back."""

    codec = "snappy"  # pyarrow's default

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.upserts = 0

    def bulk(self, data: pa.Table) -> None:
        pq.write_to_dataset(data, f"{self.path}/bulk", partition_cols=["city"], compression=self.codec)

    def upsert(self, batch: Any) -> None:
        import fastavro

        schema, records = batch  # the dicts are made before the clock starts, as fastavro needs them
        self.upserts += 1
        with open(f"{self.path}/upsert-{self.upserts}.avro", "wb") as f:
            fastavro.writer(f, schema, records)

    def read(self) -> pa.Table:
        return ds.dataset(f"{self.path}/final", format="parquet", partitioning="hive").to_table()

    def compact(self, final: pa.Table | None) -> int | None:
        assert final is not None
        pq.write_to_dataset(final, f"{self.path}/final", partition_cols=["city"], compression=self.codec)
        return final.num_rows

    def write_same(self, rows: pa.Table) -> None:
        pq.write_to_dataset(rows, f"{self.path}/same", partition_cols=["city"], compression=self.codec)


class FloorZstd(Floor):
    codec = "zstd"


ENGINE_CLASSES: dict[str, type[Engine]] = {"deltalake": Delta, "ours": Ours, "ours_bucket": OursBucket,
                                           "floor_snappy": Floor, "floor_zstd": FloorZstd}  # fmt: skip


def _avro_input(batch: pa.Table) -> tuple[Any, list[dict[str, Any]]]:
    import fastavro
    from hudi_core.schema.avro_schema import arrow_to_avro

    return fastavro.parse_schema(arrow_to_avro(batch.schema, "trips")), batch.to_pylist()


class ThreadsProfile:
    """cProfile over the calling thread and every thread started while it is on (our writers and
    readers start their pools per call): ``cProfile -o`` alone sees only the main thread, which
    waits on futures."""

    def __init__(self) -> None:
        import cProfile

        self._new = cProfile.Profile
        self.profilers = [cProfile.Profile()]

    def _start_in_thread(self, *_: object) -> None:
        sys.setprofile(None)  # replaced by this thread's own profiler
        prof = self._new()
        self.profilers.append(prof)
        prof.enable()

    def __enter__(self) -> ThreadsProfile:
        threading.setprofile(self._start_in_thread)
        self.profilers[0].enable()
        return self

    def __exit__(self, *exc: object) -> None:
        self.profilers[0].disable()
        threading.setprofile(None)  # type: ignore[arg-type]

    def dump(self, path: str) -> None:
        import pstats

        stats = pstats.Stats(self.profilers[0])
        for prof in self.profilers[1:]:
            stats.add(prof)
        stats.dump_stats(path)


def run_sequence(
    engine: Engine,
    data: Path,
    upserts: int,
    *,
    measure: bool = True,
    profile: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Every phase of ``engine`` in order; returns {phase: [[wall s, cpu s, RSS growth MB, peak
    RSS MB, system cpu s, page faults], ...]}, the row count and ts sum of each read, and the
    rows the compaction wrote (``compacted_rows``, where the engine says). ``profile=(phase,
    out)`` runs cProfile over that phase (every call of it, in every thread)."""
    out: dict[str, Any] = {p: [] for p in ALL_PHASES}
    checks: dict[str, list[int]] = {}
    profiler = ThreadsProfile() if profile else None
    is_floor = isinstance(engine, Floor)

    def timed(phase: str, fn: Callable[[], Any]) -> Any:
        with PhaseMemory() as mem:
            on = profiler is not None and profile is not None and profile[0] == phase
            with profiler if on and profiler else contextlib.nullcontext():
                r0 = resource.getrusage(resource.RUSAGE_SELF)
                t0, c0 = time.perf_counter(), time.process_time()
                result = fn()
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                r1 = resource.getrusage(resource.RUSAGE_SELF)
        out[phase].append([wall, cpu, mem.growth_mb if measure else 0.0, mem.peak_mb if measure else 0.0,
                           r1.ru_stime - r0.ru_stime, r1.ru_minflt - r0.ru_minflt])  # fmt: skip
        return result

    def read(phase: str) -> None:
        table = timed(phase, engine.read)
        checks[phase] = [table.num_rows, pc.sum(table["ts"]).as_py()]

    base = pq.read_table(data / "base.parquet")
    timed("bulk", functools.partial(engine.bulk, base))
    del base
    if not isinstance(engine, FloorZstd):  # the upsert floor is codec-free: measured once
        for k in range(upserts):
            batch = pq.read_table(data / f"upsert-{k}.parquet")
            arg = _avro_input(batch) if is_floor else batch
            timed("upsert", functools.partial(engine.upsert, arg))
            del batch, arg
    if is_floor:  # the floor's read is of the final rows, which its "compaction" writes
        final = pq.read_table(data / "final.parquet")
        written = timed("compact", functools.partial(engine.compact, final))
        del final
        if (data / SAME_ROWS).exists():  # left by ours' run (the engines take turns, ours first)
            same = pq.read_table(data / SAME_ROWS)
            timed(SAME_PHASE, functools.partial(engine.write_same, same))
            del same
        read("read")
        read("read_again")
        read("read_compacted")
    else:
        read("read")
        read("read_again")
        written = timed("compact", lambda: engine.compact(None))
        read("read_compacted")
    if profiler and profile:
        profiler.dump(profile[1])
    return {"phases": out, "checks": checks, "compacted_rows": written}


def warm_up(cls: type[Engine], data: Path, work: Path) -> None:
    """The whole sequence on a small throwaway table: imports and first-call costs are paid here."""
    warm_data = work / "warm-data"
    warm_data.mkdir()
    pq.write_table(pq.read_table(data / "base.parquet").slice(0, 2000), warm_data / "base.parquet")
    pq.write_table(pq.read_table(data / "upsert-0.parquet").slice(0, 500), warm_data / "upsert-0.parquet")
    pq.write_table(pq.read_table(data / "final.parquet").slice(0, 2000), warm_data / "final.parquet")
    (work / "warm").mkdir()
    run_sequence(cls(str(work / "warm")), warm_data, 1, measure=False)


def worker(engine_name: str, data: Path, work: Path, upserts: int, out_json: Path) -> None:
    """One engine's sequence in this (fresh) process, after a warm-up on a small table."""
    cls = ENGINE_CLASSES[engine_name]
    warm_up(cls, data, work)
    (work / "t").mkdir()
    engine = cls(str(work / "t"))
    result = run_sequence(engine, data, upserts)
    # the compaction line compares ours with the floor writing the same rows: those of the
    # file groups our compaction rewrote (the fixed workload makes them the same in every run)
    if engine_name == "ours" and not (data / SAME_ROWS).exists():
        pq.write_table(engine.compacted_rows(), data / SAME_ROWS)
    out_json.write_text(json.dumps(result))


# ---------------------------------------------------------------------------------------------
# the run and its report


def measure(data: Path, work: Path, upserts: int, repeat: int, engines: Sequence[str]) -> dict[str, Any]:
    """{engine: {phase: [per-run [wall, cpu, RSS growth MB, peak RSS MB]]}, "_checks": ...}: engines
    take turns, so that load from elsewhere on the machine falls on each alike."""
    runs: dict[str, dict[str, list[list[float]]]] = {e: {p: [] for p in ALL_PHASES} for e in engines}
    checks: dict[str, Any] = {}
    compacted: dict[str, int | None] = {}
    for r in range(repeat):
        for name in engines:
            wdir = work / f"{name}-{r}"
            wdir.mkdir()
            out_json = wdir / "result.json"
            cmd = [sys.executable, __file__, "--worker", name, "--data", str(data), "--work", str(wdir),
                   "--upserts", str(upserts), "--out", str(out_json)]  # fmt: skip
            t0 = time.perf_counter()
            rc = subprocess.call(cmd)
            if not out_json.exists():
                print(f"  {name} run {r + 1}: exit {rc} before its results, skipped", flush=True)
                shutil.rmtree(wdir, ignore_errors=True)
                continue
            if rc:  # seen once from deltalake: SIGABRT ("terminate called...") at interpreter exit
                print(f"  {name} run {r + 1}: exit {rc} after writing its results (kept)", flush=True)
            res = json.loads(out_json.read_text())
            for phase, samples in res["phases"].items():
                if not samples:
                    continue
                walls = [s[0] for s in samples]
                # an upsert run's figure is its median upsert; its memory the largest peak
                runs[name][phase].append([statistics.median(walls), statistics.median(s[1] for s in samples),
                                          max(s[2] for s in samples), max(s[3] for s in samples),
                                          statistics.median(s[4] for s in samples),
                                          statistics.median(s[5] for s in samples)])  # fmt: skip
            checks[name] = res["checks"]
            compacted[name] = res["compacted_rows"]  # the same in every run: the workload is fixed
            print(f"  {name} run {r + 1}/{repeat}: {time.perf_counter() - t0:.1f} s", flush=True)
            shutil.rmtree(wdir, ignore_errors=True)
    return {"runs": runs, "checks": checks, "compacted_rows": compacted}


def _median(runs: dict[str, Any], engine: str, phase: str, idx: int = 0) -> float | None:
    samples = runs.get(engine, {}).get(phase) or []
    return statistics.median(s[idx] for s in samples) if samples else None


def _user(runs: dict[str, Any], engine: str, phase: str) -> float | None:
    """A phase's median user CPU seconds: its CPU without the kernel's (page faults, file copies)."""
    samples = runs.get(engine, {}).get(phase) or []
    return statistics.median(max(0.0, s[1] - s[4]) for s in samples) if samples else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _mark(ratio: float | None, target: float) -> str:
    return "" if ratio is None else ("  ok" if ratio <= target else "  missed")


def _kernel(runs: dict[str, Any], engine: str, phase: str) -> str:
    """A phase's median system CPU and page faults (thousands): "1.23 s 456k"."""
    sys_s, faults = _median(runs, engine, phase, 4), _median(runs, engine, phase, 5)
    return "-" if sys_s is None or faults is None else f"{sys_s:.2f} s {faults / 1000:.0f}k"


def _f(x: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


# (label, engine, phase, peer engine, peer phase, target)
RATIOS = [
    ("bulk load / deltalake write_deltalake", "ours", "bulk", "deltalake", "bulk", 1.5),
    ("upsert median / deltalake merge", "ours", "upsert", "deltalake", "upsert", 0.75),
    ("BUCKET upsert median / deltalake merge", "ours_bucket", "upsert", "deltalake", "upsert", 0.4),
    ("MOR snapshot read / deltalake read", "ours", "read", "deltalake", "read", 1.5),
    ("compaction / pyarrow floor (same rows)", "ours", "compact", "floor_snappy", SAME_PHASE, 2.0),
    ("read after compaction / deltalake read", "ours", "read_compacted", "deltalake", "read_compacted", 1.5),
]
#: (label, engine, phase, peer engine, peer phase): ratios printed without a target. The issue's
#: read is each engine's first after its writes; the second shows the engines with the memory of
#: the first already taken from the system (deltalake's first read at 1M took 0.58 s of system
#: CPU for fresh memory, ours 0.12 s: the seventy-sixth entry of benchmarks/README.md)
INFO_RATIOS = [
    ("snapshot read again / deltalake's (info)", "ours", "read_again", "deltalake", "read_again"),
]


def report(result: dict[str, Any], expected: dict[str, int], rows: int) -> dict[str, float | None]:
    """Print the phase table, the issue's ratios and the memory ratios; returns the ratios."""
    runs = result["runs"]
    n = max((len(v) for e in runs.values() for v in e.values()), default=0)
    print(f"\n== {rows:,} rows: seconds (median of {n} runs; an upsert is a run's median upsert)")
    print(f"{'phase':16} {'deltalake':>10} {'floor':>14} {'ours':>10} {'ours BUCKET':>12}")
    for phase in ALL_PHASES:
        fl = _median(runs, "floor_snappy", phase)
        fz = _median(runs, "floor_zstd", phase)
        floor = f"{_f(fl)}/{_f(fz)}" if phase != "upsert" else _f(fl)
        print(f"{phase:16} {_f(_median(runs, 'deltalake', phase)):>10} {floor:>14} "
              f"{_f(_median(runs, 'ours', phase)):>10} {_f(_median(runs, 'ours_bucket', phase)):>12}")  # fmt: skip
    print("floor: pyarrow write_to_dataset / dataset read, snappy/zstd; upsert: fastavro file of the batch;")
    print(f"{SAME_PHASE}: the floor writing the rows our compaction wrote (compact: all final rows)")
    print("\nratio (ours / peer, wall; in brackets cpu, and user cpu alone)  ratio   target")
    ratios: dict[str, float | None] = {}
    for label, eng, phase, peer, peer_phase, target in RATIOS:
        r = _ratio(_median(runs, eng, phase), _median(runs, peer, peer_phase))
        c = _ratio(_median(runs, eng, phase, 1), _median(runs, peer, peer_phase, 1))
        u = _ratio(_user(runs, eng, phase), _user(runs, peer, peer_phase))
        ratios[label] = r
        brackets = f"({_f(c, '{:.2f}x')}; user {_f(u, '{:.2f}x')})"
        print(f"  {label:42} {_f(r, '{:.2f}x'):>7} {brackets}  <= {target}x{_mark(r, target)}")
    for label, eng, phase, peer, peer_phase in INFO_RATIOS:
        r = _ratio(_median(runs, eng, phase), _median(runs, peer, peer_phase))
        u = _ratio(_user(runs, eng, phase), _user(runs, peer, peer_phase))
        ratios[label] = r
        print(f"  {label:42} {_f(r, '{:.2f}x'):>7} (user {_f(u, '{:.2f}x')})")
    # Our compaction rewrites the file groups that have logs, not the table: at 1M rows about 40%
    # of the final rows (the bulk load's files are small, so the upserts' inserts rewrite some of
    # them, as Hudi's small-file routing does, and those never get logs), at 10M about 80%. The
    # line above has the floor write those rows; the two below are the earlier sessions' (the
    # floor writing every final row, whole and per row written), printed for continuity.
    written = result.get("compacted_rows", {})
    ours_rows, floor_rows = written.get("ours"), written.get("floor_snappy")
    ours_s, all_s = _median(runs, "ours", "compact"), _median(runs, "floor_snappy", "compact")
    all_label, row_label = "compaction / floor writing all final rows", "compaction per row written / floor's"
    ratios[all_label] = _ratio(ours_s, all_s)
    print(f"  {all_label:42} {_f(ratios[all_label], '{:.2f}x'):>7}")
    if ours_rows and floor_rows:
        ratios[row_label] = _ratio(_ratio(ours_s, ours_rows), _ratio(all_s, floor_rows))
        print(f"  {row_label:42} {_f(ratios[row_label], '{:.2f}x'):>7} "
              f"(ours {ours_rows:,} rows, the floor {floor_rows:,})")  # fmt: skip
    print("  (compaction / zstd floor, same rows: "
          f"{_f(_ratio(ours_s, _median(runs, 'floor_zstd', SAME_PHASE)), '{:.2f}x')}; "
          "deltalake optimize.compact: "
          f"{_f(_median(runs, 'deltalake', 'compact'))} s)")  # fmt: skip
    print("\npeak RSS growth per phase, MB (ours / deltalake, target <= 1.5x; '-' where deltalake's")
    print("phase grew less than 5 MB: its optimize.compact finds nothing to do after merges)")
    print(f"{'phase':16} {'deltalake':>10} {'floor':>8} {'ours':>8} {'ratio':>7} {'BUCKET':>8} {'ratio':>7}")
    for phase in PHASES:
        d = _median(runs, "deltalake", phase, 2)
        fl = _median(runs, "floor_snappy", phase, 2)
        o = _median(runs, "ours", phase, 2)
        b = _median(runs, "ours_bucket", phase, 2)
        delta_mb = d if d is not None and d >= 5 else None
        mo, mb = _ratio(o, delta_mb), _ratio(b, delta_mb)
        ratios[f"memory {phase}"] = mo
        print(f"{phase:16} {_f(d, '{:.0f}'):>10} {_f(fl, '{:.0f}'):>8} {_f(o, '{:.0f}'):>8} "
              f"{_f(mo, '{:.2f}x'):>7} {_f(b, '{:.0f}'):>8} {_f(mb, '{:.2f}x'):>7}")  # fmt: skip
    # growth depends on what the allocator kept from the phases before (freed, not returned):
    # the process's whole peak shows what that retention costs
    print("peak RSS of the process during the phase, MB (deltalake / ours / ours BUCKET): " + ", ".join(
        f"{phase} {'/'.join(_f(_median(runs, e, phase, 3), '{:.0f}') for e in ('deltalake', 'ours', 'ours_bucket'))}"
        for phase in PHASES))  # fmt: skip
    # the first touch of a page is the kernel's work, and on a VM the host's: what a phase's system
    # time and page faults say about the memory it touched, apart from its own CPU
    print("system CPU s, page faults (k) of each phase (deltalake / ours / ours BUCKET): " + ", ".join(
        f"{phase} " + " / ".join(_kernel(runs, e, phase) for e in ("deltalake", "ours", "ours_bucket"))
        for phase in PHASES))  # fmt: skip
    bad = {e: c for e, c in result["checks"].items()
           if any(v != [expected["rows"], expected["ts_sum"]] for v in c.values())}  # fmt: skip
    print(f"\nreads checked against the expected table ({expected['rows']:,} rows, sum(ts)): "
          + ("all equal" if not bad else f"DIFFERENT: {bad}"))  # fmt: skip
    return ratios


def run_size(
    rows: int, upserts: int, upsert_rows: int, repeat: int, engines: Sequence[str]
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="hudi-defaults-bench-"))
    try:
        data = work / "data"
        data.mkdir()
        t0 = time.perf_counter()
        expected = generate(data, rows, upserts, upsert_rows)
        print(f"data: {rows:,} rows + {upserts} x {upsert_rows:,} upserts -> {expected['rows']:,} rows "
              f"({time.perf_counter() - t0:.1f} s to generate)", flush=True)  # fmt: skip
        result = measure(data, work, upserts, repeat, engines)
        return report(result, expected, rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def profile_phase(phase: str, engine: str, out: str, rows: int, upserts: int, upsert_rows: int) -> None:
    """Run ``engine``'s sequence in this process (after the same warm-up as a measured run) with
    cProfile over ``phase``; print the top cumulative entries under packages/."""
    import pstats

    work = Path(tempfile.mkdtemp(prefix="hudi-defaults-profile-"))
    try:
        (work / "data").mkdir()
        (work / "t").mkdir()
        generate(work / "data", rows, upserts, upsert_rows)
        warm_up(ENGINE_CLASSES[engine], work / "data", work)
        res = run_sequence(
            ENGINE_CLASSES[engine](str(work / "t")), work / "data", upserts, profile=(phase, out)
        )
        walls = [s[0] for s in res["phases"][phase]]
        print(f"{engine} {phase}: {len(walls)} call(s), {sum(walls):.2f} s wall under the profiler; "
              f"stats of all threads (times add up over threads) in {out}")  # fmt: skip
        stats = pstats.Stats(out)
        stats.sort_stats("cumulative").print_stats("packages/", 25)
        stats.sort_stats("tottime").print_stats(15)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _code_revision() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %cd", "--date=short", "--",
                              "packages"], capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "-C", str(root), "status", "--short", "--", "packages/*/src"],
                               capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + (" + uncommitted changes under packages/*/src" if dirty else "")


#: a fresh process that fills this many MB and prints the system CPU seconds it took
_TOUCH_MB = 1024
_TOUCH = (
    "import resource, numpy as np; r = resource.getrusage(resource.RUSAGE_SELF); "
    f"a = np.ones({_TOUCH_MB} << 20, np.uint8); "
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_stime - r.ru_stime)"
)


def first_touch_costs(idle_s: float = 5.0) -> tuple[float, float]:
    """System CPU seconds a fresh process spends filling 1 GB: right after another process freed
    as much, and ``idle_s`` later. On a virtual machine whose balloon reports free memory to its
    host, the second is many times the first (benchmarks/README.md, the forty-ninth entry): the
    10M-row phases pay it for every GB they touch that nothing freed just before."""

    def touch() -> float:
        out = subprocess.run([sys.executable, "-c", _TOUCH], capture_output=True, text=True, check=True)
        return float(out.stdout.strip())

    touch()
    reused = touch()
    time.sleep(idle_s)
    return reused, touch()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--upserts", type=int, default=5)
    ap.add_argument("--upsert-rows", type=int, default=None, help="rows per upsert (default rows/10)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of every engine; medians are printed")
    ap.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    ap.add_argument("--scale", action="store_true", help="also the same shape at --scale-rows (scaling line)")
    ap.add_argument("--scale-rows", type=int, default=10_000_000)
    ap.add_argument("--scale-repeat", type=int, default=1)
    ap.add_argument("--profile", choices=PHASES, help="instead: cProfile this phase of --profile-engine")
    ap.add_argument("--profile-engine", choices=("ours", "ours_bucket"), default="ours")
    ap.add_argument("--profile-out", default="/tmp/defaults_bench.prof")
    ap.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    upsert_rows = args.upsert_rows or max(2, args.rows // 10)
    if args.worker:
        worker(args.worker, Path(args.data), Path(args.work), args.upserts, Path(args.out))
        return 0
    if args.profile:
        profile_phase(
            args.profile, args.profile_engine, args.profile_out, args.rows, args.upserts, upsert_rows
        )
        return 0
    engines = list(args.engines)
    try:
        import deltalake
    except ImportError:
        print("deltalake is not installed (pip install -r requirements-bench.txt): no deltalake ratios")
        engines = [e for e in engines if e != "deltalake"]
    else:
        print(
            f"deltalake {deltalake.__version__}, pyarrow {pa.__version__}; code measured: {_code_revision()}"
        )
    print(f"{os.cpu_count()} CPUs, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    t0 = time.perf_counter()
    ratios = run_size(args.rows, args.upserts, upsert_rows, args.repeat, engines)
    if args.scale:
        big_upsert_rows = upsert_rows * args.scale_rows // args.rows  # the same shape
        big = run_size(args.scale_rows, args.upserts, big_upsert_rows, args.scale_repeat, engines)
        print(f"\nscaling: each ratio at {args.scale_rows:,} rows / at {args.rows:,} (target <= 1.25x)")
        for label, r in ratios.items():
            s = _ratio(big.get(label), r)
            print(f"  {label:42} {_f(r, '{:.2f}x'):>7} -> {_f(big.get(label), '{:.2f}x'):>7}  "
                  f"{_f(s, '{:.2f}x'):>7}{_mark(s, 1.25)}")  # fmt: skip
    reused, idle = first_touch_costs()
    print(f"\nthe box: filling 1 GB of fresh memory took {reused:.2f} s of system CPU right after "
          f"another process freed as much, {idle:.2f} s five seconds later ({idle / max(reused, 1e-3):.0f}x)")  # fmt: skip
    print(f"total {time.perf_counter() - t0:.0f} s, load average now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
