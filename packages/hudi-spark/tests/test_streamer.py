"""``hudi-py streamer`` (``hudi_spark.streamer``): each round ingests what is new in the source
as one commit, with the source checkpoint in the commit's extra metadata."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hudi_core.errors import ConfigError
from hudi_core.table import HudiTable
from hudi_core.timeline.commit_metadata import CommitMetadata

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

OPTS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.datasource.write.recordkey.field": "key",
    "hoodie.datasource.write.partitionpath.field": "part",
    "hoodie.datasource.write.precombine.field": "ts",
}


def _rows(keys: list[str], ts: int) -> pa.Table:
    return pa.table(
        {"key": keys, "ts": pa.array([ts] * len(keys), pa.int64()), "part": ["a", "b"] * (len(keys) // 2)}
    )


def _drop(folder: Path, name: str, data: pa.Table, fmt: str = "json", mtime_ns: int | None = None) -> Path:
    path = folder / f"{name}.{fmt}"
    if fmt == "json":
        path.write_text("".join(json.dumps(r) + "\n" for r in data.to_pylist()))
    elif fmt == "csv":
        pacsv.write_csv(data, path)
    else:
        pq.write_table(data, path)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


def _snapshot(base: str) -> dict[str, int]:
    rows = HudiTable.open(base).read(columns=["key", "ts"]).to_pylist()
    assert len(rows) == len({r["key"] for r in rows}), "a key is in the table twice"
    return {r["key"]: r["ts"] for r in rows}


def _checkpoint_of_last_commit(base: str) -> str:
    from hudi_spark.streamer import CHECKPOINT_KEY

    tl = HudiTable.open(base).timeline
    last = list(tl.completed_commits())[-1]
    return str(CommitMetadata.from_json(tl.read_details(last)).extra_metadata[CHECKPOINT_KEY])


def test_file_source_takes_new_files_each_round_and_a_restart_continues(spark: Any, tmp_path: Path) -> None:
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    # two files with the same modification time, taken in one round
    _drop(src, "f1", _rows(["k1", "k2"], 1), mtime_ns=1_000_000_000)
    _drop(src, "f2", _rows(["k3", "k4"], 1), mtime_ns=1_000_000_000)
    streamer = Streamer(spark, base, FileSource(str(src), "json"), OPTS)

    first = streamer.run_round(0)
    assert first.instant is not None and first.rows == 4
    assert _checkpoint_of_last_commit(base) == "1000000000:f2.json"
    assert streamer.run_round(1).instant is None  # nothing new: no commit

    _drop(src, "f3", _rows(["k1", "k5"], 2), mtime_ns=2_000_000_000)  # updates k1, inserts k5
    # a new streamer (a restart) starts from the checkpoint of the last commit
    restarted = Streamer(spark, base, FileSource(str(src), "json"), OPTS)
    third = restarted.run_round(0)
    assert third.rows == 2
    assert _snapshot(base) == {"k1": 2, "k2": 1, "k3": 1, "k4": 1, "k5": 2}
    assert _checkpoint_of_last_commit(base) == "2000000000:f3.json"
    assert restarted.run_round(1).instant is None
    assert len(list(HudiTable.open(base).timeline.completed_commits())) == 2


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_file_source_formats_and_files_per_round(spark: Any, tmp_path: Path, fmt: str) -> None:
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    # f1 and f2 share a modification time and a round ends between them: f2 is still taken
    for n, mtime in enumerate((1, 2, 2)):
        _drop(src, f"f{n}", _rows([f"k{n}a", f"k{n}b"], n), fmt=fmt, mtime_ns=mtime * 10**9)
    streamer = Streamer(spark, base, FileSource(str(src), fmt, max_files=2), OPTS)
    results = streamer.run(continuous=True, max_rounds=3)
    assert [r.rows for r in results] == [4, 2, 0]
    assert _snapshot(base) == {"k0a": 0, "k0b": 0, "k1a": 1, "k1b": 1, "k2a": 2, "k2b": 2}


def test_rate_source_rounds_update_earlier_rows(spark: Any, tmp_path: Path) -> None:
    from hudi_spark.streamer import RateSource, Streamer

    base = str(tmp_path / "t")
    opts = {**OPTS, "hoodie.datasource.write.precombine.field": "ts"}
    results = Streamer(spark, base, RateSource(rows_per_round=6, keys=4), opts).run(
        continuous=True, max_rounds=2
    )
    assert [r.checkpoint for r in results] == ["6", "12"]
    # values 0..11, keys value % 4: each key keeps its latest value (precombine on ts = value)
    assert _snapshot(base) == {"0": 8, "1": 9, "2": 10, "3": 11}


def test_file_source_rejects_a_missing_folder_and_an_unknown_format(tmp_path: Path) -> None:
    from hudi_spark.streamer import FileSource

    with pytest.raises(ConfigError, match="does not exist"):
        FileSource(str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match="avro"):
        FileSource(str(tmp_path), "avro")


def test_cli_runs_one_round_into_a_merge_on_read_table(tmp_path: Path) -> None:
    """The command a user runs, in its own process (its own Spark session)."""
    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    _drop(src, "f1", _rows(["k1", "k2", "k3", "k4"], 1))
    cmd = [
        sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", base, "--target-table", "trips",
        "--table-type", "MERGE_ON_READ", "--source-path", str(src), "--record-key", "key",
        "--partition-field", "part", "--source-ordering-field", "ts", "--master", "local[1]", "--quick-start",
        "--spark-conf", "spark.sql.shuffle.partitions=3", "--hoodie-conf", "hoodie.bulkinsert.shuffle.parallelism=2",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "round 0: commit" in done.stderr
    assert _snapshot(base) == {"k1": 1, "k2": 1, "k3": 1, "k4": 1}
    assert HudiTable.open(base).config.table_type == "MERGE_ON_READ"
    assert _checkpoint_of_last_commit(base).endswith(":f1.json")


def test_cli_takes_hoodie_streamer_style_flags(tmp_path: Path) -> None:
    """A HoodieStreamer user's flags: --source-class, --props with the source folder and the
    key fields, --hoodie-conf winning over --props."""
    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    _drop(src, "f1", _rows(["k1", "k2"], 7), fmt="parquet")
    props = tmp_path / "streamer.properties"
    props.write_text(
        "# as HoodieStreamer's --props\n"
        f"hoodie.streamer.source.dfs.root={src}\n"
        "hoodie.datasource.write.recordkey.field=key\n"
        "hoodie.datasource.write.partitionpath.field=part\n"
        "hoodie.datasource.write.precombine.field=nothing_such\n"
    )
    cmd = [
        sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", base, "--target-table", "trips",
        "--table-type", "MERGE_ON_READ", "--source-class", "org.apache.hudi.utilities.sources.ParquetDFSSource",
        "--props", str(props), "--hoodie-conf", "hoodie.datasource.write.precombine.field=ts",
        "--master", "local[1]", "--quick-start",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _snapshot(base) == {"k1": 7, "k2": 7}
    assert HudiTable.open(base).config.ordering_field == "ts"


def test_cli_refuses_an_unknown_source_class_before_starting_spark(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", str(tmp_path / "t"),
           "--source-class", "KafkaSource", "--source-path", str(tmp_path)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert (
        "--source-class 'KafkaSource' is not one of JsonDFSSource, CsvDFSSource, ParquetDFSSource"
        in done.stderr
    )
    assert "Spark" not in done.stderr and not (tmp_path / "t").exists()
