"""Seeded random workloads that either Apache Hudi or our writers run, and the comparison of answers.

A :class:`Workload` is a table layout (type, index, payload, key generator, log block format,
services) and a list of :class:`Step` (an operation with its rows). Both directions of the interop
tier run the same steps: Hudi's Spark datasource writes them and we read, or we write them and
Hudi reads. Rows are drawn so that every key keeps its partition (a non-global index would
otherwise keep two copies, by design, on both sides) unless the index is global.
"""

from __future__ import annotations

import datetime
import decimal
import operator
import random
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]  # fmt: skip

PAYLOADS = {
    "overwrite": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "default": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    "event_time": "org.apache.hudi.common.model.EventTimeAvroPayload",
    "partial": "org.apache.hudi.common.model.PartialUpdateAvroPayload",
    "non_defaults": "org.apache.hudi.common.model.OverwriteNonDefaultsWithLatestAvroPayload",
    "first_value": "org.apache.hudi.common.model.FirstValueAvroPayload",
    "mysql_debezium": "org.apache.hudi.common.model.debezium.MySqlDebeziumAvroPayload",
    "postgres_debezium": "org.apache.hudi.common.model.debezium.PostgresDebeziumAvroPayload",
}
#: the payloads a seed draws from (``explore.py --payload`` picks any of PAYLOADS)
DRAWN_PAYLOADS = ("overwrite", "default", "event_time", "partial")
#: payloads whose answer depends on where a writer put the records (no model: Hudi's answer is
#: the reference) and whose updates carry null fields
FILLING_PAYLOADS = ("partial", "non_defaults")
#: payloads whose rows carry Debezium's columns (a source position besides the ordering field
#: ``ts``, the change type); no model: Hudi's answer is the reference
DEBEZIUM_PAYLOADS = ("mysql_debezium", "postgres_debezium")
#: what Debezium's Postgres connector sends for a TOASTed value it did not read
TOASTED = "__debezium_unavailable_value"
KEYGENS = ("simple", "complex", "timestamp", "custom", "nonpartitioned")
INDEXES = ("SIMPLE", "BLOOM", "GLOBAL_BLOOM", "BUCKET")
CITIES = ("sf", "la", "nyc", "chi", "sea")
DAY_MS = 86_400_000
EPOCH_2024 = 1_704_067_200_000

SCHEMA = pa.schema(
    [
        pa.field("uuid", pa.string(), nullable=False),
        pa.field("ts", pa.int64(), nullable=False),
        pa.field("fare", pa.float64()),
        pa.field("rider", pa.string()),
        pa.field("seq", pa.int32()),
        pa.field("city", pa.string()),
        pa.field("region", pa.string()),
        pa.field("event_ms", pa.int64()),
    ]
)

EPOCH_AT = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
#: the columns a ``rich`` workload adds (the Spark SQL types the flat SCHEMA lacks; byte and short
#: are left to ``test_rich_types.py``, since every reader widens them to int through Avro)
RICH = pa.schema([
    ("amount", pa.decimal128(12, 3)), ("day", pa.date32()), ("at", pa.timestamp("us", tz="UTC")),
    ("vip", pa.bool_()), ("blob", pa.binary()), ("tags", pa.list_(pa.string())),
    ("attrs", pa.map_(pa.string(), pa.int32())),
    ("info", pa.struct([("note", pa.string()), ("n", pa.int32()),
                        ("inner", pa.struct([("x", pa.float64()), ("y", pa.bool_())]))])),
])  # fmt: skip


@dataclass
class Step:
    operation: (
        str  # insert, upsert, bulk_insert, delete, insert_overwrite, insert_overwrite_table, delete_partition
    )
    data: pa.Table
    partitions: list[str] = field(default_factory=list)  # delete_partition: partition paths


