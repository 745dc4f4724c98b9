"""The cluster way of running a job (README, "Running jobs"): the Python environment packed into
an archive, shipped with ``spark-submit --archives env.tar.gz#env`` and run by the executors as
``./env/bin/python``. Here the cluster is ``local-cluster[1,1,1024]`` (an executor JVM of its
own, which unpacks the archive in its working directory) and the packed environment is a venv
whose site-packages point at this checkout's packages (a venv-pack archive of the whole
environment, as a real cluster needs, is ~1 GB with PySpark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

#: a plain job: no import of ours, format("hudi") both ways, and where its executors' Python is
JOB = """
import json, sys
from pyspark.sql import SparkSession

spark = SparkSession.builder.appName("archives-job").getOrCreate()
path = sys.argv[1]
df = spark.createDataFrame([("a", 1, "x"), ("b", 2, "y"), ("c", 3, "x")], "id string, ts long, p string")
options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.partitionpath.field": "p", "hoodie.datasource.write.operation": "bulk_insert"}
df.write.format("hudi").options(**options).mode("append").save(path)
rows = spark.read.format("hudi").load(path).select("id", "ts", "p").collect()
print("ROWS " + json.dumps(sorted([r.id, r.ts, r.p] for r in rows)))
where = spark.sparkContext.parallelize(range(2), 2).map(lambda _: sys.executable).collect()
print("EXECUTORS " + json.dumps(sorted(set(where))))
spark.stop()
"""


def _packed_env(tmp_path: Path) -> Path:
    env = tmp_path / "build" / "env"
    uv = Path(sys.executable).parent / "uv"
    subprocess.run([str(uv), "venv", "-q", "--python", sys.executable, str(env)], check=True, timeout=120)
    site = next((env / "lib").glob("python3*/site-packages"))
    # this interpreter's packages (PySpark, pyarrow, hudi_core and hudi_spark editable) as a site dir
    (site / "checkout.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
    )
    archive = tmp_path / "env.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(env, arcname=".")
    return archive


def test_spark_submit_archives_on_a_cluster(tmp_path: Path) -> None:
    archive = _packed_env(tmp_path)
    job = tmp_path / "job.py"
    job.write_text(JOB)
    submit = Path(sys.executable).parent / "spark-submit"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["PATH"] = (
        str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    )  # (spark-submit finds Spark)
    cmd = [
        str(submit), "--master", "local-cluster[1,1,1024]", "--archives", f"{archive}#env",
        "--conf", "spark.pyspark.python=./env/bin/python", "--conf", f"spark.pyspark.driver.python={sys.executable}",
        "--conf", f"spark.local.dir={tmp_path / 'local'}", str(job), str(tmp_path / "t"),
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=400, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = next(x for x in done.stdout.splitlines() if x.startswith("ROWS "))
    assert json.loads(rows[5:]) == [["a", 1, "x"], ["b", 2, "y"], ["c", 3, "x"]]
    executors = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("EXECUTORS "))[10:])
    # the executor ran the shipped archive's interpreter, unpacked in its own working directory
    assert len(executors) == 1 and executors[0].endswith(os.path.join("env", "bin", "python"))
    assert not executors[0].startswith(str(tmp_path / "build")) and executors[0] != sys.executable
