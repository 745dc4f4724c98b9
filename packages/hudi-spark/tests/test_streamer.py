"""``hudi-py streamer`` (``hudi_spark.streamer``): each round ingests what is new in the source
as one commit, with the source checkpoint in the commit's extra metadata."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hudi_core import HudiTable
from hudi_core.errors import ConfigError
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


def _checkpoints_of_last_commit(base: str) -> tuple[str, str | None]:
    """(HoodieStreamer's ``deltastreamer.checkpoint.key``, our exact position) of the last commit."""
    tl = HudiTable.open(base).timeline
    last = list(tl.completed_commits())[-1]
    extra = CommitMetadata.from_json(tl.read_details(last)).extra_metadata
    return str(extra["deltastreamer.checkpoint.key"]), extra.get("hoodie.py.streamer.checkpoint")


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
    # Hudi's DFS checkpoint (newest file's modification time in epoch ms), and our exact position
    assert _checkpoints_of_last_commit(base) == ("1000", "1000000000:f2.json")
    assert streamer.run_round(1).instant is None  # nothing new: no commit

    _drop(src, "f3", _rows(["k1", "k5"], 2), mtime_ns=2_000_000_000)  # updates k1, inserts k5
    # a new streamer (a restart) starts from the checkpoint of the last commit
    restarted = Streamer(spark, base, FileSource(str(src), "json"), OPTS)
    third = restarted.run_round(0)
    assert third.rows == 2
    assert _snapshot(base) == {"k1": 2, "k2": 1, "k3": 1, "k4": 1, "k5": 2}
    assert _checkpoints_of_last_commit(base) == ("2000", "2000000000:f3.json")
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


def _seed(spark: Any, base: str, extra_metadata: dict[str, str]) -> None:
    """A table whose last commit carries ``extra_metadata`` (as another streamer left it)."""
    from hudi_spark.writer import write

    seed = spark.createDataFrame(_rows(["seed0", "seed1"], 0))
    write(seed, base, operation="upsert", options=OPTS, extra_metadata=extra_metadata)


@pytest.mark.parametrize(
    ("extra", "ingested"),
    [
        # HoodieStreamer's DFS checkpoint: every file modified in or before that millisecond is done
        ({"deltastreamer.checkpoint.key": "7000"}, ["c"]),
        # an older commit of ours: <mtime_ns>:<file> in HoodieStreamer's key
        ({"deltastreamer.checkpoint.key": "7000000100:a.json"}, ["b", "c"]),
        # our exact position wins over Hudi's, which stopped before the millisecond a and b share
        (
            {"deltastreamer.checkpoint.key": "6999", "hoodie.py.streamer.checkpoint": "7000000100:a.json"},
            ["b", "c"],
        ),
    ],
    ids=["hudi", "legacy", "exact-wins"],
)
def test_file_source_resumes_from_each_checkpoint_form(
    spark: Any, tmp_path: Path, extra: dict[str, str], ingested: list[str]
) -> None:
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    # a and b within one millisecond (7000 ms), c later
    for name, mtime_ns in (("a", 7_000_000_100), ("b", 7_000_000_200), ("c", 8_000_000_000)):
        _drop(src, name, _rows([f"{name}1", f"{name}2"], 1), mtime_ns=mtime_ns)
    _seed(spark, base, extra)

    result = Streamer(spark, base, FileSource(str(src), "json"), OPTS).run_round(0)
    assert sorted(_snapshot(base)) == sorted(
        ["seed0", "seed1"] + [f"{n}{i}" for n in ingested for i in (1, 2)]
    )
    assert result.checkpoint == "8000"
    assert _checkpoints_of_last_commit(base) == ("8000", "8000000000:c.json")


def test_file_source_checkpoint_keeps_files_sharing_a_millisecond_for_hoodie_streamer(
    spark: Any, tmp_path: Path
) -> None:
    """A round that ends between two files of one millisecond writes Hudi's checkpoint one
    millisecond earlier (HoodieStreamer resuming there re-reads rather than skips the second
    file), and our exact position past the first."""
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    for name, mtime_ns in (("a", 7_000_000_100), ("b", 7_000_000_200), ("c", 8_000_000_000)):
        _drop(src, name, _rows([f"{name}1", f"{name}2"], 1), mtime_ns=mtime_ns)
    streamer = Streamer(spark, base, FileSource(str(src), "json", max_files=1), OPTS)

    assert streamer.run_round(0).rows == 2
    assert _checkpoints_of_last_commit(base) == ("6999", "7000000100:a.json")
    assert streamer.run_round(1).rows == 2
    assert _checkpoints_of_last_commit(base) == ("7000", "7000000200:b.json")
    assert streamer.run_round(2).rows == 2
    assert _checkpoints_of_last_commit(base) == ("8000", "8000000000:c.json")
    assert sorted(_snapshot(base)) == ["a1", "a2", "b1", "b2", "c1", "c2"]


def test_json_source_takes_every_file_below_the_folder_whatever_its_name(spark: Any, tmp_path: Path) -> None:
    """As Hudi's DFSPathSelector: sub-folders too, any name (the format comes from the source),
    except names starting with ``.`` or ``_`` (files and folders)."""
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    for folder in ("sub/deeper", "_temporary", ".hidden"):
        (src / folder).mkdir(parents=True)

    def put(rel: str, key: str, mtime_s: int, *, gz: bool = False) -> None:
        data = (json.dumps({"key": key, "ts": 1, "part": "a"}) + "\n").encode()
        (src / rel).write_bytes(gzip.compress(data) if gz else data)
        os.utime(src / rel, ns=(mtime_s * 10**9, mtime_s * 10**9))

    put("a.json", "plain", 1)
    put("b.json.gz", "gzip", 2, gz=True)  # Spark reads .gz transparently
    put("c.jsonl", "jsonl", 3)
    put("part-00000", "no-extension", 4)
    put("sub/deeper/d.json", "nested", 5)
    put("_SUCCESS", "marker", 6)
    put(".e.json", "hidden", 6)
    put("_temporary/f.json", "temporary", 6)
    put(".hidden/g.json", "hidden-folder", 6)

    result = Streamer(spark, base, FileSource(str(src), "json"), OPTS).run_round(0)
    assert result.rows == 5
    assert sorted(_snapshot(base)) == ["gzip", "jsonl", "nested", "no-extension", "plain"]
    assert _checkpoints_of_last_commit(base) == ("5000", "5000000000:sub/deeper/d.json")


def test_file_source_skips_empty_files(spark: Any, tmp_path: Path) -> None:
    """0-byte files are not read (Spark finds no columns in them) nor counted in a round's
    files, but a round moves past them: one file per round never sticks at an empty file."""
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    empty = src / "f1.json"
    empty.touch()
    os.utime(empty, ns=(2 * 10**9, 2 * 10**9))
    streamer = Streamer(spark, base, FileSource(str(src), "json", max_files=1), OPTS)
    assert streamer.run_round(0).instant is None  # only an empty file: nothing to commit
    assert not HudiTable.exists(base)

    _drop(src, "f0", _rows(["k1", "k2"], 1), mtime_ns=1 * 10**9)
    _drop(src, "f2", _rows(["k3", "k4"], 3), mtime_ns=3 * 10**9)
    (src / "f3.json").touch()
    os.utime(src / "f3.json", ns=(4 * 10**9, 4 * 10**9))
    results = streamer.run(continuous=True, max_rounds=3)
    assert [r.rows for r in results] == [2, 2, 0]
    assert _snapshot(base) == {"k1": 1, "k2": 1, "k3": 3, "k4": 3}
    # the newest file, empty, is behind the checkpoint
    assert _checkpoints_of_last_commit(base) == ("4000", "4000000000:f3.json")


def test_a_file_with_no_rows_does_not_stop_the_streamer(spark: Any, tmp_path: Path) -> None:
    """A non-empty file that holds no rows (blank lines) gives Spark no columns: the round
    commits nothing and the next round goes past it (one file per round never sticks there)."""
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    (src / "f1.json").write_text("\n\n")
    os.utime(src / "f1.json", ns=(1 * 10**9, 1 * 10**9))
    _drop(src, "f2", _rows(["k1", "k2"], 2), mtime_ns=2 * 10**9)
    results = Streamer(spark, base, FileSource(str(src), "json", max_files=1), OPTS).run(
        continuous=True, max_rounds=2
    )
    assert [(r.instant is not None, r.rows) for r in results] == [(False, 0), (True, 2)]
    assert _snapshot(base) == {"k1": 2, "k2": 2}
    assert _checkpoints_of_last_commit(base) == ("2000", "2000000000:f2.json")


def test_file_source_takes_a_file_uri(spark: Any, tmp_path: Path) -> None:
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    _drop(src, "f1", _rows(["k1", "k2"], 1), mtime_ns=10**9)
    assert src.as_uri().startswith("file:///")
    result = Streamer(spark, base, FileSource(src.as_uri(), "json"), OPTS).run_round(0)
    assert result.rows == 2
    assert _snapshot(base) == {"k1": 1, "k2": 1}
    with pytest.raises(ConfigError, match="does not exist"):
        FileSource((tmp_path / "nowhere").as_uri())


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


@pytest.mark.slow
def test_cli_runs_async_clustering_beside_its_rounds(tmp_path: Path) -> None:
    """HoodieStreamer's ``--hoodie-conf hoodie.clustering.async.enabled=true``: a clustering is
    scheduled every ``async.max.commits`` rounds and runs in the background; every row stays."""
    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    for n in range(4):
        _drop(src, f"f{n}", _rows([f"k{n}-{i}" for i in range(6)], n), mtime_ns=(1_700_000_000 + n) * 10**9)
    cmd = [
        sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", base, "--target-table", "trips",
        "--table-type", "COPY_ON_WRITE", "--op", "INSERT", "--source-path", str(src), "--record-key", "key",
        "--partition-field", "part", "--source-ordering-field", "ts", "--master", "local[1]", "--quick-start",
        "--continuous", "--max-rounds", "4", "--max-files-per-round", "1",
        "--hoodie-conf", "hoodie.clustering.async.enabled=true", "--hoodie-conf", "hoodie.clustering.async.max.commits=2",
        "--hoodie-conf", "hoodie.parquet.small.file.limit=0",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    scheduled = re.findall(r"clustering (\d+) scheduled", done.stderr)
    assert len(scheduled) == 2, done.stderr[-3000:]  # after rounds 1 and 3
    tl = HudiTable.open(base).timeline
    assert [i.timestamp for i in tl.completed() if i.action == "replacecommit"] == scheduled
    assert list(tl.pending()) == []
    assert _snapshot(base) == {f"k{n}-{i}": n for n in range(4) for i in range(6)}


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


def test_sql_transformers_shape_each_round_before_it_is_written(spark: Any, tmp_path: Path) -> None:
    """HoodieStreamer's SqlQueryBasedTransformer and SqlFileBasedTransformer, chained: the query
    names the round's rows <SRC>; the file's statements run in order, the last one's rows win."""
    from hudi_spark.streamer import FileSource, Streamer
    from hudi_spark.transformers import transformers

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    _drop(src, "f1", _rows(["k1", "k2", "k3", "k4"], 5), mtime_ns=1_000_000_000)
    sql_file = tmp_path / "shape.sql"
    sql_file.write_text(
        "CREATE OR REPLACE TEMPORARY VIEW kept AS SELECT * FROM <SRC> WHERE key <> 'k4';\n"
        "SELECT key, ts, part, concat(part, '-', key) AS tag FROM kept\n"
    )
    options = {**OPTS, "hoodie.streamer.transformer.sql": "SELECT key, ts * 10 AS ts, upper(part) AS part FROM <SRC>",
               "hoodie.streamer.transformer.sql.file": str(sql_file)}  # fmt: skip
    transform = transformers(["org.apache.hudi.utilities.transform.SqlQueryBasedTransformer,SqlFileBasedTransformer"],
                             options)  # fmt: skip
    result = Streamer(spark, base, FileSource(str(src), "json"), options, transform=transform).run_round(0)
    assert result.rows == 3
    rows = HudiTable.open(base).read(columns=["key", "ts", "part", "tag"]).sort_by("key").to_pylist()
    assert rows == [{"key": "k1", "ts": 50, "part": "A", "tag": "A-k1"}, {"key": "k2", "ts": 50, "part": "B", "tag": "B-k2"},
                    {"key": "k3", "ts": 50, "part": "A", "tag": "A-k3"}]  # fmt: skip
    assert sorted(p.name for p in Path(base).iterdir() if not p.name.startswith(".")) == ["A", "B"]
    assert not [t for t in spark.catalog.listTables() if t.name.lower().startswith("hoodie_src_tmp_table")]


def test_transformer_and_filter_dupes_mistakes_fail_before_spark(tmp_path: Path) -> None:
    """An unknown transformer class, a transformer without its query or file, and --filter-dupes
    with UPSERT (HoodieStreamer refuses it: updates would be lost) fail before Spark starts."""
    base = [sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", str(tmp_path / "t"),
            "--source-path", str(tmp_path)]  # fmt: skip
    cases = [
        (["--transformer-class", "FlatteningTransformer"], "--transformer-class 'FlatteningTransformer' is not one of"),
        (["--transformer-class", "SqlQueryBasedTransformer"], "SqlQueryBasedTransformer needs hoodie.streamer.transformer.sql"),
        (["--transformer-class", "SqlFileBasedTransformer", "--hoodie-conf",
          f"hoodie.streamer.transformer.sql.file={tmp_path / 'missing.sql'}"], "cannot read the transformer's SQL file"),
        (["--filter-dupes"], "'--filter-dupes' needs to be disabled when '--op' is 'UPSERT'"),
    ]  # fmt: skip
    for flags, message in cases:
        done = subprocess.run(base + flags, capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and message in done.stderr, (flags, done.stderr[-2000:])
        assert "Spark" not in done.stderr and not (tmp_path / "t").exists()


def test_cli_filter_dupes_drops_keys_the_table_holds(tmp_path: Path) -> None:
    """``--filter-dupes --op INSERT``: a round's records whose key the table holds are dropped
    (the stored rows stay), and a key twice in the round is written once; with a SQL transformer."""
    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    _drop(src, "f1", _rows(["k1", "k2"], 1), mtime_ns=(1_700_000_000) * 10**9)
    _drop(src, "f2", _rows(["k2", "k3", "k3", "k4"], 2), mtime_ns=(1_700_000_001) * 10**9)
    cmd = [
        sys.executable, "-m", "hudi_core.cli.main", "streamer", "--target-base-path", base, "--target-table", "trips",
        "--table-type", "COPY_ON_WRITE", "--op", "INSERT", "--filter-dupes", "--source-path", str(src),
        "--record-key", "key", "--partition-field", "part", "--source-ordering-field", "ts", "--master", "local[1]",
        "--quick-start", "--continuous", "--max-rounds", "2", "--max-files-per-round", "1",
        "--transformer-class", "SqlQueryBasedTransformer",
        "--hoodie-conf", "hoodie.streamer.transformer.sql=SELECT key, ts, 'p' AS part FROM <SRC>",
        "--checkpoint", "0", "--source-limit", "1000000",  # HoodieStreamer's flags, taken
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _snapshot(base) == {"k1": 1, "k2": 1, "k3": 2, "k4": 2}
    tl = HudiTable.open(base).timeline
    resets = [CommitMetadata.from_json(tl.read_details(i)).extra_metadata.get("deltastreamer.checkpoint.reset_key")
              for i in tl.completed_commits()]  # fmt: skip
    assert resets == ["0", "0"]
    assert sorted(p.name for p in Path(base).iterdir() if not p.name.startswith(".")) == ["p"]


def test_a_given_checkpoint_is_resumed_from_once(spark: Any, tmp_path: Path) -> None:
    """HoodieStreamer's ``--checkpoint``: the run starts from it rather than from the table, and
    records it (``deltastreamer.checkpoint.reset_key``); later rounds, and a run given the same
    value, go on from the table's checkpoint; a run given another value starts from that one."""
    from hudi_spark.streamer import CHECKPOINT_RESET_KEY, FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    for n in (1, 2, 3):
        _drop(src, f"f{n}", _rows([f"k{n}a", f"k{n}b"], n), mtime_ns=n * 1000 * 10**9)
    source = FileSource(str(src), "json", max_files=1)
    given = str(1500 * 1000)  # ms: f1 is done
    streamer = Streamer(spark, base, source, OPTS, checkpoint=given)
    assert [r.rows for r in streamer.run(continuous=True, max_rounds=2)] == [2, 2]  # f2, then f3
    assert set(_snapshot(base)) == {"k2a", "k2b", "k3a", "k3b"}
    tl = HudiTable.open(base).timeline
    extras = [CommitMetadata.from_json(tl.read_details(i)).extra_metadata for i in tl.completed_commits()]
    assert [e[CHECKPOINT_RESET_KEY] for e in extras] == [given, given]
    assert Streamer(spark, base, source, OPTS, checkpoint=given).run_round(0).instant is None  # nothing new
    again = Streamer(spark, base, source, OPTS, checkpoint="0").run_round(0)  # from the start: f1
    assert again.rows == 2 and set(_snapshot(base)) == {"k1a", "k1b", "k2a", "k2b", "k3a", "k3b"}


def test_source_limit_cuts_a_round_by_bytes(spark: Any, tmp_path: Path) -> None:
    """HoodieStreamer's ``--source-limit`` on a DFS source: a round stops before the file that
    would bring its bytes to the limit (one file at least, where Hudi's would take none)."""
    from hudi_spark.streamer import FileSource, Streamer

    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    sizes = [_drop(src, f"f{n}", _rows([f"k{n}a", f"k{n}b"], n), mtime_ns=n * 10**12).stat().st_size
             for n in (1, 2, 3)]  # fmt: skip
    limit = sizes[0] + sizes[1] + 1
    results = Streamer(spark, base, FileSource(str(src), "json", max_bytes=limit), OPTS).run(
        continuous=True, max_rounds=2
    )
    assert [r.rows for r in results] == [4, 2]  # f1 + f2, then f3
    tiny = str(tmp_path / "t2")
    results = Streamer(spark, tiny, FileSource(str(src), "json", max_bytes=1), OPTS).run(
        continuous=True, max_rounds=3
    )
    assert [r.rows for r in results] == [2, 2, 2]
    assert len(_snapshot(tiny)) == 6


def test_streamer_under_occ_keeps_its_checkpoint_past_another_writers_commits(
    spark: Any, tmp_path: Path
) -> None:
    """Issue #20: a backfill commits between the streamer's rounds; a restarted streamer
    resumes from its own last checkpoint (not the other writer's commit, which has none)."""
    from hudi_spark.streamer import FileSource, Streamer

    occ = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
           "hoodie.client.heartbeat.interval_in_ms": "1000"}  # fmt: skip
    src, base = tmp_path / "in", str(tmp_path / "t")
    src.mkdir()
    _drop(src, "f1", _rows(["k1", "k2"], 1), mtime_ns=1_000_000_000)
    assert Streamer(spark, base, FileSource(str(src), "json"), {**OPTS, **occ}).run_round(0).rows == 2
    for n in range(3):  # the backfill
        HudiTable.open(base).upsert(_rows([f"b{n}", f"c{n}"], 5), options=occ)
    _drop(src, "f2", _rows(["k1", "k3"], 2), mtime_ns=2_000_000_000)
    restarted = Streamer(spark, base, FileSource(str(src), "json"), {**OPTS, **occ})
    assert restarted.run_round(0).rows == 2  # only f2: f1 is not taken again
    snap = _snapshot(base)
    assert snap == {"k1": 2, "k2": 1, "k3": 2, "b0": 5, "c0": 5, "b1": 5, "c1": 5, "b2": 5, "c2": 5}
    assert _checkpoints_of_last_commit(base) == ("2000", "2000000000:f2.json")