@dataclass
class Workload:
    seed: int
    table_type: str
    index: str
    payload: str
    keygen: str
    log_format: str = "avro"
    compaction: str = "none"  # none | inline | async (MOR)
    clean: bool = False
    hive_style: bool = False
    metadata: bool = True  # Hudi's writer keeps its metadata table (its default); False: none
    rich: bool = False  # every step's rows also carry RICH's columns (drawn values, nested nulls)
    #: from a drawn step on, the rows carry a new column ``note``; from another, ``seq`` is a long
    evolve: bool = False
    #: ``hoodie.datasource.write.drop.partition.columns=true`` (never drawn)
    drop: bool = False
    #: ``hoodie.table.cdc.enabled=true`` (never drawn)
    cdc: bool = False
    steps: list[Step] = field(default_factory=list)

    @property
    def name(self) -> str:
        return (f"s{self.seed}-{self.table_type[:3].lower()}-{self.index.lower()}-{self.payload}-{self.keygen}"
                f"-{self.log_format}-{self.compaction}{'-clean' if self.clean else ''}"
                f"{'' if self.metadata else '-nomdt'}{'-rich' if self.rich else ''}"
                f"{'-evolve' if self.evolve else ''}{'-drop' if self.drop else ''}{'-cdc' if self.cdc else ''}")  # fmt: skip

    # -- Hudi's option dict, the same for Hudi's writer and ours ---------------------------------
    def options(self) -> dict[str, str]:
        o = {
            "hoodie.table.name": f"t{self.seed}",
            "hoodie.datasource.write.table.type": self.table_type,
            "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.index.type": self.index,
            "hoodie.datasource.write.payload.class": PAYLOADS[self.payload],
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
            "hoodie.logfile.data.block.format": self.log_format,
            "hoodie.upsert.shuffle.parallelism": "2",
            "hoodie.insert.shuffle.parallelism": "2",
            "hoodie.bulkinsert.shuffle.parallelism": "2",
            "hoodie.delete.shuffle.parallelism": "2",
            "hoodie.compact.inline": "false",
            "hoodie.clean.automatic": str(self.clean).lower(),
            "hoodie.cleaner.commits.retained": "2",
            "hoodie.parquet.small.file.limit": "0" if self.seed % 2 else str(100 * 1024 * 1024),
        }
        o.update(_keygen_options(self.keygen))
        if not self.metadata:
            o["hoodie.metadata.enable"] = "false"
        if self.drop:
            o["hoodie.datasource.write.drop.partition.columns"] = "true"
        if self.cdc:
            o["hoodie.table.cdc.enabled"] = "true"
        if self.index == "BUCKET":
            o.update({"hoodie.bucket.index.num.buckets": "4", "hoodie.index.bucket.engine": "SIMPLE"})
        if self.index == "GLOBAL_BLOOM":
            o["hoodie.bloom.index.update.partition.path"] = "true"
        if self.compaction == "inline":
            o.update({"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"})
        elif self.compaction == "async":
            o.update(
                {"hoodie.compact.schedule.inline": "true", "hoodie.compact.inline.max.delta.commits": "2"}
            )
        return o


def table_options(name: str, table_type: str, operation: str | None = None,
                  more: dict[str, str] | None = None) -> dict[str, str]:  # fmt: skip
    """The option dict of a fixed test table, the same for Hudi's writer and ours: key ``id``,
    partition ``p`` (plain paths), ordering ``ts``, no inline compaction and no metadata table;
    ``more`` adds or overrides options."""
    o = {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.partitionpath.field": "p",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.hive_style_partitioning": "false",
        "hoodie.compact.inline": "false",
        "hoodie.metadata.enable": "false",
    }
    if operation is not None:
        o["hoodie.datasource.write.operation"] = operation
    return {**o, **(more or {})}


