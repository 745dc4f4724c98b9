"""Run a workload's steps with Apache Hudi or with our writers, and put the same queries to both."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hudi_core import HudiTable
from hudi_core.errors import HudiError
from oracle import HudiOracle, OracleError
from workloads import SCHEMA, Step, Workload, closest_model, differences, has_model


def hudi_write(
    oracle: HudiOracle, path: Path | str, w: Workload, step: Step, extra: dict[str, str] | None = None
) -> None:
    """One step through Hudi's Spark datasource; an async-compaction workload then runs Hudi's
    compaction procedure over any plan its writer scheduled (``extra`` goes to both)."""
    options = {**w.options(), "hoodie.datasource.write.operation": step.operation, **(extra or {})}
    data = step.data
    if step.operation == "delete_partition":
        options["hoodie.datasource.write.partitions.to.delete"] = ",".join(step.partitions)
    oracle.write(path, data, options)
    if w.compaction == "async":
        oracle.sql(f"CALL run_compaction(op => 'run', path => '{path}'{procedure_options(extra)})")


def procedure_options(options: dict[str, str] | None) -> str:
    """``options`` as the ``options`` argument of Hudi's procedures (empty without any)."""
    return f", options => '{','.join(f'{k}={v}' for k, v in options.items())}'" if options else ""


def compacted_by_both(oracle: HudiOracle, path: Path, work: Path) -> tuple[Path, Path]:
    """Two copies of the merge-on-read table at ``path`` under ``work``, one compacted by Apache
    Hudi (``run_compaction`` scheduleAndExecute), one by us; returns (Hudi's copy, ours)."""

    theirs, ours = work / "compacted-by-hudi", work / "compacted-by-us"
    shutil.copytree(path, theirs)
    shutil.copytree(path, ours)
    oracle.sql(f"CALL run_compaction(op => 'scheduleAndExecute', path => '{theirs}')")
    assert HudiTable.open(str(ours)).compact(), f"nothing to compact in {path}"
    return theirs, ours


#: a streamed write cut small: chunks of a few rows, buffers flushed every few records
STREAMED = {
    "hoodie.write.stream.chunk.max.bytes": "1024",
    "hoodie.write.buffer.bucket.max.bytes": "2048",
    "hoodie.write.buffer.total.max.bytes": "6144",
    "hoodie.write.buffer.record.size.sample.rate": "1",
}


def our_write(
    path: Path | str, w: Workload, step: Step, extra: dict[str, str] | None = None, *, stream: bool = False
) -> Any:
    """One step through our local engine, with the option dict Hudi's job would use. ``stream``:
    the rows go in as an iterator of small record batches (the streamed write path, chunked and
    buffered as :data:`STREAMED` sets), one instant as before."""
    from hudi_spark.table_ops import open_or_create

    options = {**w.options(), **(STREAMED if stream else {}), **(extra or {})}
    table, _ = open_or_create(str(path), options, step.data.schema)
    op = step.operation
    data: Any = iter(step.data.to_batches(max_chunksize=7)) if stream else step.data
    if op == "delete":
        result = table.delete(data, options=options)
    elif op == "delete_partition":
        result = table.delete_partition(step.partitions, options=options)
    else:
        result = getattr(table, op)(data, options=options)
    if w.compaction == "async":
        table = HudiTable.open(str(path), options=options)
        for instant in table.timeline.pending_compactions().timestamps():
            table.run_compaction(instant, options=options)
    return result


def write_rows(
    writer: str, oracle: HudiOracle, spark: Any, path: Path | str, rows: pa.Table, options: dict[str, str]
) -> None:
    """``rows`` written by ``writer`` (``hudi``: Apache Hudi's Spark datasource; ``spark``:
    ``hudi_spark.write``; ``ours``: the local engine, creating the table from ``options``) with
    the operation ``options`` names."""
    if writer == "hudi":
        oracle.write(path, rows, options)
    elif writer == "spark":
        import hudi_spark

        hudi_spark.write(spark.createDataFrame(rows), str(path), options=options)
    else:
        from hudi_spark.table_ops import open_or_create

        table, _ = open_or_create(str(path), options, rows.schema)
        getattr(table, options["hoodie.datasource.write.operation"])(rows, options=options)


