"""The file-system view on copies of corpus tables with timeline files added or removed."""

from __future__ import annotations

import io
import json
import shutil
from importlib import resources
from pathlib import Path

import fastavro
import pytest
from hudi_core import HudiTable
from hudi_core.fs_view import FileSystemView, list_partitions, partition_values
from hudi_core.testing.corpus import copy_corpus_table

COW = "tables/sample_cow/v6_simplekeygen_nonhivestyle"
OVERWRITE = "tables/sample_cow/v6_simplekeygen_nonhivestyle_overwritetable"
MOR = "tables/sample_mor_parquet/v6_nonpartitioned"
HIVE = "tables/sample_cow/v6_complexkeygen_hivestyle"
LATER = "20990101000000000"


def _ids(slices) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return sorted((s.partition_path, s.file_id) for s in slices)


def test_partitions_of_hive_style_nested_table(tmp_path: Path) -> None:
    table = HudiTable.open(str(copy_corpus_table(HIVE, tmp_path)))
    assert FileSystemView(table).partitions() == [
        "byteField=10/shortField=300", "byteField=20/shortField=100", "byteField=30/shortField=100",
    ]  # fmt: skip


def test_partition_values_parse_hive_and_plain_paths() -> None:
    assert partition_values("byteField=10/shortField=300", ["byteField", "shortField"], hive_style=True,
                            url_encoded=False) == {"byteField": "10", "shortField": "300"}  # fmt: skip
    assert partition_values("10", ["byteField"], hive_style=False, url_encoded=False) == {"byteField": "10"}
    assert partition_values("2024/01/02", ["ts"], hive_style=False, url_encoded=False) is None
    assert partition_values("a%2Fb", ["p"], hive_style=False, url_encoded=True) == {"p": "a/b"}


def test_latest_slices_and_as_of(tmp_path: Path) -> None:
    table = HudiTable.open(str(copy_corpus_table(COW, tmp_path)))
    view = FileSystemView(table)
    latest = view.latest_file_slices()
    assert [(s.partition_path, s.base_instant) for s in sorted(latest, key=lambda s: s.partition_path)] == [
        ("10", "20240418172804498"), ("20", "20240418172802262"), ("30", "20240418172804498"),
    ]  # fmt: skip
    first = view.latest_file_slices(as_of="20240418172802262")
    assert sorted(s.partition_path for s in first) == ["10", "20"]
    assert all(s.base_instant == "20240418172802262" for s in first)


def test_inflight_and_failed_base_files_are_hidden(tmp_path: Path) -> None:
    root = copy_corpus_table(COW, tmp_path)
    table = HudiTable.open(str(root))
    before = _ids(FileSystemView(table).latest_file_slices())
    src = next((root / "10").glob("*_20240418172804498.parquet"))
    fid = src.name.split("_")[0]
    # An inflight commit wrote a newer base file of an existing group and a new group.
    inflight = "20240418172900000"
    shutil.copy(src, root / "10" / f"{fid}_0-1-1_{inflight}.parquet")
    shutil.copy(src, root / "20" / f"0000aaaa-0000-0000-0000-000000000000-0_0-1-2_{inflight}.parquet")
    (root / ".hoodie" / f"{inflight}.commit.requested").write_bytes(b"")
    (root / ".hoodie" / f"{inflight}.inflight").write_bytes(b"")
    # A failed write that left no timeline file at all, newer than the first commit.
    shutil.copy(src, root / "30" / "0000bbbb-0000-0000-0000-000000000000-0_0-1-3_20240418172803000.parquet")
    view = FileSystemView(HudiTable.open(str(root)))
    slices = view.latest_file_slices()
    assert _ids(slices) == before
    assert all(s.base_instant != inflight for s in slices)
    assert HudiTable.open(str(root)).read().num_rows == 4


