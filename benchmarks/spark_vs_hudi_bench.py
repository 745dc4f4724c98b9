"""Our Spark pipeline against Apache Hudi's own (issue 22): the same workload, options and cores.

    .venv/bin/python benchmarks/spark_vs_hudi_bench.py                      # 1M rows, SIMPLE and BUCKET
    .venv/bin/python benchmarks/spark_vs_hudi_bench.py --rows 10000000 --index SIMPLE --driver-memory 12g --no-arrow --one-at-a-time --no-crossed --no-spark35  # scaling line (~55 min)

Workload: ``defaults_bench.generate``'s trips table (uuid key, ``ts`` ordering field, 9 columns,
partitioned by ``city`` over 5 values), bulk_insert of ``--rows`` rows (then four more times into new
tables: the JIT's first writes, then a steady-state median), ``--upserts`` upserts of
a tenth as many rows (half updates), into a MERGE_ON_READ table; then reads of the table with
its log files: a snapshot scan into Spark's ``noop`` sink, ``count()``, a ``groupBy`` aggregate,
the snapshot collected to Arrow, a read_optimized scan, and the count of one city and of one
record key (each read the median of three; ours through ``hudi_spark.read``; the engines take
turns read by read, see :func:`run_in_turns`). Apache Hudi 0.15 runs in the Apache
Hudi test tier's environment (PySpark 3.5.1 and Hudi's Spark bundle, made by
``tests/interop/harness/oracle.py``), ours in the project's (PySpark 4, ``hudi_spark``); each engine
in its own process and Spark session, ``local[2]``, the same ``hoodie.*`` options (inline
compaction and the metadata table off on both: ours has none), inputs cached in Spark before
timing (the bulk input in row groups of 131,072 rows, so Spark reads it as one partition per core). Both engines' reads must give the same answers (row count, sum of ``ts``, the per-city
sums); the ratios are ours over Apache Hudi's, measured in the same run. Our local engine's
bulk_insert of the same rows with the same options (``HudiTable.bulk_insert``, fresh processes,
median of three) is the other measure of our Spark bulk_insert (``--no-local`` skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ENGINE = HERE / "spark_vs_hudi_engine.py"
PHASES = ["bulk_insert", "bulk_insert_again", "bulk_insert_warm", "first_upsert", "next_upserts", "scan_noop", "count", "group_by", "to_arrow",
          "ro_scan_noop", "count_city", "count_key", "count_since", "format_scan_noop", "format_count",
          "format_count_city", "filters_count_city", "format_count_key", "filters_count_key",
          "format_count_since", "filters_count_since", "datasource_scan_noop", "datasource_count"]  # fmt: skip
#: the reads, which the engines also make of each other's table
READS = ["scan_noop", "count", "group_by", "to_arrow", "ro_scan_noop"]
#: issue 22's targets, ours / Apache Hudi's (None: the figure is reported, no target)
TARGETS = {"bulk_insert": 0.5, "bulk_insert_again": 0.5, "bulk_insert_warm": 0.5, "first_upsert": 0.5, "next_upserts": 0.5, "scan_noop": 0.75, "count": 0.75,
           "group_by": 0.75, "to_arrow": 0.75, "ro_scan_noop": 0.75}  # fmt: skip
#: the phases of the workload (the repeated bulk_inserts are not)
WORKLOAD = [p for p in TARGETS if p not in ("bulk_insert_again", "bulk_insert_warm")]


#: rows per row group of the inputs: Spark splits a parquet file between tasks only at row
#: group boundaries, and pyarrow writes up to 1,048,576 rows in one, so a 1M-row file was one
#: Spark partition and the bulk_insert one task on both engines (an input of several files, as
#: Spark or any other writer leaves them, spreads over the cores); the 1M-row upserts of the 10M
#: line likewise (their first stage, reading the input into the key shuffle, ran as one task)
INPUT_ROW_GROUP = 131_072


def spread_row_groups(path: Path) -> None:
    """Rewrite ``path`` (the same rows in the same order) with :data:`INPUT_ROW_GROUP`-row groups."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    pq.write_table(table, path, row_group_size=INPUT_ROW_GROUP)


