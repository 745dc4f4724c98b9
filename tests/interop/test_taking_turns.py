"""One table, two writers taking turns: Apache Hudi's Spark writer and ours, on COW and MOR.

Hudi's upserts find our keys through our bloom filters (BLOOM index: no key twice), deletes by
either, a compaction scheduled by one and executed by the other (both ways), cleaning by either,
a write of ours killed before its commit then rolled back by Hudi's next write, and a Hudi write
killed mid-way then rolled back by ours (on merge-on-read, another then rolled back by Hudi).
Hudi's writers keep a metadata table; ours removes it (as Hudi's own writer does with
``hoodie.metadata.enable=false``) and Hudi's next writer rebuilds it. After every step our
snapshot, Hudi's snapshot with the metadata table and Hudi's without it all equal the model.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from workloads import differences

pytestmark = [pytest.mark.interop, pytest.mark.slow]

CRASH_WRITE = Path(__file__).with_name("harness") / "crash_write.py"
COLUMNS = ["uuid", "ts", "fare", "city"]


def _options(table_type: str) -> dict[str, str]:
    return {
        "hoodie.table.name": "turns",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.partitionpath.field": "city",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.index.type": "BLOOM",
        "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
        "hoodie.compact.inline": "false",
        "hoodie.clean.automatic": "false",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2",
        # our single-writer lease: a killed writer's expires after 1 s x 2 misses (+1 s slack)
        "hoodie.client.heartbeat.interval_in_ms": "1000",
    }


def _rows(keys: range, ts: int, fare: float) -> pa.Table:
    return pa.table({
        "uuid": [f"k{i:05d}" for i in keys],
        "ts": pa.array([ts] * len(keys), pa.int64()),
        "fare": [fare + i for i in keys],
        "city": [("sf", "la", "nyc")[i % 3] for i in keys],
    })  # fmt: skip


class Turns:
    """The table, both writers, and the model every reader must equal after each step."""

    def __init__(self, hudi: Any, path: Path, table_type: str) -> None:
        self.hudi, self.path, self.table_type = hudi, path, table_type
        self.options = _options(table_type)
        self.model: dict[str, dict[str, Any]] = {}

    def _apply(self, op: str, data: pa.Table) -> None:
        for r in data.select(COLUMNS).to_pylist():
            if op == "delete":
                self.model.pop(r["uuid"], None)
            elif r["uuid"] not in self.model or r["ts"] >= self.model[r["uuid"]]["ts"]:
                self.model[r["uuid"]] = r

    def hudi_writes(self, op: str, data: pa.Table, **extra: str) -> None:
        self.hudi.oracle.write(
            self.path, data, {**self.options, "hoodie.datasource.write.operation": op, **extra}
        )
        self._apply(op, data)

    def we_write(self, op: str, data: pa.Table) -> None:
        table = HudiTable.open(str(self.path), options=self.options)
        getattr(table, op)(data, options=self.options)
        self._apply(op, data)

    def check(self, step: str) -> None:
        expected = pa.Table.from_pylist(sorted(self.model.values(), key=lambda r: r["uuid"]))
        answers = {
            "ours": HudiTable.open(str(self.path)).read(columns=COLUMNS),
            "hudi, metadata table": self.hudi.oracle.read(self.path, {"hoodie.metadata.enable": "true"}),
            "hudi, file listing": self.hudi.oracle.read(self.path, {"hoodie.metadata.enable": "false"}),
        }
        for who, answer in answers.items():
            diff = differences(answer.select(COLUMNS), expected.cast(answer.select(COLUMNS).schema))
            assert not diff, f"after {step}: {who} differs from the model: {diff}"
        # key look-ups skip files by the footers both writers leave (Hudi's bloom filters and
        # min/max keys, ours), and by the key column: deleted, updated, inserted, absent keys;
        # ranges (numbers and text) skip files by both writers' row group statistics
        table = HudiTable.open(str(self.path))
        few = [f"k{i:05d}" for i in (0, 3, 12, 27, 33, 41, 61, 66, 85, 92, 96, 100)] + ["k99999"]
        narrow = [[("uuid", "in", few)], [("uuid", "in", [f"k{i:05d}" for i in range(0, 130)])],
                  [("uuid", "=", "k00033")], [("ts", ">=", 5)], [("fare", "<", 100.0)], [("ts", "in", [2, 6])],
                  [("uuid", ">=", "k00090")], [("uuid", "<", "k00010")]]  # fmt: skip
        for filters in narrow:
            got = table.read(columns=COLUMNS, filters=filters)
            want = expected
            for column, op, value in filters:
                compare = {"in": lambda c, v: pc.is_in(c, pa.array(v)), "=": pc.equal, ">=": pc.greater_equal,
                           "<": pc.less}[op]  # fmt: skip
                want = want.filter(compare(want.column(column), value))
            diff = differences(got, want.cast(got.schema))
            assert not diff, f"after {step}: our read with {str(filters)[:60]} differs from the model: {diff}"

    def states(self) -> list[tuple[str, str]]:
        return [(ts, state) for ts, _, state in self.timeline()]

    def timeline(self) -> list[tuple[str, str, str]]:
        return [(i.timestamp, i.action, i.state.name) for i in HudiTable.open(str(self.path)).timeline]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_hudi_and_we_take_turns_on_one_table(hudi, tmp_path: Path, table_type: str) -> None:
    t = Turns(hudi, tmp_path / table_type.lower(), table_type)
    t.hudi_writes("upsert", _rows(range(0, 60), ts=1, fare=0.0))
    assert (t.path / ".hoodie" / "metadata").exists(), "Hudi's writer keeps a metadata table"
    t.check("Hudi's first upsert")

    t.we_write(
        "upsert",
        pa.concat_tables([_rows(range(0, 20), ts=2, fare=100.0), _rows(range(60, 80), ts=2, fare=0.0)]),
    )
    assert not (t.path / ".hoodie" / "metadata").exists(), (
        "our writer drops the metadata table it does not maintain"
    )
    t.check("our upsert")

    # Hudi's BLOOM index must find the keys we wrote through our bloom filters: no key twice
    t.hudi_writes(
        "upsert",
        pa.concat_tables([_rows(range(10, 30), ts=3, fare=200.0), _rows(range(60, 70), ts=3, fare=300.0)]),
    )
    t.check("Hudi's upsert over our keys")
    props = (t.path / ".hoodie" / "hoodie.properties").read_text()
    assert (
        t.path / ".hoodie" / "metadata" / "files"
    ).exists() and "hoodie.table.metadata.partitions=files" in props, (
        "Hudi's next writer rebuilt the metadata table from the file listing"
    )
    t.we_write("upsert", _rows(range(25, 35), ts=1, fare=900.0))  # older ordering values: stored rows win
    t.check("our upsert with older ordering values")
    t.we_write("delete", _rows(range(0, 5), ts=9, fare=0.0))
    t.check("our delete")
    t.hudi_writes("delete", _rows(range(60, 65), ts=0, fare=0.0))
    t.check("Hudi's delete")

    if table_type == "MERGE_ON_READ":
        ours = HudiTable.open(str(t.path), options=t.options)
        planned = ours.schedule_compaction(force=True)
        assert planned is not None
        t.hudi.oracle.sql(f"CALL run_compaction(op => 'run', path => '{t.path}')")
        assert (planned, "COMPLETED") in t.states(), "Hudi executed the plan we scheduled"
        t.check("our compaction plan run by Hudi")
        t.hudi_writes("upsert", _rows(range(40, 50), ts=5, fare=500.0))
        t.hudi.oracle.sql(
            f"CALL run_compaction(op => 'schedule', path => '{t.path}', "
            "options => 'hoodie.compact.inline.max.delta.commits=1')"
        )
        pending = HudiTable.open(str(t.path)).timeline.pending_compactions().timestamps()
        assert len(pending) == 1, "Hudi scheduled a plan"
        HudiTable.open(str(t.path), options=t.options).run_compaction(pending[0])
        assert (pending[0], "COMPLETED") in t.states(), "we executed the plan Hudi scheduled"
        t.check("Hudi's compaction plan run by us")

    HudiTable.open(str(t.path), options=t.options).clean({"hoodie.cleaner.commits.retained": "1"})
    t.check("our clean")
    t.hudi_writes("upsert", _rows(range(80, 90), ts=6, fare=0.0),
                  **{"hoodie.clean.automatic": "true", "hoodie.cleaner.commits.retained": "1"})  # fmt: skip
    t.check("Hudi's upsert and clean")

    # a write of ours killed after its files, before its commit; Hudi's next write rolls it back
    source = tmp_path / "crash.parquet"
    pq.write_table(_rows(range(0, 90), ts=50, fare=7000.0), source)
    crashed = subprocess.run([sys.executable, str(CRASH_WRITE), str(t.path), str(source), "upsert",
                              json.dumps(t.options)], capture_output=True, text=True)  # fmt: skip
    assert crashed.returncode == 137, crashed.stderr
    crashed_at = time.monotonic()
    assert any(state != "COMPLETED" for _, _, state in t.timeline()), (
        "the killed write left its instant pending"
    )
    t.check("our killed write (pending, invisible)")
    t.hudi_writes("upsert", _rows(range(90, 95), ts=7, fare=0.0))
    assert all(state == "COMPLETED" for _, _, state in t.timeline()), t.timeline()
    t.check("Hudi's write after rolling back ours")

    # a Hudi write killed mid-way (the JVM dies while it writes files); our next write rolls it back
    killed = _kill_hudi_mid_write(t, _rows(range(0, 60_000), ts=60, fare=8000.0))
    t.check("Hudi's killed write (pending, invisible)")
    # our killed writer's lease (held since its crash above) has surely expired 3.5 s after it
    time.sleep(max(0.0, crashed_at + 3.5 - time.monotonic()))
    t.we_write("upsert", _rows(range(95, 99), ts=8, fare=0.0))
    assert all(state == "COMPLETED" for _, _, state in t.timeline()), t.timeline()
    assert list(t.path.glob(f"*/*_{killed}.parquet")) == [], (
        "our rollback left a base file of Hudi's killed write"
    )
    empty = [
        p.name
        for p in t.path.glob("*/*")
        if p.parent.name != ".hoodie" and p.is_file() and not p.stat().st_size
    ]
    assert empty == [], "Hudi's next metadata table bootstrap refuses empty files"
    t.check("our write after rolling back Hudi's")

    if table_type == "MERGE_ON_READ":
        # a Hudi write killed mid-way that Hudi's own next write rolls back: its log files and new
        # base files beside ours (a copy-on-write table's rollback deletes base files alone, as
        # ours above does; a kill costs a JVM start)
        _kill_hudi_mid_write(t, _rows(range(0, 60_000), ts=70, fare=9000.0))
        t.hudi_writes("upsert", _rows(range(99, 101), ts=9, fare=0.0))
        assert all(state == "COMPLETED" for _, _, state in t.timeline()), t.timeline()
        t.check("Hudi's write after rolling back its own killed one")

    # we roll back Hudi's latest commit (a completed one): every reader is back where it was
    before = dict(t.model)
    t.hudi_writes("upsert", _rows(range(40, 45), ts=99, fare=4242.0))
    latest = t.timeline()[-1]
    assert latest[2] == "COMPLETED"
    HudiTable.open(str(t.path), options=t.options).rollback(latest[0])
    t.model = before
    t.check("our rollback of Hudi's latest commit")


def _kill_hudi_mid_write(t: Turns, data: pa.Table) -> str:
    """Start an upsert of ``data`` on Apache Hudi, kill its JVM once the first files are written,
    and return the pending instant it left."""
    before = {ts for ts, _, _ in t.timeline()}
    oracle = t.hudi.oracle
    source = oracle.work_dir / "killed.in.parquet"
    pq.write_table(data, source)
    options = {**t.options, "hoodie.datasource.write.operation": "upsert"}
    answer = oracle.send_watched("write", path=str(t.path), input=str(source), options=options, mode="append")
    failure = _first_files(t, before, answer)
    if failure:
        failure += f"\n{oracle.log_tail()}"
    oracle.kill()
    t.hudi.restart()  # the next test gets a session with no write under way, whatever happened
    if failure:
        pytest.fail(failure)
    (killed,) = [ts for ts, _, state in t.timeline() if ts not in before and state != "COMPLETED"]
    return killed


def _first_files(t: Turns, before: set[str], answer: Callable[[], dict[str, Any] | None]) -> str | None:
    """Wait until Hudi's write under way has written its first files (None), or say why it never
    will: it ended (failed or completed) first, or wrote nothing within 300 s."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        got = answer()  # before the files: a write that ended must not be taken for one under way
        new = [(ts, state) for ts, _, state in t.timeline() if ts not in before]
        if got is not None and not got.get("ok"):
            return f"Hudi's write failed: {got.get('error')}"
        if got is not None or any(state == "COMPLETED" for _, state in new):
            return "Hudi's write completed before it could be killed"
        if new and any(t.path.glob(f"*/*_{new[0][0]}.parquet")):
            return None  # its first files are there: kill it now
        time.sleep(0.05)
    return "Hudi's write wrote no file within 300 s"


