# icelab: `make help` lists the targets. Every target sets up .venv first if needed.
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=
RESULTS ?= results
RUNS ?=

.PHONY: help setup run test test-fast lint format docs docs-site charts report reference clean
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

setup: $(VENV)/.installed ## create .venv and install icelab with its test tools

# sagemaker-pyspark carries the S3A jars storage=object needs (hadoop-aws 3.3.1 and its AWS SDK
# 1.11.901); it declares pyspark==3.3.0, so it cannot be a dependency in pyproject: --no-deps.
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test]"
	$(PY) -m pip install -q --no-deps sagemaker-pyspark==1.4.5
	touch $@

run: setup ## run the main job (default: experiment=datagen dataset=tiny); overrides in ARGS="..."
	$(PY) run.py $(ARGS)

test: setup ## run the test suite (real Spark, Iceberg and DuckDB on the tiny dataset)
	$(PY) -m pytest -q

test-fast: setup ## the quick tier for the edit loop: every test that starts no JVM
	$(PY) -m pytest -q -m "not spark"

lint: setup ## ruff lint and format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: setup ## ruff format and autofix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

docs: setup ## rewrite the figure blocks of README.md and docs/ from results/reference; fail past the size limits
	$(VENV)/bin/icelab docs

docs-site: setup ## build the docs site into site/ (mkdocs-material, strict: no orphan page, no broken link)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

charts: setup ## redraw every chart from stored results (RESULTS=results/reference for the committed set)
	$(VENV)/bin/icelab charts --results $(RESULTS)

report: setup ## write one self-contained HTML report of the stored results
	$(VENV)/bin/icelab report --results $(RESULTS)

reference: setup ## copy complete runs (RUNS="results/runs/<exp>/<id> ...") into results/reference, redraw
	$(VENV)/bin/icelab reference $(RUNS)

clean: ## remove generated state (datasets, outputs, run results)
	rm -rf site data outputs multirun results/runs results/doctor-scratch results/doctor-copies results/clusters results/charts results/report.html results/comparisons results/sessions spark-warehouse metastore_db derby.log