def engine_command(engine: str, data: Path, work: Path, index: str, upserts: int, master: str = "local[2]",
                   reads_of: str | None = None, driver_memory: str = "3g", no_arrow: bool = False,
                   spark35: bool = False, cpus: set[int] | None = None) -> tuple[list[str], dict[str, str]]:  # fmt: skip
    """The command and environment of one engine's process: the workload into its own table, or
    (``reads_of`` an engine) only the reads, of the table that engine wrote. ``spark35``: ours in
    the PySpark 3.5 venv of ``make test-spark35`` (``tests/tools/spark35.py``) instead of the
    project's. ``cpus``: the process (and the JVM and Python workers it starts) pinned to these CPUs."""
    sys.path.insert(0, str(ROOT / "tests" / "interop" / "harness"))
    sys.path.insert(0, str(ROOT / "tests" / "tools"))
    foreign = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "SPARK_", "PYSPARK"))}
    if engine == "hudi":
        from oracle import ensure_oracle

        env_info = ensure_oracle()
        python, extra, env = str(env_info.python), ["--bundle", str(env_info.bundle)], foreign
    elif spark35:
        from spark35 import ensure as ensure_spark35

        python, extra, env = str(ensure_spark35()), [], foreign
    else:
        python, extra, env = sys.executable, [], dict(os.environ)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    table = work / f"{reads_of or engine}-{index}"
    cmd = [python, str(ENGINE), "--engine", engine, "--data", str(data), "--table", str(table),
           "--index", index, "--upserts", str(upserts), "--master", master,
           "--driver-memory", driver_memory, *extra]  # fmt: skip
    if reads_of:
        cmd.append("--reads-only")
    if no_arrow:
        cmd.append("--no-arrow")
    if cpus:
        cmd += ["--cpus", ",".join(map(str, sorted(cpus)))]
    return cmd, env


def run_engine(
    engine: str, data: Path, work: Path, index: str, upserts: int, **kwargs: Any
) -> dict[str, Any]:
    """One engine's whole run (:func:`engine_command`'s arguments), its reads timed by itself."""
    cmd, env = engine_command(engine, data, work, index, upserts, **kwargs)
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("@@bench ")]
    if done.returncode != 0 or not lines:
        _failed(f"{engine} {index}", done.returncode, done.stderr or done.stdout)
    return _writes(json.loads(lines[-1][len("@@bench ") :]))


def _failed(what: str, code: int | None, said: str) -> NoReturn:
    lines = said.strip().splitlines()
    causes = [
        ln for ln in lines if ("Error" in ln or "Exception" in ln) and not ln.lstrip().startswith("at ")
    ]
    tail = "\n".join(causes[-8:] + lines[-15:])
    raise SystemExit(f"{what} failed (exit {code}):\n{tail}")


def _writes(out: dict[str, Any]) -> dict[str, Any]:
    ups = out.pop("upserts", None)
    out["first_upsert"] = ups[0] if ups else None
    out["next_upserts"] = statistics.mean(ups[1:]) if ups and len(ups) > 1 else None
    return out


