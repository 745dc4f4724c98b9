"""Random layouts through the Apache Hudi tier, outside the test run: every field of a workload
(table type, index, payload, key generator, log format, compaction, cleaning, hive style, the
operations) drawn from the seed. Each workload is written by us (our snapshot against the model,
then every query against Hudi's answer on our table) and by Apache Hudi (our answers against its,
on its table); one line per write, ``OK``, ``DIFF`` (what differs) or ``ERROR``.

    .venv/bin/python tests/interop/harness/explore.py 5000 30 --work /tmp/explore
    .venv/bin/python tests/interop/harness/explore.py 6000 20 --spark   # ours through hudi_spark.write
    .venv/bin/python tests/interop/harness/explore.py 7000 20 --stream  # ours streamed in small chunks
    .venv/bin/python tests/interop/harness/explore.py 8000 20 --cluster # Hudi clusters the table midway
    .venv/bin/python tests/interop/harness/explore.py 8400 20 --cluster ours  # we cluster it midway
    .venv/bin/python tests/interop/harness/explore.py 9700 10 --payload non_defaults
    .venv/bin/python tests/interop/harness/explore.py 9900 10 --payload postgres_debezium
    .venv/bin/python tests/interop/harness/explore.py 13400 10 --rich  # decimal, date, timestamp, nested
    .venv/bin/python tests/interop/harness/explore.py 14500 10 --spark-read  # hudi_spark.read answers too
    .venv/bin/python tests/interop/harness/explore.py 15400 10 --evolve  # a column added, an int widened
    .venv/bin/python tests/interop/harness/explore.py 17100 10 --store hdfs  # tables on an HDFS mini cluster
    .venv/bin/python tests/interop/harness/explore.py 17200 10 --store s3  # in a bucket of moto's S3 server
    .venv/bin/python tests/interop/harness/explore.py 17700 10 --store s3 --spark-read  # Spark's S3A reads too
    .venv/bin/python tests/interop/harness/explore.py 18300 10 --turns  # Hudi and we write one table in turns
    .venv/bin/python tests/interop/harness/explore.py 18500 10 --turns --keygen complex1
    .venv/bin/python tests/interop/harness/explore.py 19500 10 --turns --drop  # drop.partition.columns
    .venv/bin/python tests/interop/harness/explore.py 21000 10 --cdc  # Hudi's CDC query on both tables

Seeds 5000-5069 ran clean but for one Hudi quirk (docs/interop.md, "Hudi quirks"). A ``DIFF`` is a lead, not a
verdict: replay the workload with Hudi writing (``hudi`` lines) to see which side the model or
Hudi's answer takes."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[2] / "tools"))
sys.path.insert(0, str(Path(__file__).parents[2] / "tools" / "minihdfs"))

from hudi_core import HudiTable
from hudi_core.storage import storage_for
from oracle import S3_LOCK, HudiOracle, ensure_oracle, hudi_uri, s3_oracle
from runner import (
    CDC_QUERY,
    CDC_UNRENDERED,
    cdc_changes,
    cdc_texts,
    compare_all,
    core_read,
    hudi_write,
    model_differences,
    our_write,
    procedure_options,
    spark_readers,
    spark_write,
)
from s3a import s3a_session_conf
from workloads import KEYGENS, PAYLOADS, Workload, generate


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("start", type=int, help="first seed")
    p.add_argument("count", type=int, help="how many seeds")
    p.add_argument("--work", default="/tmp/hudi-py-explore", help="folder for the tables (emptied per write)")
    p.add_argument(
        "--spark", action="store_true", help="our writes through hudi_spark.write (PySpark 4, local[2])"
    )
    p.add_argument(
        "--cluster",
        nargs="?",
        const="hudi",
        choices=["hudi", "ours"],
        help="Apache Hudi (run_clustering scheduleAndExecute) or we (HudiTable.cluster; every third "
        "seed sorted by ts) cluster the table after the third step",
    )
    p.add_argument(
        "--stream",
        action="store_true",
        help="our writes as iterators of small batches (runner.STREAMED); Hudi's writes are not repeated",
    )
    p.add_argument("--payload", choices=sorted(PAYLOADS), help="every seed's payload (default: drawn)")
    p.add_argument(
        "--keygen",
        choices=[*KEYGENS, "complex1"],
        help="every seed's key generator (default: drawn; complex1, never drawn: the complex key "
        "generator over one record key field)",
    )
    p.add_argument(
        "--rich",
        action="store_true",
        help="the rows also carry decimal, date, timestamp, boolean, binary, list, map and nested "
        "struct columns (workloads.RICH), the layout and other values as the seed draws them without",
    )
    p.add_argument(
        "--evolve",
        action="store_true",
        help="the table's schema changes between writes: a new nullable column from a drawn step on, "
        "an int column widened to long from another (workloads.Workload.evolve)",
    )
    p.add_argument(
        "--spark-read",
        action="store_true",
        help="every query is also put to hudi_spark.read (PySpark 4, local[2]) on its default paths "
        "and with hoodie.spark.read.jvm.delta, and to the Python data source (format('hudi') with "
        "hoodie.spark.read.format.fast=false), each against Hudi's answer (--store s3: our session's "
        "JVM has Hadoop's S3A connector, and hoodie.spark.read.jvm.object.store has Spark's parquet "
        "reader read base files there too)",
    )
    p.add_argument(
        "--store",
        choices=["local", "hdfs", "s3"],
        default="local",
        help="where the tables live: under --work; on an HDFS mini cluster on loopback (Hudi's "
        "writes then keep no metadata table: its bundle's HBase fails on Hadoop 3's HDFS client); "
        "in a bucket of moto's S3 server on loopback (Hudi through the S3A connector, s3a://, with "
        "the in-process lock provider its table services need there)",
    )
    p.add_argument(
        "--drop",
        action="store_true",
        help="tables with hoodie.datasource.write.drop.partition.columns=true, created by an insert (a "
        "MOR table Hudi's upsert creates keeps its partition columns; Hudi 0.15's bulk_insert writes "
        "such a table's files empty); key generators whose partition values are data values (a "
        "timestamp or custom seed keys as simple)",
    )
    p.add_argument(
        "--turns",
        action="store_true",
        help="one table, its writes taken in turns by Apache Hudi and by us (--spark: hudi_spark.write), "
        "an even seed's first by us, an odd one's by Hudi; the model, and every query against Hudi's "
        "answer, on that table",
    )
    p.add_argument(
        "--cdc",
        action="store_true",
        help="tables with hoodie.table.cdc.enabled: Hudi's CDC query on our table against its answer "
        "on its own (a 'cdc' line per seed)",
    )
    a = p.parse_args(argv)
    if a.cdc and a.turns:
        p.error("--cdc compares our table with Hudi's: leave out --turns")
    if a.turns and a.stream:
        p.error("--turns takes our writes whole; leave out --stream")
    root = Path(a.work)
    root.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        return _explore(a, root, stack)


def _explore(a: argparse.Namespace, root: Path, stack: contextlib.ExitStack) -> int:
    tables: str | None = None  # the tables' folder in remote storage
    hudi_extra: dict[str, str] = {}  # what Hudi's writes and procedures take there
    if a.store == "s3":
        from hudi_core.testing.s3 import MotoS3Server

        server = MotoS3Server().start()
        stack.callback(server.stop)
        os.environ.update(server.env())  # our side: the endpoint and keys from the environment
        tables = server.create_bucket("explore").uri
        oracle = s3_oracle(ensure_oracle(), root / "jvm", server.endpoint_url)
        hudi_extra = dict(S3_LOCK)
    else:
        oracle = HudiOracle(ensure_oracle(), root / "jvm")
    stack.callback(oracle.close)
    if a.store == "hdfs":
        from minihdfs import ONE_DATANODE, minihdfs

        (root / "minihdfs").mkdir(exist_ok=True)
        tables = f"{stack.enter_context(minihdfs(root / 'minihdfs'))}/explore"
        oracle.hadoop_conf(ONE_DATANODE)
        hudi_extra = {"hoodie.metadata.enable": "false"}
    spark = None
    if a.spark or a.spark_read:
        from hudi_spark.session import spark_session

        conf = {"spark.local.dir": str(root / "spark")}
        if a.store == "s3":  # Hadoop's S3A connector in our JVM, which the readers ask to read with
            conf.update(s3a_session_conf(server.endpoint_url))
        spark = spark_session("local[2]", app_name="hudi-explore", conf=conf)
    s3_jvm = {"hoodie.spark.read.jvm.object.store": "true"} if a.store == "s3" else {}
    readers = {"": core_read, **(spark_readers(spark, s3_jvm) if a.spark_read else {})}
    bad = 0
    try:
        for seed in range(a.start, a.start + a.count):
            fixed = {**({"payload": a.payload} if a.payload else {}), **({"keygen": a.keygen} if a.keygen else {}),
                     "rich": a.rich, "evolve": a.evolve, "cdc": a.cdc}  # fmt: skip
            if a.drop:
                fixed.update(drop=True, first="insert")  # Hudi's bulk_insert writes empty files (docs)
            if a.cluster and seed % 2:
                fixed["index"] = "SIMPLE"
            w = generate(seed, **fixed)
            if a.drop and w.keygen in ("timestamp", "custom"):  # the path holds a date, the model the time
                fixed["keygen"] = "simple"
                w = generate(seed, **fixed)
            if a.cluster and w.index == "BUCKET":  # neither engine clusters a simple bucket index
                w = generate(seed, **{**fixed, "index": "GLOBAL_BLOOM"})
            written: dict[str, tuple[str, str]] = {}  # writer -> the table's URIs, ours and Hudi's
            for writer in ("ours",) if a.stream else ("turns",) if a.turns else ("ours", "hudi"):
                path: Path | str
                if tables is None:
                    path = root / f"{w.name}-{writer}"
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path = f"{tables}/{w.name}-{writer}"
                    storage_for(path).delete_dir(path)
                theirs = hudi_uri(str(path))
                written[writer] = (str(path), theirs)
                try:
                    for n, step in enumerate(w.steps):
                        if a.cluster == "hudi" and n == 3:
                            oracle.sql(
                                f"CALL run_clustering(path => '{theirs}', op => 'scheduleAndExecute'"
                                f"{procedure_options(hudi_extra)})"
                            )
                        elif a.cluster == "ours" and n == 3:
                            sort = (
                                {"hoodie.clustering.plan.strategy.sort.columns": "ts"}
                                if seed % 3 == 0
                                else {}
                            )
                            HudiTable.open(str(path), options=w.options()).cluster({**w.options(), **sort})
                        who = ("ours", "hudi")[(n + seed) % 2] if writer == "turns" else writer
                        if who == "ours" and a.spark:
                            spark_write(spark, path, w, step)
                        elif who == "ours":
                            our_write(path, w, step, stream=a.stream)
                        else:
                            hudi_write(oracle, theirs, w, step, hudi_extra)
                    found = {
                        "model": model_differences(path, w),
                        **compare_all(oracle, path, w, readers=readers, hudi_path=theirs),
                    }
                    found = {k: v for k, v in found.items() if v}
                    status = f"DIFF {found}" if found else "OK"
                except Exception as exc:  # a failed write is a finding too: report it, go on
                    status = f"ERROR {exc!r}"
                bad += not status.startswith("OK")
                ops = [s.operation for s in w.steps]
                print(f"{seed} {writer} {w.name} hive={w.hive_style} {ops} {status[:2000]}", flush=True)
            if a.cdc:
                status = _same_changes(oracle, written, w)
                bad += not status.startswith("OK")
                print(f"{seed} cdc {w.name} {status[:2000]}", flush=True)
    finally:
        if spark is not None:
            spark.stop()
    return 1 if bad else 0


def _same_changes(oracle: HudiOracle, written: dict[str, tuple[str, str]], w: Workload) -> str:
    """Hudi's CDC query on our table against its answer on its own (``OK`` where Hudi refuses
    its own table and answers on ours: its concat handle, docs/interop.md; ``OK`` where it loses
    the deletes of a merge it wrote no CDC file for, :func:`_lost_deletes`), and our CDC reader
    (``HudiTable.read_changes``) against Hudi's query on each table. Where the cleaner ran, the
    queries start after the same write on both tables (:func:`_cdc_starts`): the files of older
    ones are gone (both cleaners keep the slices of the last two commits,
    ``hoodie.cleaner.commits.retained``). ``--rich`` columns that
    Hudi renders otherwise than we do are left out (``runner.CDC_UNRENDERED``)."""
    unrendered = CDC_UNRENDERED if w.rich else frozenset()
    hudis: dict[str, object] = {}
    stamps: list[str] = []  # the commits of Hudi's answer on its own table, by ordinal
    found = []
    starts = _cdc_starts(written, w)
    for writer, (path, uri) in written.items():
        timeline = HudiTable.open(path).timeline.completed_commits()
        start = starts[writer]
        replaces = {i.timestamp for i in timeline if i.action == "replacecommit"}
        answer = mine_answer = None
        try:
            answer = oracle.read(uri, {**CDC_QUERY, "hoodie.datasource.read.begin.instanttime": start})
            hudis[writer] = cdc_changes(answer, replaces, unrendered)
            if writer == "hudi":
                stamps = sorted(set(answer.column("ts_ms").to_pylist()))
        except Exception as exc:
            hudis[writer] = exc
        try:
            mine_answer = HudiTable.open(path).read_changes(start)
            mine: object = cdc_changes(mine_answer, replaces, unrendered)
        except Exception as exc:
            mine = exc
        if isinstance(hudis[writer], Exception) != isinstance(mine, Exception) or (
            not isinstance(mine, Exception) and mine != hudis[writer]
        ):
            found.append(f"our reader on {writer}'s table: {_delta(mine, hudis[writer])}")
        elif answer is not None and mine_answer is not None and not unrendered:
            # the same changes: the same text too (Java's numbers, escapes and field order)
            texts = cdc_texts(mine_answer, replaces), cdc_texts(answer, replaces)
            if texts[0] != texts[1]:
                first = next((i for i, (a, b) in enumerate(zip(*texts, strict=False)) if a != b), 0)
                found.append(
                    f"our reader's text on {writer}'s table: {texts[0][first]} against {texts[1][first]}"
                )
    ours, theirs = hudis.get("ours"), hudis.get("hudi")
    if isinstance(ours, Exception):
        found.append(f"Hudi's query on our table: {ours!r}")
    quirk = ""
    if "hudi" in hudis and not isinstance(theirs, Exception) and ours != theirs:
        lost = _lost_deletes(ours, theirs, written["hudi"][0], stamps)  # type: ignore[arg-type]
        if lost:
            quirk = (
                f" (Hudi's query on its own table loses {lost} deletes of merges it wrote no CDC file for)"
            )
        else:
            found.append(f"Hudi's query, our table against its: {_delta(ours, theirs)}")
    if found:
        return "DIFF " + "; ".join(found)
    refused = f" (Hudi refuses its own table: {str(theirs)[:200]!r})" if isinstance(theirs, Exception) else ""
    return f"OK ({len(ours)} changes){refused}{quirk}"  # type: ignore[arg-type]


#: the operations whose commits change data (the rest: compaction, log compaction, clustering)
_NOT_DATA = frozenset({"compact", "log_compact", "cluster"})


def _cdc_starts(written: dict[str, tuple[str, str]], w: Workload) -> dict[str, str]:
    """Where each table's CDC queries start: at its first commit, or where the cleaner ran, after
    the same write on every table, the latest at which every table still holds the files of
    its third last commit (each cleaner keeps the slices of the last two). Counted in data
    commits: the tables' compactions and clusterings fall at other places."""
    if not w.clean:
        return {writer: "000" for writer in written}
    data: dict[str, list[str]] = {}
    step = 0
    for writer, (path, _uri) in written.items():
        table = HudiTable.open(path)
        commits = table.timeline.completed_commits().timestamps()
        data[writer] = [
            ts for ts in commits if table.commit_metadata(ts).operation_type.lower() not in _NOT_DATA
        ]
        if len(commits) >= 3:
            step = max(step, sum(1 for ts in data[writer] if ts <= commits[-3]))
    return {writer: data[writer][step - 1] if step else "000" for writer in written}