def _keygen_options(keygen: str) -> dict[str, str]:
    timebased = {
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        "hoodie.keygen.timebased.timezone": "UTC",
    }
    pkg = "org.apache.hudi.keygen."
    if keygen == "simple":
        return {"hoodie.datasource.write.recordkey.field": "uuid",
                "hoodie.datasource.write.partitionpath.field": "city",
                "hoodie.datasource.write.keygenerator.class": pkg + "SimpleKeyGenerator"}  # fmt: skip
    if keygen == "complex":
        return {"hoodie.datasource.write.recordkey.field": "uuid,region",
                "hoodie.datasource.write.partitionpath.field": "city,region",
                "hoodie.datasource.write.keygenerator.class": pkg + "ComplexKeyGenerator"}  # fmt: skip
    if keygen == "complex1":  # one record key field: Hudi 0.15.0 stores the bare value (HUDI-7001)
        return {"hoodie.datasource.write.recordkey.field": "uuid",
                "hoodie.datasource.write.partitionpath.field": "city,region",
                "hoodie.datasource.write.keygenerator.class": pkg + "ComplexKeyGenerator"}  # fmt: skip
    if keygen == "timestamp":
        return {"hoodie.datasource.write.recordkey.field": "uuid",
                "hoodie.datasource.write.partitionpath.field": "event_ms",
                "hoodie.datasource.write.keygenerator.class": pkg + "TimestampBasedKeyGenerator",
                **timebased}  # fmt: skip
    if keygen == "custom":  # Hudi's lazy listing cannot parse '/' in one of several partition values
        return {"hoodie.datasource.write.recordkey.field": "uuid",
                "hoodie.datasource.write.partitionpath.field": "city:SIMPLE,event_ms:TIMESTAMP",
                "hoodie.datasource.write.keygenerator.class": pkg + "CustomKeyGenerator",
                **timebased, "hoodie.keygen.timebased.output.dateformat": "yyyyMMdd"}  # fmt: skip
    if keygen == "nonpartitioned":
        return {"hoodie.datasource.write.recordkey.field": "uuid",
                "hoodie.datasource.write.partitionpath.field": "",
                "hoodie.datasource.write.keygenerator.class": pkg + "NonpartitionedKeyGenerator"}  # fmt: skip
    raise ValueError(keygen)


class _Keys:
    """The key pool: each key has a fixed home (city, region, day) unless the index is global."""

    def __init__(self, rng: random.Random, global_index: bool) -> None:
        self.rng = rng
        self.global_index = global_index
        self.live: list[str] = []
        self.home: dict[str, tuple[str, str, int]] = {}
        self.next = 0

    def new(self, n: int) -> list[str]:
        keys = []
        for _ in range(n):
            k = f"k{self.next:05d}"
            self.next += 1
            self.home[k] = self._place()
            keys.append(k)
        return keys

    def _place(self) -> tuple[str, str, int]:
        return (self.rng.choice(CITIES), self.rng.choice(("east", "west")), self.rng.randrange(3))

    def existing(self, n: int) -> list[str]:
        return self.rng.sample(self.live, min(n, len(self.live)))


def _rows(keys: list[str], pool: _Keys, rng: random.Random, *, ts_base: int, nulls: bool,
          move: bool = False) -> pa.Table:  # fmt: skip
    cols: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
    for k in keys:
        if move and pool.global_index and rng.random() < 0.3:
            # a global index moves the key to its new partition (region is part of the complex key)
            city, _, day = pool._place()
            pool.home[k] = (city, pool.home[k][1], day)
        city, region, day = pool.home[k]
        cols["uuid"].append(k)
        cols["ts"].append(ts_base + rng.randrange(-3, 10))  # some updates carry an older ordering value
        cols["fare"].append(None if nulls and rng.random() < 0.3 else round(rng.uniform(1, 100), 2))
        cols["rider"].append(None if nulls and rng.random() < 0.3 else f"rider-{rng.randrange(1000)}")
        cols["seq"].append(rng.randrange(1 << 20))
        cols["city"].append(city)
        cols["region"].append(region)
        cols["event_ms"].append(EPOCH_2024 + day * DAY_MS + rng.randrange(DAY_MS))
    return pa.table(cols, schema=SCHEMA)


def partition_of(keygen: str, hive: bool, city: str, region: str, event_ms: int) -> str:
    stamp = datetime.datetime.fromtimestamp(event_ms / 1000, datetime.timezone.utc)
    day = stamp.strftime("%Y%m%d" if keygen == "custom" else "%Y/%m/%d")
    both = [("city", city), ("region", region)]
    parts = {"simple": [("city", city)], "complex": both, "complex1": both,
             "timestamp": [("event_ms", day)], "custom": [("city", city), ("event_ms", day)],
             "nonpartitioned": []}[keygen]  # fmt: skip
    return "/".join(f"{n}={v}" if hive else v for n, v in parts)