class Served:
    """An engine's process in ``--serve`` mode: it writes (:meth:`wait_ready`), then runs one
    read per :meth:`read` call, so two engines take turns read by read."""

    def __init__(self, what: str, cmd: list[str], env: dict[str, str], log: Path) -> None:
        self.what, self.log_path = what, log
        self._log = open(log, "w")  # Spark's log: a pipe nobody drains would block the JVM
        self.proc = subprocess.Popen([*cmd, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._log, text=True, env=env)  # fmt: skip
        self.out: dict[str, Any] = {}

    def _next(self, tag: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(f"@@{tag} "):
                got: dict[str, Any] = json.loads(line[len(tag) + 3 :])
                return got
        self._log.flush()
        _failed(self.what, self.proc.wait(), self.log_path.read_text(errors="replace"))

    def wait_ready(self) -> list[str]:
        """Block until the writes are done; the names of the reads this engine runs."""
        self.out = _writes(self._next("ready"))
        reads: list[str] = self.out.pop("reads")
        return reads

    def read(self, name: str) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        seconds: float = self._next("read")["seconds"]
        return seconds

    def finish(self) -> dict[str, Any]:
        """End the reads: the engine's writes, answers and worker peaks."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        done = self._next("bench")
        self.proc.wait()
        self._log.close()
        return {**self.out, "answers": done["answers"], "worker_rss_mb": done["worker_rss_mb"]}


#: a read of ours that Apache Hudi answers with its own plain read (the same query)
HUDI_SAME = {"format_scan_noop": "scan_noop", "format_count": "count", "format_count_city": "count_city",
             "filters_count_city": "count_city", "format_count_key": "count_key",
             "filters_count_key": "count_key", "format_count_since": "count_since",
             "filters_count_since": "count_since", "datasource_scan_noop": "scan_noop",
             "datasource_count": "count"}  # fmt: skip


def run_in_turns(
    data: Path, work: Path, index: str, upserts: int, **kwargs: Any
) -> dict[str, dict[str, Any]]:
    """Both engines' workloads (Apache Hudi's, then ours: the writes one engine at a time), then
    their reads taking turns: each read's first run on both, then three rounds, the engine that
    goes first alternating (Hudi, ours; ours, Hudi; Hudi, ours), each figure the median of its
    three. The box's speed drifts by tens of percent over minutes; taking turns puts each pair of
    figures a second apart instead of the minutes between two whole runs. A read of ours through
    another path (``format("hudi")``, ``filters=``) takes turns with Hudi's same query, which is
    then Hudi's figure for it."""
    engines, reads = {}, {}
    for engine in ("hudi", "ours"):
        cmd, env = engine_command(engine, data, work, index, upserts, **kwargs)
        engines[engine] = Served(f"{engine} {index}", cmd, env, work / f"{engine}-{index}.log")
        reads[engine] = engines[engine].wait_ready()  # the other engine idles meanwhile
    times: dict[str, dict[str, list[float]]] = {"hudi": {}, "ours": {}}
    firsts: dict[str, dict[str, float]] = {"hudi": {}, "ours": {}}
    for name in reads["ours"]:  # every read Hudi runs, and ours through its other paths
        asked = {"hudi": HUDI_SAME.get(name, name), "ours": name}
        for rnd in range(4):
            order = ("hudi", "ours") if rnd % 2 == 0 else ("ours", "hudi")
            for engine in order:
                seconds = engines[engine].read(asked[engine])
                if rnd == 0:
                    firsts[engine][name] = seconds
                else:
                    times[engine].setdefault(name, []).append(seconds)
    results = {}
    for engine, served in engines.items():
        out = served.finish()
        for name, runs in times[engine].items():
            out[name] = statistics.median(runs)
            out[f"{name}_first"] = firsts[engine][name]
        results[engine] = out
    return results


def report(results: dict[tuple[str, str], dict[str, Any]], indexes: list[str]) -> None:
    print(
        "\nseconds: writes one run each (first_upsert: the first; next_upserts: mean of the others), "
        "reads the median of three after a first run (printed below the table);\n"
        "count_city / count_key / count_since: count() of one city / one record key / the rows of the "
        'last upsert (ts >= its least); format_*: ours through spark.read.format("hudi") (hudi_spark.read '
        "in a driver that imported hudi_spark) instead of hudi_spark.read; datasource_*: through PySpark's "
        "Python data source (hoodie.spark.read.format.fast=false); filters_count_*: hudi_spark.read(filters=[city = berlin] / [uuid = key] / "
        "[ts >= since]); each against Hudi's same query"
    )
    head = "phase".ljust(18) + "".join(f"{e} {i}".rjust(16) for i in indexes for e in ("hudi", "ours"))
    print(head + "".join(f"{'ratio ' + i:>14}" for i in indexes) + "   target")
    for phase in PHASES:
        row = phase.ljust(18)
        ratios = []
        for i in indexes:
            h = results[("hudi", i)].get(phase, results[("hudi", i)].get(HUDI_SAME.get(phase, phase)))
            o = results[("ours", i)].get(phase)
            row += f"{h:16.2f}" if h is not None else " " * 16
            row += f"{o:16.2f}" if o is not None else " " * 16
            ratios.append(o / h if h and o is not None else None)
        row += "".join(f"{r:13.2f}x" if r is not None else " " * 14 for r in ratios)
        target = TARGETS.get(phase)
        row += f"   <= {target}x" if target else ""
        print(row)
    for i in indexes:  # the reads' unmeasured first runs: the JVM still compiling the scan
        firsts = [
            (p, results[("hudi", i)].get(f"{p}_first"), results[("ours", i)].get(f"{p}_first")) for p in READS
        ]
        print(f"first run of each read, {i} (hudi / ours): "
              + ", ".join(f"{p} {h:.2f} / {o:.2f}" for p, h, o in firsts if h is not None and o is not None))  # fmt: skip
    for i in indexes:
        h, o = results[("hudi", i)]["answers"], results[("ours", i)]["answers"]
        same = h == o
        print(f"answers {i}: {'equal' if same else 'DIFFER'} ({o['rows']:,} rows, sum(ts) {o['ts_sum']})")
        if not same:
            print(f"  hudi: {h}\n  ours: {o}")
    print(
        f"spark: hudi {results[('hudi', indexes[0])]['spark']}, ours {results[('ours', indexes[0])]['spark']}"
    )
    for i in indexes:  # where each bulk_insert's CPU goes: the JVM's JIT settles over the first writes
        for e in ("hudi", "ours"):
            cpu = results[(e, i)].get("bulk_cpu") or []
            print(f"{e} {i}, CPU of each bulk_insert in order, JVM + Python workers (s): "
                  + ", ".join(f"{c['jvm']:.2f} + {c['python_workers']:.2f}" for c in cpu))  # fmt: skip
    for i in indexes:  # issue 22: a Python worker's memory stays bounded by the batch, not the slice
        rss = results[("ours", i)].get("worker_rss_mb", {})
        print(f"ours {i}, peak RSS of a Python worker (MB): " + ", ".join(f"{k} {v}" for k, v in rss.items()))


def report_same_table(results: dict[tuple[str, str], dict[str, Any]],
                      crossed: dict[tuple[str, str], dict[str, Any]], indexes: list[str]) -> None:  # fmt: skip
    """Both readers on each table: the readers compared on the same bytes (the writers lay the
    same workload out differently: how many file groups, which updates go to log files)."""
    print("\nthe same table read by both engines (seconds, median of three; ratio ours / Apache Hudi's)")
    print("table".ljust(24) + "".join(f"{p:>24}" for p in READS))
    for i in indexes:
        for writer in ("ours", "hudi"):
            # a reader's figures: its own run on its own table, its reads-only run on the other's
            hudi, ours = ((results if e == writer else crossed)[(e, i)] for e in ("hudi", "ours"))
            row = f"{writer} {i} ({results[(writer, i)]['log_files']} logs)".ljust(24)
            for p in READS:
                if p in hudi and p in ours:
                    row += f"{hudi[p]:8.2f} {ours[p]:6.2f} {ours[p] / hudi[p]:6.2f}x".rjust(24)
                else:
                    row += "-".rjust(24)
            print(row)
            if hudi["answers"] != ours["answers"]:
                print(f"  answers DIFFER: hudi {hudi['answers']}, ours {ours['answers']}")


def report_spark35(results: dict[tuple[str, str], dict[str, Any]], on35: dict[str, dict[str, Any]],
                   indexes: list[str]) -> None:  # fmt: skip
    """Our reads of our table on PySpark 3.5 (``hudi_spark.read`` there too) beside the same reads
    on PySpark 4 and Apache Hudi's of its own table (the table of the main report's ratios)."""
    phases = [*READS, "count_city", "count_key", "count_since"]
    print(f"\nours on Spark {on35[indexes[0]]['spark']} (hudi_spark.read, our table; seconds, median of three): "
          "ours on 4 / ours on 3.5 / Apache Hudi; ratio 3.5 over Apache Hudi")  # fmt: skip
    print("index".ljust(10) + "".join(f"{p:>30}" for p in phases))
    for i in indexes:
        ours4, ours35, hudi = results[("ours", i)], on35[i], results[("hudi", i)]
        row = i.ljust(10)
        for p in phases:
            if p in ours35 and p in hudi:
                cell = f"{ours4.get(p, float('nan')):.2f} / {ours35[p]:.2f} / {hudi[p]:.2f} {ours35[p] / hudi[p]:.2f}x"
                row += cell.rjust(30)
            else:
                row += "-".rjust(30)
        print(row)
        if ours35["answers"] != ours4["answers"]:
            print(f"  answers DIFFER: on 3.5 {ours35['answers']}, on 4 {ours4['answers']}")


def local_bulk(data: Path, work: Path, index: str, repeats: int = 3) -> float:
    """Our local engine's bulk_insert of the same rows with the same options: the median of
    ``repeats`` fresh processes, each after a warm-up on a throwaway table (issue 22: the Spark
    bulk_insert within 1.5x of it)."""
    times = []
    for k in range(repeats):
        table = work / f"local-{index}-{k}"
        cmd = [sys.executable, __file__, "--local-bulk-worker", str(data), str(table), index]
        done = subprocess.run(cmd, capture_output=True, text=True)
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("@@local ")]
        if done.returncode != 0 or not lines:
            _failed(f"local engine {index}", done.returncode, done.stderr or done.stdout)
        times.append(float(lines[-1].split()[1]))
    return statistics.median(times)