def test_a_write_of_ours_killed_creating_a_log_file_stays_invisible_to_hudi(hudi, tmp_path: Path) -> None:
    """Our writer dies between a new log file's bytes (a temporary file) and its name; our next
    writes roll it back and archive past its instant. Apache Hudi, which once read such a
    temporary file as a log file of another file group whose blocks count as committed once
    their instant is older than the active timeline, reads the model."""
    from hudi_core.testing.crashes import killed_at_log_create

    options = {**_options("MERGE_ON_READ"), "hoodie.parquet.small.file.limit": "0",
               "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
               "hoodie.cleaner.commits.retained": "1"}  # fmt: skip
    path = tmp_path / "killed"
    table = HudiTable.create(str(path), name="turns", table_type="MERGE_ON_READ", record_key_fields="uuid",
                             partition_fields="city", ordering_field="ts", options=options)  # fmt: skip
    table.bulk_insert(_rows(range(30), ts=1, fare=0.0), options=options)
    model = {r["uuid"]: r for r in _rows(range(30), ts=1, fare=0.0).to_pylist()}
    x = killed_at_log_create(table, _rows(range(0, 30, 2), ts=99, fare=99.0), options)
    for ts in range(2, 8):
        batch = _rows(range(ts, 30, 7), ts=ts, fare=float(ts))
        HudiTable.open(str(path), options=options).upsert(batch, options=options)
        model.update({r["uuid"]: r for r in batch.to_pylist()})
    assert min(i.timestamp for i in HudiTable.open(str(path)).timeline) > x, (
        "archival passed the killed write"
    )
    expected = pa.Table.from_pylist(sorted(model.values(), key=lambda r: r["uuid"]))
    for who, answer in {
        "ours": HudiTable.open(str(path)).read(columns=COLUMNS),
        "hudi": hudi.oracle.read(path, {"hoodie.metadata.enable": "false"}),
    }.items():
        diff = differences(answer.select(COLUMNS), expected.cast(answer.select(COLUMNS).schema))
        assert not diff, f"{who} differs from the model: {diff}"