def _lost_deletes(
    ours: list[tuple[Any, ...]], theirs: list[tuple[Any, ...]], path: str, stamps: list[str]
) -> int:
    """How many deletes Hudi's query on its own table lacks where that is its quirk, else 0: a
    merge that leaves only inserts in the file group writes no CDC file, and Hudi's query takes
    the new base file for inserts alone (docs/interop.md, seed 21050). It is the quirk when every
    difference is a delete only in our table's answer, and Hudi's own commit of that ordinal has
    base-file write stats without CDC files whose deletes count at least as many."""
    rows = {repr(r): r for r in ours}
    mine, hers = Counter(map(repr, ours)), Counter(map(repr, theirs))
    only_mine = mine - hers
    if hers - mine or any(len(rows[k]) != 4 or rows[k][1] != "d" for k in only_mine):
        return 0
    missing: Counter[int] = Counter()
    for k, n in only_mine.items():
        missing[rows[k][0]] += n
    table = HudiTable.open(path)
    for ordinal, count in missing.items():
        if ordinal >= len(stamps):
            return 0
        unlogged = sum(
            s.num_deletes or 0
            for s in table.commit_metadata(stamps[ordinal]).all_write_stats()
            if (s.path or "").endswith(".parquet") and s.prev_commit not in (None, "null") and not s.cdc_stats
        )
        if unlogged < count:
            return 0
    return sum(missing.values())


def _delta(a: object, b: object) -> str:
    if isinstance(a, Exception) or isinstance(b, Exception):
        return f"{str(a)[:300]!r} against {str(b)[:300]!r}"
    mine, theirs = set(map(repr, a)), set(map(repr, b))  # type: ignore[call-overload]
    return f"only the first {sorted(mine - theirs)[:4]}, only the second {sorted(theirs - mine)[:4]}"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