def generate(seed: int, **layout: Any) -> Workload:
    """A workload of 5-7 steps over ~60-120 keys; ``layout`` fixes any of Workload's fields,
    the rest are drawn from the seed."""
    rng = random.Random(seed)
    w = Workload(
        seed=seed,
        table_type=layout.get("table_type") or rng.choice(("COPY_ON_WRITE", "MERGE_ON_READ")),
        index=layout.get("index") or rng.choice(INDEXES),
        payload=layout.get("payload") or rng.choice(DRAWN_PAYLOADS),
        keygen=layout.get("keygen") or rng.choice(KEYGENS),
        log_format=layout.get("log_format") or rng.choice(("avro", "parquet")),
        hive_style=layout.get("hive_style", rng.random() < 0.3),
        clean=layout.get("clean", rng.random() < 0.4),
        metadata=layout.get("metadata", True),
        rich=layout.get("rich", False),
        evolve=layout.get("evolve", False),
        drop=layout.get("drop", False),
        cdc=layout.get("cdc", False),
    )
    if w.table_type == "MERGE_ON_READ":
        w.compaction = layout.get("compaction") or rng.choice(("none", "inline", "async"))
    pool = _Keys(rng, w.index.startswith("GLOBAL"))
    nulls = w.payload in FILLING_PAYLOADS
    first = layout.get("first", rng.choice(("bulk_insert", "insert", "upsert")))
    keys = pool.new(rng.randrange(40, 80))
    w.steps.append(Step(first, _rows(keys, pool, rng, ts_base=100, nulls=False)))
    pool.live.extend(keys)
    ops = list(layout.get("ops") or [])
    if not ops:
        ops = ["upsert", "upsert", rng.choice(["upsert", "delete", "insert"]), "upsert",
               rng.choice(["delete", "insert_overwrite", "delete_partition", "upsert", "insert_overwrite_table"])]  # fmt: skip
    for i, op in enumerate(ops, start=1):
        ts_base = 100 + 10 * i
        if op == "upsert":
            updates = pool.existing(rng.randrange(5, 25))
            inserts = pool.new(rng.randrange(0, 15))
            rows = _rows(updates + inserts, pool, rng, ts_base=ts_base, nulls=nulls, move=True)
            # a few keys twice in the batch, precombined by the writer; their ordering values
            # differ (Spark's reduceByKey keeps either of two equal ones)
            dupes = _rows(
                rng.sample(updates, min(3, len(updates))), pool, rng, ts_base=ts_base + 20, nulls=nulls
            )
            w.steps.append(Step(op, pa.concat_tables([rows, dupes])))
            pool.live.extend(inserts)
        elif op in ("insert", "bulk_insert"):
            inserts = pool.new(rng.randrange(5, 20))
            w.steps.append(Step(op, _rows(inserts, pool, rng, ts_base=ts_base, nulls=False)))
            pool.live.extend(inserts)
        elif op == "delete":
            gone = pool.existing(rng.randrange(3, 10))
            w.steps.append(Step(op, _rows(gone, pool, rng, ts_base=ts_base, nulls=False)))
            pool.live = [k for k in pool.live if k not in set(gone)]
        elif op in ("insert_overwrite", "insert_overwrite_table"):
            keys = pool.new(rng.randrange(5, 15))
            data = _rows(keys, pool, rng, ts_base=ts_base, nulls=False)
            w.steps.append(Step(op, data))
            if op == "insert_overwrite_table" or w.keygen == "nonpartitioned":
                pool.live = list(keys)
            else:
                touched = {_home_partition(w, pool, k) for k in keys}
                pool.live = [k for k in pool.live if _home_partition(w, pool, k) not in touched] + keys
        elif op == "delete_partition":
            if w.keygen == "nonpartitioned":
                continue
            victim = _home_partition(w, pool, rng.choice(pool.live))
            w.steps.append(Step(op, _rows(pool.existing(1), pool, rng, ts_base=ts_base, nulls=False),
                                partitions=[victim]))  # fmt: skip
            pool.live = [k for k in pool.live if _home_partition(w, pool, k) != victim]
        else:
            raise ValueError(op)
    if w.rich:  # from a generator of its own: the seed's layout and rows stay those drawn without
        values = random.Random(seed * 7919 + 1)
        for step in w.steps:
            step.data = _with_rich_columns(step.data, values, nulls=nulls)
    if w.evolve:  # from a generator of its own too
        _evolve(w.steps, random.Random(seed * 7919 + 2), nulls=nulls)
    if w.payload in DEBEZIUM_PAYLOADS:
        for step in w.steps:
            step.data = _with_debezium_columns(
                step.data, step.operation, rng, toast=w.payload == "postgres_debezium"
            )
    return w