def _local_bulk_worker(data: Path, table: Path, index: str) -> None:
    import time

    import pyarrow.parquet as pq
    from defaults_bench import Ours
    from spark_vs_hudi_engine import write_options

    # defaults_bench's engine (the same table fields), with the Spark side's other options
    fields = ("hoodie.table.name", "hoodie.datasource.write.")
    options = {k: v for k, v in write_options(index).items() if not k.startswith(fields)}

    def engine(path: Path) -> Ours:
        ours = Ours(str(path))
        ours.options = options
        return ours

    rows = pq.read_table(data / "base.parquet")
    engine(table.with_name(table.name + "-warm-up")).bulk(rows.slice(0, 2000))
    start = time.perf_counter()
    engine(table).bulk(rows)
    print(f"@@local {time.perf_counter() - start:.4f}")


def report_local(results: dict[tuple[str, str], dict[str, Any]], local: dict[str, float]) -> None:
    for index, seconds in local.items():
        for phase in ("bulk_insert", "bulk_insert_again", "bulk_insert_warm"):
            spark = results[("ours", index)][phase]
            print(f"ours {index}, {phase} on Spark / our local engine (same rows, same options, median of 3 "
                  f"fresh processes): {spark:.2f} / {seconds:.2f} s = {spark / seconds:.2f}x (target <= 1.5x)")  # fmt: skip


