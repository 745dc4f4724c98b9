"""``format("hudi")`` stays Apache Hudi's in a session with its Spark bundle on the class path,
even in a driver that imported ``hudi_spark`` (whose import otherwise makes ``format("hudi")``
loads and saves ``hudi_spark.read`` and ``hudi_spark.write``): a job migrating to us keeps its
Apache Hudi writes until it drops the jar. Run in the PySpark 3.5 venv of ``make test-spark35``
(our packages installed) with the oracle's bundle and session settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jvm_cds
import pytest
from hudi_core import HudiTable
from oracle import ensure_oracle

pytestmark = [pytest.mark.interop, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
JOB = """
import json, sys
sys.path.insert(0, sys.argv[3])
from oracle_driver import session
import hudi_spark  # wraps DataFrameReader.load and DataFrameWriter.save for format("hudi")

spark = session(sys.argv[1], sys.argv[4])
path = sys.argv[2]
df = spark.createDataFrame([("a", 1, "x"), ("b", 2, "y")], "id string, ts long, p string")
options = {
    "hoodie.table.name": "beside",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
}
df.write.format("hudi").options(**options).mode("append").save(path)
loaded = spark.read.format("hudi").load(path)
rows = sorted([r.id, r.ts] for r in loaded.select("id", "ts").collect())
print("ANSWER " + json.dumps({"ours": hasattr(loaded, "_hudi_methods"), "rows": rows}))
spark.stop()
"""


def test_format_hudi_is_apache_hudis_where_its_bundle_is_loaded(tmp_path: Path) -> None:
    env = ensure_oracle()
    python = subprocess.run(
        [sys.executable, str(REPO / "tests" / "tools" / "spark35.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    job, path, local = tmp_path / "job.py", tmp_path / "t", tmp_path / "local"
    job.write_text(JOB)
    local.mkdir()
    harness = str(Path(__file__).with_name("harness"))
    done = subprocess.run(
        [python, str(job), str(env.bundle), str(path), harness, str(local)],
        capture_output=True, text=True, timeout=600,
        env={"PATH": "/usr/bin:/bin", "PYSPARK_PYTHON": python, "SPARK_LOCAL_IP": "127.0.0.1",
             "HOME": str(Path.home()), "SPARK_SUBMIT_OPTS": jvm_cds.java_options(python) or ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("ANSWER "))
    answer = json.loads(line[len("ANSWER ") :])
    assert answer == {"ours": False, "rows": [["a", 1], ["b", 2]]}
    # Apache Hudi's writer made it: its metadata table (ours never writes one) and its upsert's commit
    assert (path / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file()
    table = HudiTable.open(str(path))
    assert [i.action for i in table.timeline.completed_commits()] == ["commit"]
    assert sorted(table.read(columns=["id"]).column("id").to_pylist()) == ["a", "b"]