def _with_rich_columns(data: pa.Table, rng: random.Random, *, nulls: bool) -> pa.Table:
    """``data`` with :data:`RICH`'s columns: values drawn per row, nulls inside the nested types
    always and (``nulls``: the filling payloads) a third of the top-level values null. A map holds
    at most one entry: Apache Hudi's merge-on-read reader hands a log record's map out in Java
    ``HashMap`` order (``test_rich_types.py``), which one entry cannot show. A list holds no null
    element: Hudi 0.15's Avro parquet writer (its insert, upsert and merge handles) writes the
    two-level list, which cannot hold one, and its merge of a file its row writer's bulk_insert
    wrote with one fails (``ArrayIndexOutOfBoundsException``)."""

    def maybe(value: Any, share: float = 0.3) -> Any:
        return None if rng.random() < share else value

    def top(value: Any) -> Any:  # a top-level value: null only for the filling payloads
        return maybe(value) if nulls else value

    columns: dict[str, list[Any]] = {f.name: [] for f in RICH}
    for _ in range(data.num_rows):
        day = datetime.date(2023, 1, 1) + datetime.timedelta(days=rng.randrange(900))
        at = EPOCH_AT + datetime.timedelta(microseconds=rng.randrange(10**14))
        tags = [f"t{rng.randrange(50)}" for _ in range(rng.randrange(0, 4))]
        attrs = [(f"a{rng.randrange(9)}", maybe(rng.randrange(1000))) for _ in range(rng.randrange(0, 2))]
        inner = maybe({"x": maybe(rng.uniform(-1, 1)), "y": rng.random() < 0.5}, 0.25)
        columns["amount"].append(top(decimal.Decimal(rng.randrange(-(10**8), 10**8)).scaleb(-3)))
        columns["day"].append(top(day))
        columns["at"].append(top(at))
        columns["vip"].append(top(rng.random() < 0.5))
        columns["blob"].append(top(rng.randbytes(rng.randrange(0, 6))))
        columns["tags"].append(top(tags))
        columns["attrs"].append(top(attrs))
        columns["info"].append(top({"note": maybe(f"n{rng.randrange(100)}"), "n": rng.randrange(-1000, 1000),
                                    "inner": inner}))  # fmt: skip
    for f in RICH:
        data = data.append_column(f, pa.array(columns[f.name], f.type))
    return data


def _evolve(steps: list[Step], rng: random.Random, *, nulls: bool) -> None:
    """The schema changes a Hudi table takes between writes (schema on write): from a drawn step
    on, every row carries a new nullable string column ``note`` (null in the rows written before),
    and from another ``seq`` is a long instead of an int; either may come first, and either may
    come with the first write (then the table starts with it)."""
    add_at, widen_at = rng.randrange(len(steps)), rng.randrange(len(steps))
    for n, step in enumerate(steps):
        data = step.data
        if n >= widen_at:
            data = data.set_column(data.column_names.index("seq"), "seq", data.column("seq").cast(pa.int64()))
        if n >= add_at:
            notes = [
                None if nulls and rng.random() < 0.3 else f"note-{rng.randrange(100)}"
                for _ in range(data.num_rows)
            ]
            data = data.append_column(pa.field("note", pa.string()), pa.array(notes, pa.string()))
        step.data = data


