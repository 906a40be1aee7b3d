# tierwise — every chore has a target here. `make run` and `make test` bootstrap what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint check-system bench bench-load golden clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

## run: the service on the built-in demo fleet with an embedded SQLite store (http://127.0.0.1:8080)
run: $(STAMP)
	$(BIN)/tierwise serve --demo

## test: system packages, PostgreSQL, then lint, types, layer contracts and the test suite (its 15 slowest tests listed)
test: check-system $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/pytest -q --durations=15

lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## check-system: Debian packages the tests need (unixodbc + FreeTDS for pyodbc) and a running PostgreSQL
check-system:
	@bash scripts/ensure-system.sh

## bench: benchmarks with their figures printed (needs PostgreSQL)
bench: check-system $(STAMP)
	$(BIN)/python -m bench.poll_cycle
	$(BIN)/python -m bench.collectors
	$(BIN)/python -m bench.placement
	$(BIN)/python -m bench.pages
	$(BIN)/python -m bench.year_queries
	$(BIN)/python -m bench.evaluate_window --runs 3
	$(BIN)/python -m bench.evaluate_fleet --instances 500 --files 50
	$(BIN)/python -m bench.advise_cost
	$(BIN)/python -m bench.verify_power
	$(BIN)/python -m bench.calibration
	$(BIN)/python -m bench.import_file
	$(BIN)/python -m bench.log_masking
	$(MAKE) bench-load

## bench-load: login latency while a large import and the roll-up run, SQLite then PostgreSQL
## (where SQLite stops serving: docs/operations.md)
bench-load: check-system $(STAMP)
	$(BIN)/python -m bench.sqlite_load
	$(BIN)/python -m bench.sqlite_load --postgres

## golden: regenerate the golden migration scripts (review the diff)
golden: $(STAMP)
	$(BIN)/python scripts/regen_golden.py

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
