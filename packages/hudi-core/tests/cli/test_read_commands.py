"""``hudi-py read`` and ``hudi-py file-slices`` on corpus tables."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hudi_core.cli.commands.read import parse_filter
from hudi_core.cli.main import main
from hudi_core.testing.corpus import corpus_root

TRIPS = "tables/trips_mor_avro/v6_trips_8i1u"


def _path(rel: str) -> str:
    root = corpus_root()
    assert root is not None, "the shared compat corpus is missing"
    return str(root / rel)


def test_read_writes_parquet_with_projection_and_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sf.parquet"
    rc = main(["read", _path(TRIPS), "--columns", "rider,fare", "--filter", "city=san_francisco",
               "--filter", "fare>20", "--output", str(out)])  # fmt: skip
    assert rc == 0
    rows = pq.read_table(out).to_pylist()
    assert sorted((r["rider"], r["fare"]) for r in rows) == [
        ("rider-C", 27.7),
        ("rider-D", 25.0),
        ("rider-E", 93.5),
    ]
    assert "wrote 3 rows" in capsys.readouterr().out


def test_read_incremental_and_table_format(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["read", _path(TRIPS), "--query", "incremental", "--start", "20250331030642808",
               "--format", "table", "--columns", "rider,fare"])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["rider", "fare"]
    assert out[1].split() == ["rider-D", "25.0"]
    assert out[-1] == "(1 rows)"


def test_read_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["read", _path("tables/sample_cow/v6_simplekeygen_hivestyle_no_metafields"),
               "--query", "incremental", "--format", "table"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 1
    assert "Incremental queries are not supported when meta fields are disabled" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["read", _path(TRIPS)]) == 1
    assert "--output" in capsys.readouterr().err


def test_read_incremental_with_nothing_new_prints_no_rows(capsys: pytest.CaptureFixture[str]) -> None:
    from hudi_core import HudiTable

    last = HudiTable.open(_path(TRIPS)).timeline.completed_commits().last()
    assert last is not None
    rc = main(["read", _path(TRIPS), "--query", "incremental", "--start", last.timestamp,
               "--format", "table", "--columns", "_hoodie_commit_time,rider"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert out == ["_hoodie_commit_time  rider", "(0 rows)"]


def test_read_incremental_from_000_reads_every_commit(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["read", _path(TRIPS), "--query", "incremental", "--start", "000", "--format", "table"])
    assert rc == 0
    assert capsys.readouterr().out.splitlines()[-1] == "(8 rows)"


@pytest.mark.parametrize("as_of", ["2024-13-45", "202404181728"])
def test_read_refuses_an_as_of_outside_hudis_forms(as_of: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["read", _path(TRIPS), "--as-of", as_of, "--format", "table"])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"as_of={as_of!r} is not an instant time" in err
    assert "'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'" in err and len(err.strip().splitlines()) == 1


def test_file_slices_json_lists_base_and_log_files(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["file-slices", _path(TRIPS), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["partition"] for r in rows] == ["city=chennai", "city=san_francisco", "city=sao_paulo"]
    sf = rows[1]
    assert sf["base_instant"] == "20250331030642808"
    assert sf["base_file"].endswith("_20250331030642808.parquet")
    assert sf["log_files"] == [".d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85"]


def test_parse_filter() -> None:
    assert parse_filter("city=sf") == ("city", "=", "sf")
    assert parse_filter("fare >= 2.5") == ("fare", ">=", 2.5)
    assert parse_filter("id in (1, 2)") == ("id", "in", [1, 2])
    assert parse_filter("isActive=true") == ("isActive", "=", True)


def test_read_filters_dates_times_and_decimals_written_as_text(tmp_path: Path) -> None:
    """A date, a time with its offset and a decimal on the command line read as the column's
    type (Apache Hudi's sample table: ids 1-4 on 2023-04-01..04, 17:01..20:04 UTC)."""
    table = _path("tables/sample_cow/v6_simplekeygen_nonhivestyle")
    cases = {
        "dateField>=2023-04-03": [3, 4],
        "timestampField<2023-04-02T18:02:00Z": [1],
        "timestampField>2023-04-03 21:00:00+02:00": [3, 4],  # 19:00 UTC
        "decimalField>60000": [2, 4],
        "dateField in (2023-04-01, 2023-04-04)": [1, 4],
    }
    for expr, ids in cases.items():
        out = tmp_path / "out.parquet"
        assert main(["read", table, "--columns", "id", "--filter", expr, "--output", str(out)]) == 0
        assert sorted(pq.read_table(out).column("id").to_pylist()) == ids, expr
    assert main(["read", table, "--filter", "dateField>=April", "--output", str(tmp_path / "x.parquet")]) != 0


def test_read_cdc_writes_the_changes(tmp_path: Path) -> None:
    """``--query incremental --incremental-format cdc`` on a table created with
    ``-o hoodie.table.cdc.enabled=true``: the changes (op, ts_ms, before, after) as parquet."""
    import pyarrow as pa
    from hudi_core import HudiTable

    path = str(tmp_path / "t")
    assert main(["create", path, "--name", "t", "--record-key", "id", "--ordering-field", "ts",
                 "-o", "hoodie.table.cdc.enabled=true"]) == 0  # fmt: skip
    t = HudiTable.open(path)
    t.bulk_insert(pa.table({"id": ["a", "b"], "ts": [1, 1]}))
    t.upsert(pa.table({"id": ["a"], "ts": [2]}))
    out = tmp_path / "changes.parquet"
    rc = main(["read", path, "--query", "incremental", "--incremental-format", "cdc", "--output", str(out)])
    assert rc == 0
    got = pq.read_table(out)
    assert got.column_names == ["op", "ts_ms", "before", "after"]
    assert sorted(got.column("op").to_pylist()) == ["i", "i", "u"]
    update = next(r for r in got.to_pylist() if r["op"] == "u")
    assert (json.loads(update["before"]), json.loads(update["after"])) == (
        {"id": "a", "ts": 1},
        {"id": "a", "ts": 2},
    )
    typed = tmp_path / "typed.parquet"
    rc = main(["read", path, "--query", "incremental", "--incremental-format", "cdc", "--cdc-images", "struct",
               "--output", str(typed)])  # fmt: skip
    assert rc == 0
    update = next(r for r in pq.read_table(typed).to_pylist() if r["op"] == "u")
    assert (update["before"], update["after"]) == ({"id": "a", "ts": 1}, {"id": "a", "ts": 2})


def test_read_takes_options_the_hollow_commit_policy_among_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hudi_core.testing.hollow import hollow_table

    hollow = hollow_table(tmp_path / "t", "MERGE_ON_READ")
    query = ["read", str(hollow.path), "--query", "incremental", "--start", "000", "--format", "table",
             "--columns", "v"]  # fmt: skip
    assert main(query) == 1
    assert f"Found hollow commit: '{hollow.instants[1]}'" in capsys.readouterr().err
    assert main([*query, "-o", "hoodie.read.timeline.holes.resolution.policy=BLOCK"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert sorted(line.strip() for line in out[1:-1]) == ["a1@1", "a2@1", "b1@1", "b2@1"]
