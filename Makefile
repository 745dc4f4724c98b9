# One entry point for people and CI. `make demo` on a fresh machine sets everything up and
# runs the main job; `make test` runs the whole test suite.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
UV     := $(VENV)/bin/uv
PACKAGES := -e packages/hudi-core -e packages/hudi-executors -e packages/hudi-storage-s3 -e packages/hudi-spark

.PHONY: setup demo test test-fast lint typecheck bench clean

$(VENV)/.installed: requirements-dev.txt packages/*/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip uv
	$(UV) pip install --python $(PY) -q $(PACKAGES) -r requirements-dev.txt
	touch $@

setup: $(VENV)/.installed  ## virtual environment with all four packages editable + dev tools

demo: setup  ## the main job: an end-to-end ingestion into a MERGE_ON_READ table on local disk
	$(PY) examples/demo.py --output demo-output

test: setup  ## the whole test suite: pytest with xdist, then the Spark tier in one process
	$(PY) -m pytest -n 2 -m "not spark"
	$(PY) -m pytest -m spark

test-fast: setup  ## everything but Spark and slow tests
	$(PY) -m pytest -n 2 -m "not spark and not slow"

lint: setup
	$(VENV)/bin/ruff check packages tests benchmarks examples
	$(VENV)/bin/ruff format --check packages tests benchmarks examples

typecheck: setup
	$(VENV)/bin/mypy packages/hudi-core/src

bench: setup  ## every benchmark, printing ratios measured in the same run
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) demo-output .pytest_cache .mypy_cache .ruff_cache