def spark_write(spark: Any, path: Path | str, w: Workload, step: Step) -> Any:
    """One step through our Spark engine (``hudi_spark.write``), Hudi's option dict unchanged."""
    import hudi_spark

    options = {**w.options(), "hoodie.datasource.write.operation": step.operation}
    if step.operation == "delete_partition":
        options["hoodie.datasource.write.partitions.to.delete"] = ",".join(step.partitions)
    result = hudi_spark.write(spark.createDataFrame(step.data), str(path), options=options)
    if w.compaction == "async":
        table = HudiTable.open(str(path), options=options)
        for instant in table.timeline.pending_compactions().timestamps():
            table.run_compaction(instant, options=options)
    return result


def model_differences(path: Path | str, w: Workload) -> list[str]:
    """Our snapshot (which the other checks hold equal to Hudi's) against the workload's model.
    Partial updates have no model here: their answer depends on when logs were compacted (a
    field's value can differ between COW and MOR), so Hudi's own answer is the only reference."""
    if not has_model(w):
        return []
    ours = HudiTable.open(str(path)).read(columns=[f.name for f in SCHEMA])
    return differences(ours, closest_model(ours, w))


@dataclass
class Query:
    name: str
    hudi_options: dict[str, str]
    ours: dict[str, Any]


def queries(path: Path | str, w: Workload) -> list[Query]:
    """Snapshot, read_optimized, incremental from the start and from a middle commit, and time
    travel to every completed commit (what both readers should answer the same)."""
    table = HudiTable.open(str(path))
    commits = table.timeline.completed_commits().timestamps()
    out = [Query("snapshot", {"hoodie.datasource.query.type": "snapshot"}, {"query_type": "snapshot"})]
    if w.table_type == "MERGE_ON_READ":
        out.append(Query("read_optimized", {"hoodie.datasource.query.type": "read_optimized"},
                         {"query_type": "read_optimized"}))  # fmt: skip
    starts = ["000", commits[len(commits) // 2]] if len(commits) > 1 else ["000"]
    for start in starts:
        out.append(Query(f"incremental({start},]", {"hoodie.datasource.query.type": "incremental",
                                                    "hoodie.datasource.read.begin.instanttime": start},
                         {"query_type": "incremental", "start": start}))  # fmt: skip
    for instant in commits:
        out.append(
            Query(
                f"as_of {instant}", {"as.of.instant": instant}, {"query_type": "snapshot", "as_of": instant}
            )
        )
    return out


#: one of our readers: a query's answer on the table at a path
Reader = Callable[[Path | str, Query], pa.Table]


def core_read(path: Path | str, q: Query) -> pa.Table:
    return HudiTable.open(str(path)).read(**q.ours)


def spark_reader(spark: Any, options: dict[str, str] | None = None, *, source: bool = False) -> Reader:
    """``hudi_spark.read`` with Hudi's query options (and ``options``), collected to Arrow by
    Spark (the rows of its parquet scans among them), the DataFrame's own ``toArrow`` (read
    tasks' Arrow files) and ``count()`` checked against that (``hudi_spark.testing``); ``source``:
    PySpark 4's Python data source instead (``format("hudi")`` with
    ``hoodie.spark.read.format.fast=false``, every file slice read in Python tasks)."""
    import hudi_spark
    from hudi_spark.compat import to_arrow
    from hudi_spark.testing import checked_collect

    def read(path: Path | str, q: Query) -> pa.Table:
        opts = {**q.hudi_options, **(options or {})}
        if not source:
            return checked_collect(hudi_spark.read(spark, str(path), opts))
        from pyspark.errors import AnalysisException

        opts["hoodie.spark.read.format.fast"] = "false"
        try:
            return to_arrow(spark.read.format("hudi").options(**opts).load(str(path)))
        except AnalysisException as exc:  # Spark wraps the data source's refusal (its planning's QueryError)
            raise HudiError(str(exc).splitlines()[-1]) from exc

    return read


def spark_readers(spark: Any, options: dict[str, str] | None = None) -> dict[str, Reader]:
    """Our Spark readers by name: ``hudi_spark.read`` on its default paths, the same with
    ``hoodie.spark.read.jvm.delta``, and the Python data source; ``options`` go to each."""
    return {
        "spark": spark_reader(spark, options),
        "spark-delta": spark_reader(spark, {**(options or {}), "hoodie.spark.read.jvm.delta": "true"}),
        "spark-source": spark_reader(spark, options, source=True),
    }


def compare_all(
    oracle: HudiOracle,
    path: Path | str,
    w: Workload,
    queries: Callable[..., list[Query]] = queries,
    readers: dict[str, Reader] | None = None,
    hudi_path: Path | str | None = None,
) -> dict[str, list[str]]:
    """Every query's differences (ours against Hudi's), keyed by query name (prefixed by the
    reader's name in ``readers``; by default our local reader alone, unnamed); empty when all
    agree. Hudi answers each query once, for every reader. ``hudi_path``: the table's URI for
    Hudi where it is not ``path`` (``s3a://`` for our ``s3://``)."""
    found: dict[str, list[str]] = {}
    for q in queries(path, w):
        theirs = _answer(oracle.read, hudi_path or path, q.hudi_options)
        if isinstance(theirs, Exception) and _hudi_bug(theirs, q, w, path):
            continue
        for reader_name, read in (readers or {"": core_read}).items():
            name = f"{reader_name} {q.name}".strip()
            ours = _answer(read, path, q)
            if isinstance(theirs, Exception) or isinstance(ours, Exception):
                if not (isinstance(theirs, Exception) and isinstance(ours, Exception)):
                    found[name] = [f"only one refused: ours {_show(ours)}, hudi {_show(theirs)}"]
                continue
            if w.drop and q.name.startswith("incremental"):
                ours, theirs = _without_partition_columns(ours, w), _without_partition_columns(theirs, w)
            diff = differences(_as_hudi_spark_shows(ours, theirs, w), theirs)
            if diff:
                found[name] = diff
    return found


def _without_partition_columns(t: pa.Table, w: Workload) -> pa.Table:
    """``t`` but the workload's partition columns: Apache Hudi 0.15's incremental relation on a
    ``drop.partition.columns`` table answers them from the files, which leave them out (nulls),
    where ours answer the partition path's values as every other query does (docs/interop.md)."""
    fields = w.options()["hoodie.datasource.write.partitionpath.field"].split(",")
    return t.drop_columns([n for n in (f.split(":")[0] for f in fields if f) if n in t.column_names])


def _as_hudi_spark_shows(ours: pa.Table, theirs: pa.Table, w: Workload) -> pa.Table:
    """Hudi Spark's file-index reads (COW snapshot, read_optimized, time travel) return a
    timestamp-based partition field as its partition-path string ('2024/01/03'), not the stored
    long; its MOR snapshot returns the stored value. We return the stored value everywhere (as
    hudi-rs and Hudi's Hive/Trino readers do); compare that value formatted the same way."""
    if w.keygen not in ("timestamp", "custom") or "event_ms" not in theirs.column_names:
        return ours
    shown = theirs.schema.field("event_ms").type
    formatted = pa.types.is_string(shown) or (
        pa.types.is_integer(shown) and (pc.max(theirs.column("event_ms")).as_py() or 0) < 10**9  # yyyyMMdd
    )
    if not formatted:
        return ours  # the stored epoch millis
    fmt = "%Y%m%d" if w.keygen == "custom" else "%Y/%m/%d"
    stamps = pc.cast(ours.column("event_ms"), pa.timestamp("ms", tz="UTC"))
    i = ours.column_names.index("event_ms")
    # custom's 'yyyyMMdd' even comes back as an int (Spark's partition value type inference)
    return ours.set_column(i, "event_ms", pc.strftime(stamps, format=fmt).cast(shown))


#: Apache Hudi's CDC query from the table's first commit on
CDC_QUERY = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": "000",
             "hoodie.datasource.query.incremental.format": "cdc"}  # fmt: skip


#: the columns of ``--rich`` workloads whose JSON Apache Hudi 0.15's CDC query renders otherwise than
#: ours (docs/interop.md, "Hudi quirks"): decimals and binaries always, lists, maps and structs
#: in the rows it reads from base files
CDC_UNRENDERED = frozenset({"amount", "blob", "tags", "attrs", "info"})


def cdc_changes(
    cdc: pa.Table, replaces: set[str] | frozenset[str] = frozenset(), unrendered: frozenset[str] = frozenset()
) -> list[tuple[Any, ...]]:
    """Hudi's CDC rows as sorted (commit ordinal, op, before, after), the images without meta
    columns (which name files and seqnos), as sorted items: comparable between two tables that
    took the same writes. The deletes of the ``replaces`` instants (replace commits) are counted,
    one ``(ordinal, "d", count)``: Apache Hudi 0.15 answers a replaced file group's rows with one
    row's image for all of them (docs/interop.md, "Hudi quirks"). The ``unrendered`` columns are
    left out of the images."""
    ordinal = {ts: n for n, ts in enumerate(sorted(set(cdc.column("ts_ms").to_pylist())))}

    def image(text: str | None) -> tuple[Any, ...] | None:
        value = None if text is None else json.loads(text)
        if value is None:
            return None
        # (a null field is left out: Hudi renders the rows it reads from base files without them)
        kept = (
            k for k in value if not k.startswith("_hoodie") and k not in unrendered and value[k] is not None
        )
        return tuple(sorted((k, value[k]) for k in kept))

    rows: list[tuple[Any, ...]] = []
    replaced: Counter[int] = Counter()
    for r in cdc.to_pylist():
        if r["op"] == "d" and r["ts_ms"] in replaces:
            replaced[ordinal[r["ts_ms"]]] += 1
        else:
            rows.append((ordinal[r["ts_ms"]], r["op"], image(r["before"]), image(r["after"])))
    return sorted(rows, key=repr) + [(n, "d", count) for n, count in sorted(replaced.items())]


def cdc_texts(cdc: pa.Table, replaces: set[str] | frozenset[str] = frozenset()) -> list[tuple[str, ...]]:
    """A CDC answer's rows as their text, sorted, but the deletes of the ``replaces`` instants
    (:func:`cdc_changes` counts those): two readers' answers on one table must be the same text."""
    return sorted(
        (r["ts_ms"], r["op"], r["before"] or "", r["after"] or "")
        for r in cdc.to_pylist()
        if not (r["op"] == "d" and r["ts_ms"] in replaces)
    )


#: queries Apache Hudi 0.15 fails on its own tables (its error, then why we still answer)
HUDI_BUGS = [
    (ttype, keygen, "incremental", "[COLUMN_ALREADY_EXISTS] The column `_hoodie_commit_seqno`",
     "Hudi's COW incremental relation adds the meta columns twice when a partition field of a "
     "Custom, Complex or TimestampBased key generator is also a data column")
    for ttype, keygen in (("COPY_ON_WRITE", "custom"), ("COPY_ON_WRITE", "complex"), ("COPY_ON_WRITE", "complex1"),
                          ("COPY_ON_WRITE", "timestamp"))
]  # fmt: skip


def _hudi_bug(error: Exception, q: Query, w: Workload, path: Path | str) -> bool:
    return any(
        w.table_type == ttype and w.keygen == keygen and q.name.startswith(query) and text in str(error)
        for ttype, keygen, query, text, _why in HUDI_BUGS
    ) or _meta_fields_stored_twice(error, q, w, path)


def _meta_fields_stored_twice(error: Exception, q: Query, w: Workload, path: Path | str) -> bool:
    """Apache Hudi 0.15's COW incremental query fails on a table where one of its own commits
    (a ``delete_partition``, a clustering) stored the table's schema with the five meta fields
    (docs/interop.md, "Hudi quirks"): its incremental relation adds them a second time. Our
    commits store the data fields alone, as its other commits do."""
    if w.table_type != "COPY_ON_WRITE" or not q.name.startswith("incremental"):
        return False
    if "[COLUMN_ALREADY_EXISTS] The column `_hoodie_commit_seqno`" not in str(error):
        return False
    table = HudiTable.open(str(path))
    stamps = table.timeline.completed_commits().timestamps()
    return any("_hoodie_commit_seqno" in (table.commit_metadata(ts).schema or "") for ts in stamps)


def _answer(query: Any, *args: Any) -> pa.Table | Exception:
    try:
        return query(*args)
    except (OracleError, HudiError) as exc:  # a refusal is an answer too: both must refuse
        return exc


def _show(answer: pa.Table | Exception) -> str:
    return repr(answer)[:300] if isinstance(answer, Exception) else f"{answer.num_rows} rows"
