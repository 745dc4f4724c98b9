from __future__ import annotations

import json
from pathlib import Path

import pytest
from hudi_core import HudiTable
from hudi_core.cli.main import main
from hudi_core.testing.corpus import copy_corpus_table, corpus_root

pytestmark = pytest.mark.skipif(corpus_root() is None, reason="compat corpus not available")


def test_schedule_list_run_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = str(copy_corpus_table("tables/trips_mor_avro/v6_trips_8i1u", tmp_path))
    before = HudiTable.open(base).read().drop_columns(["_hoodie_file_name"]).sort_by("uuid")
    assert main(["compact", base, "--schedule", "--json"]) == 0
    t = json.loads(capsys.readouterr().out)["scheduled"]
    assert main(["compactions", base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"instant": t, "state": "REQUESTED", "operations": 1}]
    assert main(["compact", base, "--run", t]) == 0
    assert f"completed compaction {t}: 1 file groups, 4 records" in capsys.readouterr().out
    assert main(["compactions", base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["state"] == "COMPLETED"
    after = HudiTable.open(base).read().drop_columns(["_hoodie_file_name"]).sort_by("uuid")
    assert after.equals(before)
    assert main(["clean", base, "--policy", "KEEP_LATEST_FILE_VERSIONS", "--retained", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["files_deleted"] == 2  # the old base file and its log file
    assert HudiTable.open(base).read().drop_columns(["_hoodie_file_name"]).sort_by("uuid").equals(before)


def test_run_of_unknown_instant_fails_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = str(copy_corpus_table("tables/trips_mor_avro/v6_trips_8i1u", tmp_path))
    assert main(["compact", base, "--run", "20200101000000000"]) == 1
    assert "no such compaction" in capsys.readouterr().err
