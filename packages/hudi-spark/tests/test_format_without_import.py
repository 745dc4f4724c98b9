"""``format("hudi")`` as every Hudi tutorial writes it: a plain PySpark job that never imports
hudi_spark, run as ``python job.py`` and with ``spark-submit job.py`` (issue #18). Installing
hudi-spark is enough: PySpark 4 registers ``pyspark_hudi.DefaultSource`` by itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hudi_core import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

JOB = """
import json, sys
from pyspark.sql import SparkSession

spark = (SparkSession.builder.master("local[1]").appName("plain-job")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate())
path = sys.argv[1]
df = spark.createDataFrame([("a", 1, "x"), ("b", 2, "y"), ("c", 3, "x")], "id string, ts long, p string")
options = {
    "hoodie.table.name": "plain",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.operation": "bulk_insert",
}
df.write.format("hudi").options(**options).mode("append").save(path)
rows = spark.read.format("hudi").load(path).select("id", "ts", "p").collect()
print("ROWS " + json.dumps(sorted([r.id, r.ts, r.p] for r in rows)))
spark.stop()
"""


def _env() -> dict[str, str]:
    # as after `source .venv/bin/activate`: Spark's Python workers run the first python3 on PATH
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    return env


def _check(done: subprocess.CompletedProcess[str], base: Path) -> None:
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if "ROWS " in x)  # (the shell's prompts may lead)
    assert json.loads(line[line.index("ROWS ") + 5 :]) == [["a", 1, "x"], ["b", 2, "y"], ["c", 3, "x"]]
    ours = HudiTable.open(str(base)).read(columns=["id", "ts"]).to_pydict()
    assert sorted(zip(ours["id"], ours["ts"], strict=True)) == [("a", 1), ("b", 2), ("c", 3)]


def test_python_job_py(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    done = subprocess.run([sys.executable, str(job), str(tmp_path / "t")], capture_output=True, text=True,
                          env=_env(), timeout=300)  # fmt: skip
    _check(done, tmp_path / "t")


def test_spark_submit_job_py(tmp_path: Path) -> None:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    submit = Path(sys.executable).parent / "spark-submit"
    done = subprocess.run([str(submit), str(job), str(tmp_path / "t")], capture_output=True, text=True,
                          env=_env(), timeout=300)  # fmt: skip
    _check(done, tmp_path / "t")


def test_pyspark_shell(tmp_path: Path) -> None:
    """The ``pyspark`` shell, fed a script on stdin: format("hudi") with no import of ours, and a
    temporary view over it queried with SQL."""
    script = (
        JOB.replace("spark = (SparkSession.builder", "_unused = (SparkSession.builder")
        .replace("spark.stop()", "")
        .replace("path = sys.argv[1]", f"path = {str(tmp_path / 't')!r}")
    )
    script += (
        "spark.read.format('hudi').load(path).createOrReplaceTempView('trips')\n"
        "n = spark.sql('SELECT p, count(*) AS n FROM trips GROUP BY p ORDER BY p').collect()\n"
        "print('SQL ' + json.dumps([[r.p, r.n] for r in n]))\n"
    )
    shell = Path(sys.executable).parent / "pyspark"
    # -i: the shell as on a terminal (its start-up script, which makes `spark`, runs only in
    # interactive mode) while its input comes from a pipe
    env = {**_env(), "PYSPARK_DRIVER_PYTHON_OPTS": "-i"}
    done = subprocess.run([str(shell), "--master", "local[1]", "--conf", "spark.ui.enabled=false"], input=script,
                          capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    _check(done, tmp_path / "t")
    line = next(x for x in done.stdout.splitlines() if "SQL " in x)
    assert json.loads(line[line.index("SQL ") + 4 :]) == [["x", 2], ["y", 1]]