def test_stray_files_are_ignored(tmp_path: Path) -> None:
    root = copy_corpus_table(COW, tmp_path)
    for part in ("10", "20", "30"):
        (root / part / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
        (root / part / "notes.txt").write_text("hello")
        (root / part / ".something.parquet.crc").write_bytes(b"crc")
        (root / part / ".hoodie_partition_metadata_1").write_text("#partition metadata")
        (root / part / "_weird_name.parquet").write_bytes(b"junk")
    (root / ".DS_Store").write_bytes(b"x")
    table = HudiTable.open(str(root))
    view = FileSystemView(table)
    assert view.partitions() == ["10", "20", "30"]
    assert len(view.latest_file_slices()) == 3
    assert table.read().num_rows == 4


def test_another_writers_create_in_progress_is_skipped_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A concurrent writer's bytes under the storage's temporary name (local disk and HDFS
    create a file exclusively by writing a temporary one, then linking it): every other
    writer's and reader's listing meets them, and warned of each as a stray file."""
    from hudi_core.storage import TEMP_PREFIX

    root = copy_corpus_table(COW, tmp_path)
    (root / "10" / f"{TEMP_PREFIX}3d4ee5245cff426fb4857342c1f11651.tmp").write_bytes(b"PAR1 half written")
    (root / "20" / "notes.txt").write_text("a stray file is still named")
    table = HudiTable.open(str(root))
    with caplog.at_level("WARNING", logger="hudi_core"):
        assert len(FileSystemView(table).latest_file_slices()) == 3
        assert table.read().num_rows == 4
    warned = [r.getMessage() for r in caplog.records]
    assert not [m for m in warned if TEMP_PREFIX in m], warned
    assert any("notes.txt" in m for m in warned), warned


def test_replaced_file_groups_are_hidden_from_their_instant_on(tmp_path: Path) -> None:
    table = HudiTable.open(str(copy_corpus_table(OVERWRITE, tmp_path)))
    view = FileSystemView(table)
    replaced = {(p, f) for _, p, f in view.replaced_file_groups()}
    assert len(replaced) == 3
    latest = view.latest_file_slices()
    assert [(s.partition_path, s.base_instant) for s in latest] == [("30", "20240707001303088")]
    before = view.latest_file_slices(as_of="20240707001302376")
    assert {(s.partition_path, s.file_id) for s in before} == replaced


def _compaction_plan(file_id: str, base_instant: str, partition: str) -> bytes:
    schema_text = resources.files("hudi_core").joinpath("schemas/HoodieCompactionPlan.avsc").read_text()
    schema = fastavro.parse_schema(json.loads(schema_text))
    plan = {
        "operations": [{
            "baseInstantTime": base_instant, "deltaFilePaths": [], "dataFilePath": None,
            "fileId": file_id, "partitionPath": partition, "metrics": {}, "bootstrapFilePath": None,
        }],
        "extraMetadata": None, "version": 2, "strategy": None, "preserveHoodieMetadata": None,
    }  # fmt: skip
    buf = io.BytesIO()
    fastavro.writer(buf, schema, [plan])
    return buf.getvalue()


def test_pending_compaction_starts_a_new_slice_and_merged_view_joins_them(tmp_path: Path) -> None:
    root = copy_corpus_table(MOR, tmp_path)
    fid, base_instant = "d206069c-22c8-4532-b9ea-3cf4282342c4-0", "20250117083125837"
    tc = "20250117090000000"
    (root / ".hoodie" / f"{tc}.compaction.requested").write_bytes(_compaction_plan(fid, base_instant, ""))
    # A log written after scheduling names the compaction instant as its base instant; the
    # compaction itself has already written (but not committed) its base file.
    old_log = next(root.glob(f".{fid}_{base_instant}.log.1_*"))
    shutil.copy(old_log, root / f".{fid}_{tc}.log.1_0-1-1")
    base = next(root.glob(f"{fid}_*_{base_instant}.parquet"))
    shutil.copy(base, root / f"{fid}_0-9-9_{tc}.parquet")
    table = HudiTable.open(str(root))
    view = FileSystemView(table)
    assert [(o.file_id, o.instant) for o in view.pending_compaction_operations()] == [(fid, tc)]
    group = next(g for g in view.file_groups("") if g.file_id == fid)
    assert [s.base_instant for s in group.slices] == [base_instant, tc]
    newest = group.slices[-1]
    assert newest.base_file is None  # the pending compaction's base file is hidden
    assert [lf.name for lf in newest.log_files] == [f".{fid}_{tc}.log.1_0-1-1"]
    merged = next(s for s in view.latest_merged_file_slices() if s.file_id == fid)
    assert merged.base_instant == base_instant
    assert merged.base_file is not None and merged.base_file.instant == base_instant
    assert [lf.base_instant for lf in merged.log_files] == [base_instant, tc]
    latest = next(s for s in view.latest_file_slices() if s.file_id == fid)
    assert (latest.base_instant, latest.base_file) == (tc, None)
    latest_base = {b.file_id: b.instant for b in view.latest_base_files()}
    assert latest_base[fid] == base_instant
    rows = table.read()
    assert rows.num_rows == 4
    alice = rows.filter(rows.column("id").to_numpy() == 1)
    assert alice.column("isActive").to_pylist() == [False]


def test_list_partitions_of_non_partitioned_table(tmp_path: Path) -> None:
    table = HudiTable.open(str(copy_corpus_table(MOR, tmp_path)))
    assert list_partitions(table.storage, table.base_uri, partitioned=False) == [""]


@pytest.fixture(autouse=True)
def _corpus_present() -> None:
    from hudi_core.testing.corpus import corpus_root

    assert corpus_root() is not None, "the shared compat corpus is missing"


def test_pending_compaction_without_new_logs_still_reads_the_previous_slice(tmp_path: Path) -> None:
    root = copy_corpus_table(MOR, tmp_path)
    fid, base_instant = "d206069c-22c8-4532-b9ea-3cf4282342c4-0", "20250117083125837"
    tc = "20250117090000000"
    (root / ".hoodie" / f"{tc}.compaction.requested").write_bytes(_compaction_plan(fid, base_instant, ""))
    table = HudiTable.open(str(root))
    view = FileSystemView(table)
    latest = next(s for s in view.latest_file_slices() if s.file_id == fid)
    assert latest.base_instant == tc and latest.is_empty
    merged = next(s for s in view.latest_merged_file_slices() if s.file_id == fid)
    assert merged.base_instant == base_instant and len(merged.log_files) == 1
    assert table.read().num_rows == 4


@pytest.mark.parametrize("hive", [False, True])
def test_rows_of_null_and_slashed_partition_values_are_found(tmp_path: Path, hive: bool) -> None:
    """A null or empty value goes to ``__HIVE_DEFAULT_PARTITION__`` and a ``/`` in a value that is
    not URL-encoded nests a folder: Hudi finds both by their partition metadata, so reads and
    later updates must too (no row vanishes, no key gets a second file group)."""
    import pyarrow as pa
    from hudi_core.client.write_client import WriteClient

    table = HudiTable.create(str(tmp_path / "t"), name="t", table_type="MERGE_ON_READ", record_key_fields="id",
                             partition_fields="city", ordering_field="ts",
                             options={"hoodie.datasource.write.hive_style_partitioning": str(hive).lower()})  # fmt: skip
    rows = pa.table({"id": ["a", "b", "c", "d"], "ts": [1, 1, 1, 1], "city": ["sf", None, "", "x/y"]})
    WriteClient(table).write(rows, operation="upsert")
    prefix = "city=" if hive else ""
    default = f"{prefix}__HIVE_DEFAULT_PARTITION__"
    assert FileSystemView(HudiTable.open(table.base_uri)).partitions() == sorted(
        [f"{prefix}sf", default, f"{prefix}x/y"]
    )
    assert sorted(HudiTable.open(table.base_uri).read().column("id").to_pylist()) == ["a", "b", "c", "d"]
    WriteClient(HudiTable.open(table.base_uri)).write(
        pa.table({"id": ["b", "d"], "ts": [2, 2], "city": [None, "x/y"]}, schema=rows.schema),
        operation="upsert",
    )
    after = HudiTable.open(table.base_uri)
    assert sorted(zip(*after.read().select(["id", "ts"]).to_pydict().values(), strict=True)) == [
        ("a", 1), ("b", 2), ("c", 1), ("d", 2),
    ]  # fmt: skip
    assert len(FileSystemView(after).latest_file_slices()) == 3  # the updates found their file groups


def test_underscore_folders_without_data_are_not_partitions(tmp_path: Path) -> None:
    table = HudiTable.open(str(copy_corpus_table(COW, tmp_path)))
    (Path(table.base_uri) / "_temporary" / "0").mkdir(parents=True)
    (Path(table.base_uri) / "10" / "_spark_metadata").mkdir()
    assert FileSystemView(table).partitions() == ["10", "20", "30"]
