"""The same write gives the same data files with every executor (issue 7).

Each scenario writes a table twice per executor (an insert or bulk_insert, then an upsert with
updates, new keys and a new partition), ``hoodie.write.executor.type`` set on the table. The
tables must agree file by file, apart from file names and instant times:

- base files: the raw bytes of every column chunk except the three meta columns that embed the
  instant or the file name, the row groups (count and rows), the footer key/value metadata;
- log files: block types, headers (minus instant times), block footers, and each data block's
  decoded rows (minus the same meta columns) in file order.

The create handle is fed many small batches (``_BATCH_ROWS`` lowered) and the threaded executors
get tiny buffers (the ring wraps, the queue blocks), so an executor that dropped, duplicated or
reordered a batch would change the rows and bytes of some base file. The last tests prove that:
executors that do exactly that are caught by the same comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.executor import SimpleExecutor
from hudi_core.log.format import HeaderKey
from hudi_core.log.reader import read_log_file
from hudi_core.plugins.hookspecs import hookimpl
from hudi_core.plugins.manager import PluginManager, get_plugin_manager, reset_plugin_manager
from hudi_core.table.file_names import BaseFileName, LogFileName

pytest.importorskip("hudi_executors")

#: meta columns whose values embed the instant time or the file name
VOLATILE_COLUMNS = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name")
#: log block header keys that hold instant times
VOLATILE_HEADERS = (HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME)
#: rows handed to the executor per item (the write path's default is 65536; small here so every
#: create handle sees many batches and an out-of-order or missing batch shows)
BATCH_ROWS = 23

EXECUTORS: dict[str, dict[str, str]] = {
    "SIMPLE": {"hoodie.write.executor.type": "SIMPLE"},
    # 2 KiB: a 23-row batch is bigger, so the queue holds one batch and the producer blocks
    "BOUNDED_IN_MEMORY": {
        "hoodie.write.executor.type": "BOUNDED_IN_MEMORY",
        "hoodie.write.buffer.limit.bytes": "2048",
    },
    # 2 slots: the ring wraps many times per file
    "DISRUPTOR": {
        "hoodie.write.executor.type": "DISRUPTOR",
        "hoodie.write.executor.disruptor.buffer.size": "2",
    },
}

SCENARIOS = {  # name -> (table type, first operation)
    "cow-bulk_insert": ("COPY_ON_WRITE", "bulk_insert"),
    "cow-insert": ("COPY_ON_WRITE", "insert"),
    "mor-bulk_insert": ("MERGE_ON_READ", "bulk_insert"),
    "mor-insert": ("MERGE_ON_READ", "insert"),
}
#: MOR: no small-file packing, so the upsert's updates go to log files (with packing, a small base
#: file is rewritten as in Hudi) and its inserts to new base files
TABLE_OPTIONS = {"MERGE_ON_READ": {"hoodie.parquet.small.file.limit": "0"}, "COPY_ON_WRITE": {}}

CITIES = ("americas/brazil/sao_paulo", "americas/united_states/san_francisco", "asia/india/chennai")


def trips(ids: np.ndarray, ts: int, cities: tuple[str, ...] = CITIES) -> pa.Table:
    rng = np.random.default_rng(int(ids[0]) * 7 + ts)
    n = len(ids)
    return pa.table({
        "uuid": [f"trip-{i:06d}" for i in ids],
        "ts": pa.array(np.full(n, ts), pa.int64()),
        "rider": [f"rider-{i % 17}" for i in ids],
        "fare": np.round(rng.random(n) * 100.0, 2),
        "begin_lat": rng.random(n),
        "city": [cities[i % len(cities)] for i in ids],
    })  # fmt: skip


def first_write() -> pa.Table:
    # not in key order: insert keeps input order inside a file, bulk_insert sorts
    return trips(np.random.default_rng(5).permutation(600), ts=1)


def second_write() -> pa.Table:
    updates = trips(np.arange(0, 600, 4), ts=2)  # 150 updates across every partition
    inserts = trips(np.arange(600, 780), ts=2, cities=(*CITIES, "europe/france/paris"))  # 45 in a new one
    return pa.concat_tables([updates, inserts])


def create_table(root: Path, table_type: str, options: dict[str, str]) -> HudiTable:
    return HudiTable.create(
        str(root), name="trips", table_type=table_type, record_key_fields="uuid",
        partition_fields="city", ordering_field="ts", options={**TABLE_OPTIONS[table_type], **options},
    )  # fmt: skip


def write_table(root: Path, table_type: str, first_op: str, options: dict[str, str]) -> HudiTable:
    table = create_table(root, table_type, options)
    getattr(table, first_op)(first_write())
    table.upsert(second_write())
    return table


# -- the comparison ------------------------------------------------------------------------------


def _rows(table: pa.Table) -> dict[str, list[Any]]:
    return table.drop_columns([c for c in VOLATILE_COLUMNS if c in table.column_names]).to_pydict()


def describe_base_file(path: Path) -> dict[str, Any]:
    """Everything about a base file that must not depend on the executor."""
    pf = pq.ParquetFile(path)
    meta = pf.metadata
    raw = path.read_bytes()
    chunks: list[tuple[str, bytes]] = []
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for c in range(group.num_columns):
            col = group.column(c)
            if col.path_in_schema in VOLATILE_COLUMNS:
                continue
            start = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
            chunks.append((col.path_in_schema, raw[start : start + col.total_compressed_size]))
    return {
        "row_groups": [meta.row_group(i).num_rows for i in range(meta.num_row_groups)],
        "footer": {k: v for k, v in (meta.metadata or {}).items()},
        "column_chunks": chunks,
        "rows": _rows(pf.read()),
    }


def describe_log_file(table: HudiTable, path: Path) -> list[dict[str, Any]]:
    blocks = []
    for block in read_log_file(table.storage, str(path)):
        header = {k.name: v for k, v in block.header.items() if k not in VOLATILE_HEADERS}
        desc: dict[str, Any] = {"type": block.block_type.name, "header": header,
                                "footer": {k.name: v for k, v in block.footer.items()}}  # fmt: skip
        if block.is_data:
            desc["rows"] = _rows(block.records())
        elif block.block_type.name == "DELETE":
            desc["rows"] = block.deletes().to_pydict()
        blocks.append(desc)
    return blocks


def describe_table(table: HudiTable) -> dict[str, list[dict[str, Any]]]:
    """Partition -> file groups in a canonical order, each with its files described.

    File ids and instants are random/clock-made, so a file group is named by the ordinal of its
    first base file's instant and that file's first record key; instants by their ordinal."""
    root = Path(table.base_uri.removeprefix("file://"))
    ordinal = {
        i.timestamp: n
        for n, i in enumerate(sorted(table.timeline.completed_commits(), key=lambda i: i.timestamp))
    }
    out: dict[str, list[dict[str, Any]]] = {}
    for part_dir in sorted(p for p in root.rglob("*") if p.is_dir() and ".hoodie" not in p.parts):
        groups: dict[str, dict[str, Any]] = {}
        for f in sorted(part_dir.iterdir()):
            if (base := BaseFileName.parse(f.name)) is not None:
                g = groups.setdefault(base.file_id, {"base": {}, "logs": {}})
                g["base"][ordinal[base.instant_time]] = describe_base_file(f)
            elif (log := LogFileName.parse(f.name)) is not None:
                g = groups.setdefault(log.file_id, {"base": {}, "logs": {}})
                g["logs"][(ordinal[log.base_instant], log.version)] = describe_log_file(table, f)
        if not groups:
            continue

        def name(g: dict[str, Any]) -> tuple[int, str]:
            first = min(g["base"]) if g["base"] else -1
            keys = g["base"][first]["rows"]["_hoodie_record_key"] if g["base"] else [""]
            return first, keys[0]

        out[str(part_dir.relative_to(root))] = sorted(groups.values(), key=name)
    return out


def assert_same_files(expected: dict[str, Any], actual: dict[str, Any], label: str) -> None:
    assert sorted(actual) == sorted(expected), f"{label}: partitions differ"
    for part, groups in expected.items():
        assert len(actual[part]) == len(groups), f"{label}: {part}: number of file groups differs"
        for n, (want, got) in enumerate(zip(groups, actual[part], strict=True)):
            where = f"{label}: {part} file group {n}"
            assert sorted(got["base"]) == sorted(want["base"]), f"{where}: base files differ"
            for inst, w in want["base"].items():
                g = got["base"][inst]
                for key in ("row_groups", "footer", "rows"):
                    assert g[key] == w[key], f"{where}: base file of instant #{inst}: {key} differ"
                assert g["column_chunks"] == w["column_chunks"], (
                    f"{where}: instant #{inst}: column bytes differ"
                )
            assert got["logs"] == want["logs"], f"{where}: log files differ"


# -- tests ---------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def small_handle_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    import hudi_core.write.handles as handles

    assert handles._BATCH_ROWS > BATCH_ROWS  # the knob this test relies on still exists
    monkeypatch.setattr(handles, "_BATCH_ROWS", BATCH_ROWS)


@pytest.fixture(scope="module")
def simple_writes(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The SIMPLE executor's files per scenario after the first and after the second write,
    written once for the module."""
    import hudi_core.write.handles as handles

    saved, handles._BATCH_ROWS = handles._BATCH_ROWS, BATCH_ROWS
    out = {}
    try:
        for name, (ttype, op) in SCENARIOS.items():
            table = create_table(tmp_path_factory.mktemp(name), ttype, EXECUTORS["SIMPLE"])
            getattr(table, op)(first_write())
            after_first = describe_table(table)
            table.upsert(second_write())
            out[name] = (after_first, describe_table(table))
        return out
    finally:
        handles._BATCH_ROWS = saved


