"""Read splits (plan_splits / read_split) and parallel slice reads."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from hudi_core import HudiTable
from hudi_core.compaction import schedule_compaction
from hudi_core.errors import ConfigError
from hudi_core.fs_view import FileSystemView
from hudi_core.log.writer import LogWriter
from hudi_core.read import iter_split, plan_splits, read_split, read_table

from .conftest import FILE_ID, PARTITION, RIDER_A, RIDER_D, Trips


def _by_key(t: pa.Table) -> pa.Table:
    return t.sort_by([("_hoodie_record_key", "ascending"), ("_hoodie_partition_path", "ascending")])


def test_splits_pickle_and_read_to_the_same_rows_as_read_table(trips: Trips) -> None:
    table = trips.table()
    splits = plan_splits(table, "snapshot", columns=["_hoodie_record_key", "_hoodie_partition_path", "fare"])
    assert len(splits) == len(FileSystemView(table).latest_merged_file_slices())
    shipped = pickle.loads(pickle.dumps(splits))
    parts = [read_split(str(trips.root), s) for s in shipped]  # opened by URI, as a Spark task does
    got = _by_key(pa.concat_tables(parts))
    want = _by_key(table.read(columns=["_hoodie_record_key", "_hoodie_partition_path", "fare"]))
    assert got.equals(want)
    fares = dict(
        zip(got.column("_hoodie_record_key").to_pylist(), got.column("fare").to_pylist(), strict=True)
    )
    assert fares[RIDER_D] == 25.0  # the logged update, merged


def test_read_optimized_splits_carry_no_log_files(trips: Trips) -> None:
    splits = plan_splits(trips.table(), "read_optimized")
    assert all(s.base_file is not None and s.log_files == () for s in splits)
    ro = pa.concat_tables([read_split(trips.table(), s) for s in splits])
    fares = dict(zip(ro.column("_hoodie_record_key").to_pylist(), ro.column("fare").to_pylist(), strict=True))
    assert fares[RIDER_D] == 33.9  # the base file's value
    assert all(s.size == s.base_file.size > 0 for s in splits if s.base_file is not None)


def test_under_a_pending_compaction_splits_merge_the_previous_slice(trips: Trips) -> None:
    table = trips.table()
    before = _by_key(table.read())
    instant = schedule_compaction(table, force=True)
    assert instant is not None
    table = trips.table()
    # The raw latest slice is the compaction's (no base file, no logs yet) ...
    raw = next(s for s in FileSystemView(table).latest_file_slices() if s.file_id == FILE_ID)
    assert raw.base_instant == instant and raw.base_file is None
    # ... while the split keeps the base file and the logs that the compaction will fold in.
    split = next(s for s in plan_splits(table, "snapshot") if s.file_id == FILE_ID)
    assert split.base_file is not None and split.log_files
    got = _by_key(pa.concat_tables([read_split(str(trips.root), s) for s in plan_splits(table, "snapshot")]))
    assert got.equals(before)


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_parallel_reads_keep_plan_order_and_rows(trips: Trips, parallelism: int) -> None:
    table = trips.table()
    serial = read_table(table, parallelism=1)
    assert read_table(table, parallelism=parallelism).equals(serial)
    batches = list(
        HudiTable.open(str(trips.root), options={"hoodie.read.parallelism": parallelism}).read_batches()
    )
    assert pa.Table.from_batches(batches, schema=serial.schema).equals(serial)


def test_negative_parallelism_is_refused(trips: Trips) -> None:
    table = HudiTable.open(str(trips.root), options={"hoodie.read.parallelism": "-1"})
    with pytest.raises(ConfigError, match=r"hoodie.read.parallelism=-1"):
        table.read()


@pytest.mark.parametrize(
    "query",
    [
        {"query_type": "snapshot"},
        {"query_type": "read_optimized"},
        {"query_type": "incremental", "start": "000"},
        {
            "query_type": "snapshot",
            "filters": [("fare", ">", 20.0)],
            "columns": ["_hoodie_record_key", "fare"],
        },
    ],
    ids=["snapshot", "read_optimized", "incremental", "filtered"],
)
def test_iter_split_streams_the_rows_of_read_split_a_few_base_rows_at_a_time(
    trips: Trips, query: dict[str, object]
) -> None:
    table = trips.table()
    qtype = str(query.pop("query_type"))
    splits = plan_splits(table, qtype, **query)  # type: ignore[arg-type]
    assert any(s.log_files for s in splits) or qtype == "read_optimized"
    for split in splits:
        whole = read_split(table, split)
        parts = list(iter_split(str(trips.root), split, batch_rows=2))
        assert all(p.num_rows for p in parts)
        assert (pa.concat_tables(parts) if parts else whole.schema.empty_table()).equals(whole)
        base_parts = parts[:-1] if split.log_files else parts  # a merge's added rows come last, together
        assert all(p.num_rows <= 2 for p in base_parts)


@pytest.mark.parametrize("probe_batches", [1, 2, 3])
@pytest.mark.parametrize("batch", [1, 2, 3])
def test_iter_split_probes_the_log_keys_with_the_key_column_several_batches_at_a_time(
    trips: Trips, monkeypatch: pytest.MonkeyPatch, probe_batches: int, batch: int
) -> None:
    from hudi_core.read import merge

    table = trips.table()
    queries = [("snapshot", None), ("incremental", "000")]
    wanted = {q: [(s, read_split(table, s)) for s in plan_splits(table, q, start=start) if s.log_files]
              for q, start in queries}  # fmt: skip
    assert all(wanted.values())
    monkeypatch.setattr(merge, "_PROBE_BATCHES", probe_batches)
    probed: list[int] = []
    real = merge._Probe.positions

    def positions(self: merge._Probe, base: pa.Table) -> object:
        probed.append(base.num_rows)
        return real(self, base)

    monkeypatch.setattr(merge._Probe, "positions", positions)
    for pairs in wanted.values():
        for split, whole in pairs:
            parts = list(iter_split(str(trips.root), split, batch_rows=batch))
            assert pa.concat_tables(parts).equals(whole)
    # the key column's chunks span several base batches (one hash table of the log's keys each)
    assert probed and max(probed) <= batch * probe_batches
    assert probe_batches == 1 or max(probed) > batch


def test_a_read_batch_of_no_rows_is_refused(trips: Trips) -> None:
    from hudi_core.read.parallel import batch_rows

    table = HudiTable.open(str(trips.root), options={"hoodie.read.batch.rows": "0"})
    with pytest.raises(ConfigError, match=r"hoodie\.read\.batch\.rows=0 must be >= 1"):
        batch_rows(table.options)


def test_a_file_group_of_log_files_only_reads_in_a_snapshot(trips: Trips) -> None:
    """A file group whose first write went to a log file (as Hudi's indexes that can index logs
    write inserts) has no base file: read_optimized plans nothing of it, a snapshot reads its
    records, whole or streamed, with a filter on a column the query does not return."""
    ts = "20250401000000000"
    trips.instant(ts)
    new_id = "e1e1e1e1-0000-4000-8000-000000000000-0"
    rows = trips.rows([RIDER_A], ts, fare=77.0)
    rows = rows.set_column(4, "_hoodie_file_name", pa.array([new_id]))
    table = trips.table()
    writer = LogWriter(table.storage, table.partition_uri(PARTITION), new_id, ts, "0-0-0")
    writer.append([trips.data_block(ts, rows)])
    table = trips.table()
    ro = plan_splits(table, "read_optimized", columns=["_hoodie_record_key"], filters=[("fare", ">", 50.0)])
    assert new_id not in {s.file_id for s in ro}  # no base file: nothing to read optimized
    splits = plan_splits(table, "snapshot", columns=["_hoodie_record_key"], filters=[("fare", ">", 50.0)])
    split = next(s for s in splits if s.file_id == new_id)
    assert split.base_file is None and split.log_files
    whole = read_split(table, split)
    streamed = list(iter_split(table, split, batch_rows=1))
    assert whole.column_names == ["_hoodie_record_key"]
    assert whole.column("_hoodie_record_key").to_pylist() == [RIDER_A]
    assert [k for t in streamed for k in t.column("_hoodie_record_key").to_pylist()] == [RIDER_A]


def test_a_read_of_no_column_counts_the_rows_the_merge_keeps(trips: Trips) -> None:
    """``columns=[]`` (a count's read): as many rows as the full read, a deleted key gone, an
    update counted once; whole, streamed and by splits."""
    ts = "20250401000000000"
    trips.instant(ts)
    trips.append(trips.data_block(ts, trips.rows([RIDER_A], ts, fare=1.0)), trips.delete_block(ts, [RIDER_D]))
    table = trips.table()
    full = table.read()
    assert RIDER_D not in full.column("_hoodie_record_key").to_pylist()
    counted = table.read(columns=[])
    assert counted.num_columns == 0 and counted.num_rows == full.num_rows > 0
    splits = plan_splits(table, "snapshot", columns=[])
    assert any(s.log_files for s in splits)
    assert sum(t.num_rows for s in splits for t in iter_split(table, s, batch_rows=2)) == full.num_rows
    cheap = table.read(columns=[], filters=[("fare", ">", 30.0)])
    assert cheap.num_rows == table.read(columns=["fare"], filters=[("fare", ">", 30.0)]).num_rows > 0
    ro = table.read(query_type="read_optimized")
    assert table.read(columns=[], query_type="read_optimized").num_rows == ro.num_rows


def test_projected_splits_read_the_same_slices_for_fewer_columns(trips: Trips) -> None:
    """``projected_splits``: a plan's splits giving only some of its columns, from the slices it
    planned (a commit after the plan does not show), decoding nothing else but what the merge and
    the filters need."""
    from hudi_core.errors import HudiError
    from hudi_core.read import projected_splits

    table = trips.table()
    filters = [("fare", ">", 20.0)]
    splits = plan_splits(table, "snapshot", columns=["_hoodie_record_key", "rider", "fare"], filters=filters)
    expected = table.read(columns=["rider"], filters=filters)
    ts = "20250401000000000"
    trips.instant(ts)
    trips.append(trips.data_block(ts, trips.rows([RIDER_A], ts, fare=50.0, rider="late")))
    narrow = projected_splits(table.config, splits, ["rider"])
    assert [s.file_slice for s in narrow] == [s.file_slice for s in splits]
    ctx = narrow[0].context
    assert ctx.output.names == ["rider"] and set(ctx.needed) == {"rider", "fare"}
    assert "driver" not in ctx.merge_schema.names and "_hoodie_record_key" in ctx.merge_schema.names
    got = pa.concat_tables([read_split(table, s) for s in narrow])
    assert sorted(got.column("rider").to_pylist()) == sorted(expected.column("rider").to_pylist())
    assert "late" not in got.column("rider").to_pylist()
    counted = projected_splits(table.config, splits, [])
    assert counted[0].context.needed == ("fare",)
    assert sum(read_split(table, s).num_rows for s in counted) == expected.num_rows
    with pytest.raises(HudiError, match="not in the query's output"):
        projected_splits(table.config, splits, ["driver"])