def has_model(w: Workload) -> bool:
    """Whether :func:`model_snapshot` answers the workload (not where Hudi's answer depends on
    where a writer put the records, nor for the Debezium payloads)."""
    return w.payload not in FILLING_PAYLOADS and w.payload not in DEBEZIUM_PAYLOADS


def _with_debezium_columns(data: pa.Table, operation: str, rng: random.Random, *, toast: bool) -> pa.Table:
    """``data`` with Debezium's columns: a source position that mostly follows ``ts`` but not
    always (``_event_lsn``, and ``_event_seq`` as binlog ``file.pos``), the change type (a tenth of
    an upsert's records deletes), and (Postgres) some riders TOASTed."""
    ts = data.column("ts").to_pylist()
    lsn = [t * 10 + rng.randrange(-25, 25) for t in ts]
    op = ["c" if operation != "upsert" else ("d" if rng.random() < 0.1 else "u") for _ in ts]
    data = data.append_column("_event_lsn", pa.array(lsn, pa.int64()))
    data = data.append_column("_event_seq", pa.array([f"{v // 1000}.{v % 1000}" for v in lsn]))
    data = data.append_column("_change_operation_type", pa.array(op))
    if toast and operation == "upsert":
        riders = [TOASTED if rng.random() < 0.15 else r for r in data.column("rider").to_pylist()]
        data = data.set_column(data.column_names.index("rider"), "rider", pa.array(riders, pa.string()))
    return data


def model_snapshot(w: Workload, *, log_windows: bool = False) -> pa.Table:
    """What a snapshot query must return (data columns, by uuid) after every step of ``w``:
    precombine by greatest ordering value, Hudi's payload rule against the stored row, deletes
    always win, overwrites replace whole partitions (or the table).

    ``log_windows`` (merge-on-read with OverwriteWithLatest): Java's log scanner combines a key's
    log records with ``preCombine``, which keeps the greatest ordering value even for that payload,
    so an update in a log file loses to an earlier one still in the logs with a greater ordering
    value; a compaction (every second delta commit when the workload compacts) folds the logs into
    the base, after which the next update wins again. Whether an update goes to a log file or is
    merged into a base file (a small file taking inserts) depends on file sizes, so a row may
    equal either model (:func:`closest_model`)."""
    rows: dict[str, dict[str, Any]] = {}
    #: log_windows: the key's value in log files written since the last compaction
    window: dict[str, dict[str, Any]] = {}
    deltas = 0
    honours_ordering = w.payload in ("default", "event_time", "first_value")
    newer = operator.gt if w.payload == "first_value" else operator.ge  # a tie keeps the first
    for step in w.steps:
        batch = step.data.to_pylist()
        if step.operation in ("upsert", "insert", "bulk_insert"):
            latest: dict[str, dict[str, Any]] = {}
            for r in batch:
                if r["uuid"] not in latest or newer(r["ts"], latest[r["uuid"]]["ts"]):
                    latest[r["uuid"]] = r
            for k, r in latest.items():
                old = rows.get(k)
                if log_windows and old is not None and k in window and window[k]["ts"] > r["ts"]:
                    continue  # preCombine in the log scanner: the logged greater ordering value stays
                if (
                    old is None
                    or not honours_ordering
                    or step.operation != "upsert"
                    or newer(r["ts"], old["ts"])
                ):
                    rows[k] = r
                    if old is not None or w.index == "BUCKET":  # an update (or a bucket's insert) is logged
                        window[k] = r
            deltas += 1
        elif step.operation == "delete":
            for r in batch:
                rows.pop(r["uuid"], None)
            deltas += 1
        elif step.operation == "insert_overwrite_table" or (
            step.operation == "insert_overwrite" and w.keygen == "nonpartitioned"
        ):
            rows = {r["uuid"]: r for r in batch}
        elif step.operation == "insert_overwrite":
            touched = {_partition_of_row(w, r) for r in batch}
            rows = {k: r for k, r in rows.items() if _partition_of_row(w, r) not in touched}
            rows.update({r["uuid"]: r for r in batch})
        elif step.operation == "delete_partition":
            rows = {k: r for k, r in rows.items() if _partition_of_row(w, r) not in set(step.partitions)}
        window = {k: r for k, r in window.items() if k in rows}
        if w.compaction != "none" and deltas >= 2:  # hoodie.compact.inline.max.delta.commits=2
            window, deltas = {}, 0
    table = pa.Table.from_pylist(sorted(rows.values(), key=lambda r: r["uuid"]), schema=SCHEMA)
    return table