def report_scaling(index: str, label: str, one: dict[str, Any], two: dict[str, Any], upserts: int) -> None:
    """The whole workload's and each phase's time on ``label`` (``one``) over ``local[2]`` (``two``)."""

    # the workload's phases with a target; next_upserts is a mean of upserts - 1
    def whole(r: dict[str, Any]) -> float:
        return sum((r.get(p) or 0.0) * (upserts - 1 if p == "next_upserts" else 1) for p in WORKLOAD)

    w1, w2 = whole(one), whole(two)
    print(
        f"ours {index}, whole workload: {label} {w1:.1f} s, local[2] {w2:.1f} s: {w1 / w2:.2f}x (target >= 1.7x)"
    )
    print(f"  by phase, {label} / local[2] (s): " + ", ".join(
        f"{p} {one[p]:.2f} / {two[p]:.2f} = {one[p] / two[p]:.2f}x" for p in WORKLOAD if one.get(p) and two.get(p)
    ))  # fmt: skip


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--upserts", type=int, default=5)
    p.add_argument("--index", nargs="+", choices=["SIMPLE", "BUCKET"], default=["SIMPLE", "BUCKET"])
    p.add_argument("--driver-memory", default="3g",
                   help="spark.driver.memory of both engines (local mode: the executors' memory too)")  # fmt: skip
    p.add_argument("--work", default=None, help="folder for the data and tables (default: a temporary one)")
    p.add_argument("--no-arrow", action="store_true",
                   help="skip the collect to Arrow on both sides (the 10M line: 12.5M rows exceed Hudi's driver)")  # fmt: skip
    p.add_argument("--no-crossed", action="store_true", help="skip each engine's reads of the other's table")
    p.add_argument("--no-spark35", action="store_true",
                   help="skip our reads on PySpark 3.5 (the venv of make test-spark35)")  # fmt: skip
    p.add_argument("--one-at-a-time", action="store_true",
                   help="each engine's whole run alone, timing its own reads (two engines' sessions at once "
                        "would not fit: the 10M line's 12 GB drivers)")  # fmt: skip
    p.add_argument("--no-local", action="store_true", help="skip our local engine's bulk load of the rows")
    p.add_argument("--local-bulk-worker", nargs=3, metavar=("DATA", "TABLE", "INDEX"), help=argparse.SUPPRESS)
    p.add_argument(
        "--scaling",
        action="store_true",
        help="also ours on local[1], free and pinned to one CPU: the whole workload's local[1] / local[2]",
    )
    p.add_argument("--pinned-only", action="store_true",
                   help="with --scaling: only local[1] pinned to one CPU (the 10M line: a run of ours is ~10 min)")  # fmt: skip
    a = p.parse_args(argv)
    if a.pinned_only and not a.scaling:
        p.error("--pinned-only chooses among --scaling's runs: give --scaling too")
    sys.path.insert(0, str(HERE))
    if a.local_bulk_worker:
        data, table, index = a.local_bulk_worker
        _local_bulk_worker(Path(data), Path(table), index)
        return 0
    from defaults_bench import generate

    with tempfile.TemporaryDirectory(prefix="spark-vs-hudi-", dir=a.work) as tmp:
        work = Path(tmp)
        data = work / "data"
        data.mkdir()
        generate(data, a.rows, a.upserts, max(1, a.rows // 10))
        for name in ("base.parquet", *(f"upsert-{k}.parquet" for k in range(a.upserts))):
            spread_row_groups(data / name)
        print(f"{a.rows:,} rows, {a.upserts} upserts of {max(1, a.rows // 10):,}; MERGE_ON_READ, local[2]")
        results = {}
        for index in a.index:
            if a.one_at_a_time:
                for engine in ("hudi", "ours"):
                    results[(engine, index)] = run_engine(engine, data, work, index, a.upserts,
                                                          driver_memory=a.driver_memory, no_arrow=a.no_arrow)  # fmt: skip
            else:
                both = run_in_turns(
                    data, work, index, a.upserts, driver_memory=a.driver_memory, no_arrow=a.no_arrow
                )
                results.update({(engine, index): r for engine, r in both.items()})
            for engine in ("hudi", "ours"):
                r = results[(engine, index)]
                print(
                    f"  {engine} {index}: bulk {r['bulk_insert']:.1f} s, scan {r['scan_noop']:.1f} s",
                    flush=True,
                )
        report(results, a.index)
        if not a.no_local:
            report_local(results, {index: local_bulk(data, work, index) for index in a.index})
        if not a.no_crossed:
            crossed = {}
            for index in a.index:
                for engine, writer in (("hudi", "ours"), ("ours", "hudi")):
                    crossed[(engine, index)] = run_engine(engine, data, work, index, a.upserts, reads_of=writer,
                                                          driver_memory=a.driver_memory, no_arrow=a.no_arrow)  # fmt: skip
            report_same_table(results, crossed, a.index)
        if not a.no_spark35:
            on35 = {index: run_engine("ours", data, work, index, a.upserts, reads_of="ours", driver_memory=a.driver_memory,
                                      no_arrow=a.no_arrow, spark35=True) for index in a.index}  # fmt: skip
            report_spark35(results, on35, a.index)
        if a.scaling:
            for index in a.index:
                two = results[("ours", index)]
                # local[1] is one task at a time, but a PySpark task is two processes (the JVM
                # thread feeding Arrow batches and the Python worker consuming them) plus their
                # threads: on this 2-core machine it keeps both cores busy. Pinned to one CPU,
                # local[1] is what one core does alone.
                runs = [("local[1]", None), ("local[1] pinned to one CPU", {min(os.sched_getaffinity(0))})]
                for label, cpus in runs[1:] if a.pinned_only else runs:
                    one = run_engine("ours", data, work, index, a.upserts, master="local[1]",
                                     driver_memory=a.driver_memory, no_arrow=a.no_arrow, cpus=cpus)  # fmt: skip
                    report_scaling(index, label, one, two, a.upserts)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
