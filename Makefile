# Everything runs from a virtual environment this Makefile builds from nothing but python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv test lint check pytest demo bench dist clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy --strict src
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(BIN)/zizmor --offline --min-severity medium --quiet .github/workflows

pytest: $(STAMP)
	$(BIN)/pytest -n 2

test: lint pytest

demo: $(STAMP)
	$(BIN)/forgeflare demo

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# The release build, checked as the release workflow checks it: sdist and wheel, twine, and the
# wheel alone in a fresh venv (--version, init, demo, the stop-hook entry).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*
	$(BIN)/python tests/wheel_smoke.py dist/*.whl

clean:
	rm -rf $(VENV) build dist src/*.egg-info