@pytest.fixture(scope="module")
def simple_tables(
    simple_writes: dict[str, tuple[dict[str, Any], dict[str, Any]]],
) -> dict[str, dict[str, Any]]:
    return {name: both[1] for name, both in simple_writes.items()}


def test_the_scenarios_exercise_the_executor_and_both_file_kinds(simple_tables: dict[str, Any]) -> None:
    for name, desc in simple_tables.items():
        bases = [b for gs in desc.values() for g in gs for b in g["base"].values()]
        assert max(len(b["rows"]["_hoodie_record_key"]) for b in bases) > 4 * BATCH_ROWS, name
        assert "europe/france/paris" in desc, name
        logs = [blk for gs in desc.values() for g in gs for lg in g["logs"].values() for blk in lg]
        if name.startswith("mor"):
            assert any(b.get("rows") and len(b["rows"]["_hoodie_record_key"]) for b in logs), name
        else:
            assert not logs, name


@pytest.mark.parametrize("executor", ["BOUNDED_IN_MEMORY", "DISRUPTOR", "SIMPLE"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_same_files_with_every_executor(
    tmp_path: Path, simple_tables: dict[str, Any], scenario: str, executor: str
) -> None:
    ttype, op = SCENARIOS[scenario]
    table = write_table(tmp_path / "t", ttype, op, EXECUTORS[executor])
    assert table.read().num_rows == 780
    assert_same_files(simple_tables[scenario], describe_table(table), f"{executor} vs SIMPLE, {scenario}")


# -- the comparison catches a misbehaving executor -------------------------------------------------


def _swap_first_two(items: list[Any]) -> list[Any]:
    return [items[1], items[0], *items[2:]] if len(items) > 1 else items


class _Tampering:
    """SIMPLE, but the producer's items pass through ``tamper`` first."""

    def __init__(self, tamper: Callable[[list[Any]], list[Any]]) -> None:
        self.tamper = tamper

    def execute(self, producer: Iterable[Any], transform: Callable[[Any], Any], consumer: Any) -> Any:
        items: Iterator[Any] = iter(self.tamper(list(producer)))
        return SimpleExecutor().execute(items, transform, consumer)


class _BrokenExecutors:
    @hookimpl
    def hudi_register_executors(self, register: Any) -> None:
        register("REORDERING", lambda config: _Tampering(_swap_first_two))
        register("DROPPING", lambda config: _Tampering(lambda xs: xs[:-1]))
        register("DUPLICATING", lambda config: _Tampering(lambda xs: xs + xs[-1:]))


@pytest.fixture
def broken_executors() -> Iterator[None]:
    previous = get_plugin_manager()
    pm = PluginManager()
    pm.register(_BrokenExecutors(), name="broken-executors", distribution=("test", "0"))
    reset_plugin_manager(pm)
    try:
        yield
    finally:
        reset_plugin_manager(previous)


@pytest.mark.parametrize(
    ("broken", "caught_by"),
    # a swap keeps row count, key range and bloom filter: only the row order shows it
    [("REORDERING", "rows differ"), ("DROPPING", "row_groups differ"), ("DUPLICATING", "row_groups differ")],
)
@pytest.mark.parametrize("scenario", ["cow-insert", "mor-bulk_insert"])
def test_the_comparison_catches_a_broken_executor(
    tmp_path: Path,
    simple_writes: dict[str, Any],
    broken_executors: None,
    scenario: str,
    broken: str,
    caught_by: str,
) -> None:
    # the first write only: an upsert over a file holding a key twice is another matter
    ttype, op = SCENARIOS[scenario]
    table = create_table(tmp_path / "t", ttype, {"hoodie.write.executor.type": broken})
    getattr(table, op)(first_write())
    with pytest.raises(AssertionError, match=caught_by):
        assert_same_files(simple_writes[scenario][0], describe_table(table), broken)