def closest_model(ours: pa.Table, w: Workload) -> pa.Table:
    """The workload's model; for merge-on-read with OverwriteWithLatest, per key the row of
    either model of :func:`model_snapshot` that ``ours`` holds (see ``log_windows``)."""
    latest = model_snapshot(w)
    if w.table_type != "MERGE_ON_READ" or w.payload != "overwrite":
        return latest
    logged = {r["uuid"]: r for r in model_snapshot(w, log_windows=True).to_pylist()}
    held = {r["uuid"]: r for r in ours.select(latest.column_names).to_pylist()}
    rows = [
        logged[r["uuid"]] if held.get(r["uuid"]) == logged.get(r["uuid"]) else r for r in latest.to_pylist()
    ]
    return pa.Table.from_pylist(rows, schema=latest.schema)


def _partition_of_row(w: Workload, r: dict[str, Any]) -> str:
    return partition_of(w.keygen, w.hive_style, r["city"], r["region"], r["event_ms"])


def _home_partition(w: Workload, pool: _Keys, key: str) -> str:
    city, region, day = pool.home[key]
    return partition_of(w.keygen, w.hive_style, city, region, EPOCH_2024 + day * DAY_MS)


# -- comparing answers ----------------------------------------------------------------------------


def canonical(table: pa.Table) -> pa.Table:
    """Rows in one order (key, partition, commit seqno), columns by name, Spark's types."""
    table = table.select(sorted(table.column_names))
    cols = []
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_large_string(col.type):
            col = col.cast(pa.string())
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        cols.append(col)
    table = pa.table(dict(zip(table.column_names, cols, strict=True)))
    keys = [c for c in ("_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_seqno", "uuid")
            if c in table.column_names]  # fmt: skip
    if not keys or table.num_rows == 0:
        return table
    return table.take(pc.sort_indices(table, [(k, "ascending") for k in keys]))


def differences(ours: pa.Table, theirs: pa.Table, *, limit: int = 8) -> list[str]:
    """What differs between two answers, as lines a person can read (empty when equal)."""
    a, b = canonical(ours), canonical(theirs)
    out: list[str] = []
    if set(a.column_names) != set(b.column_names):
        out.append(f"columns: ours-only {sorted(set(a.column_names) - set(b.column_names))}, "
                   f"hudi-only {sorted(set(b.column_names) - set(a.column_names))}")  # fmt: skip
    if a.num_rows != b.num_rows:
        ka = (
            pc.value_counts(a.column("_hoodie_record_key"))
            if "_hoodie_record_key" in a.column_names
            else None
        )
        kb = (
            pc.value_counts(b.column("_hoodie_record_key"))
            if "_hoodie_record_key" in b.column_names
            else None
        )
        out.append(f"row count: ours {a.num_rows}, hudi {b.num_rows}")
        if ka is not None and kb is not None:
            sa = {v["values"]: v["counts"] for v in ka.to_pylist()}
            sb = {v["values"]: v["counts"] for v in kb.to_pylist()}
            diff = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
            out.append(
                f"keys whose counts differ (ours, hudi): {[(k, sa.get(k), sb.get(k)) for k in diff[:limit]]}"
            )
        return out
    for name in sorted(set(a.column_names) & set(b.column_names)):
        va, vb = a.column(name).to_pylist(), b.column(name).to_pylist()
        bad = [i for i, (x, y) in enumerate(zip(va, vb, strict=True)) if x != y]
        if bad:
            i = bad[0]
            key = a.column("_hoodie_record_key")[i].as_py() if "_hoodie_record_key" in a.column_names else i
            out.append(
                f"column {name}: {len(bad)} rows differ, first at key {key}: ours {va[i]!r}, hudi {vb[i]!r}"
            )
    return out[:limit]
