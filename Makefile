# One entry point for people and CI. `make demo` on a fresh machine sets everything up and
# runs the main job; `make test` runs the whole test suite.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
PACKAGES := -e packages/hudi-core -e packages/hudi-executors -e packages/hudi-storage-s3 -e packages/hudi-spark

.PHONY: setup demo test test-fast test-spark35 interop soak lint typecheck bench clean

# --compile-bytecode: uv leaves modules uncompiled, and with PYTHONDONTWRITEBYTECODE set (as on CI)
# every process, Spark's Python workers included, would compile pandas and pyarrow from source
$(VENV)/.installed: requirements-dev.txt packages/*/pyproject.toml packages/hudi-core/setup.py packages/hudi-core/src/hudi_core/bloom/_murmur.c packages/hudi-core/src/hudi_core/avro/_codec.c packages/hudi-core/src/hudi_core/keymatch/_match.c packages/hudi-core/src/hudi_core/write/index/_javahash.c packages/hudi-core/src/hudi_core/_strings.h
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip uv
	$(UV) pip install --python $(PY) -q --compile-bytecode $(PACKAGES) -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed  ## virtual environment with all four packages editable + dev tools

demo: setup  ## the main job: an end-to-end ingestion into a MERGE_ON_READ table on local disk
	$(PY) examples/demo.py --output demo-output

test: setup  ## the whole test suite: pytest with xdist, the Spark tier in two workers with a SparkSession each (PySpark 4, then 3.5), the Apache Hudi tier
	$(PY) -m pytest -n 2 -m "not spark and not interop"
	$(PY) -m pytest -n 2 --dist load -m "spark and not soak"
	$(MAKE) test-spark35
	$(MAKE) interop

test-spark35: setup  ## the entry points that run on PySpark 3.5 too (write, write_stream, streamer, hudi_spark.read), in a 3.5 venv cached in ~/.cache/hudi-py/spark35
	$(PY) tests/tools/spark35.py
	$$($(PY) tests/tools/spark35.py) -m pytest -m spark35 packages/hudi-spark/tests/test_spark_versions.py

interop: setup  ## real Apache Hudi 0.15 (its own PySpark 3.5.1 venv + Spark bundle, cached in ~/.cache/hudi-py) against our code
	$(PY) tests/interop/harness/oracle.py
	$(PY) -m pytest -n 2 --dist worksteal -m interop tests/interop

soak: setup  ## a thousand micro-batches through write_stream and hudi-py streamer --continuous (~15 min)
	$(PY) -m pytest -s -m soak packages/hudi-spark/tests/test_soak.py

test-fast: setup  ## everything but Spark, Apache Hudi and slow tests
	$(PY) -m pytest -n 2 -m "not spark and not slow and not interop"

lint: setup
	$(VENV)/bin/ruff check conftest.py packages tests benchmarks examples
	$(VENV)/bin/ruff format --check conftest.py packages tests benchmarks examples

typecheck: setup
	$(VENV)/bin/mypy packages/hudi-core/src packages/hudi-executors/src packages/hudi-spark/src packages/hudi-storage-s3/src

bench: setup  ## every benchmark, printing ratios measured in the same run
	$(UV) pip install --python $(PY) -q --compile-bytecode -r requirements-bench.txt
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
