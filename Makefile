# Everything runs from a virtual environment this Makefile builds from nothing but a Python 3.
# Which one: the system's /usr/bin/python3 when it is 3.11 or newer and can make a venv, else
# python3 on PATH; `make PYTHON=...` (or PYTHON in the environment) picks another. A
# distribution's interpreter (Debian, Ubuntu, Fedora) is built with profile-guided and link-time
# optimization; a source build, pyenv's by default, is built with neither, and a forgeflare start
# took about 17% more CPU on one (3.11 both). The suite starts forgeflare hundreds of times.
SYSTEM_PYTHON := /usr/bin/python3
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell $(SYSTEM_PYTHON) -c 'import sys, ensurepip; sys.exit(sys.version_info < (3, 11))' \
	>/dev/null 2>&1 && echo $(SYSTEM_PYTHON) || echo python3)
endif
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv test test-fast lint check pytest docs demo bench dist clean claude-code codex opencode pi

# The pinned Claude Code the integration tests drive (npm, into a cache folder of this repo
# named by the version, so a new pin installs beside the old one instead of being skipped).
CLAUDE_CODE_VERSION := 2.1.332
CLAUDE_CODE_DIR := .cache/claude-code-$(CLAUDE_CODE_VERSION)
CLAUDE_CODE := $(CLAUDE_CODE_DIR)/node_modules/.bin/claude
# The pinned Codex CLI (npm; its native binary comes as an optional package of the same name).
CODEX_VERSION := 0.171.0
CODEX_DIR := .cache/codex-$(CODEX_VERSION)
CODEX := $(CODEX_DIR)/node_modules/.bin/codex
# The pinned OpenCode CLI (npm `opencode-ai`; its native binary comes as an optional package).
OPENCODE_VERSION := 1.18.33
OPENCODE := .cache/opencode/node_modules/.bin/opencode
# The pinned pi coding agent (npm `@mariozechner/pi-coding-agent`).
PI_VERSION := 0.73.1
PI := .cache/pi/node_modules/.bin/pi

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

# Four workers on two cores: most tests wait on subprocesses, sockets and timers, so two
# workers leave the cores idle; worksteal hands a worker that ran dry the rest of a busy one's
# share (with the default scheduler one worker idled for minutes at the end).
PYTEST_WORKERS := -n 4 --dist worksteal
# The suite starts forgeflare a few hundred times: with PYTHONDONTWRITEBYTECODE set (some
# shells and sandboxes set it) each start compiled its modules from source again, and each
# worker rewrote every test module. The caches go in this clone's __pycache__ (git ignores them).
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest

pytest: $(STAMP)
	-$(MAKE) --no-print-directory claude-code
	-$(MAKE) --no-print-directory codex
	-$(MAKE) --no-print-directory opencode
	-$(MAKE) --no-print-directory pi
	$(PYTEST) $(PYTEST_WORKERS)

test: lint docs pytest

# The documentation site (mkdocs.yml, docs/) into site/: strict, so a broken link or anchor, or
# a page left out of the navigation, fails. The reference pages are generated from the code
# while it builds (docs/_hooks/reference.py). NO_MKDOCS_2_WARNING: Material's banner about its
# successor, printed on every build, is not ours to act on.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# The fast tier: everything but the end-to-end tests and the real Claude Code/Codex runs
# (tests/conftest.py marks those `slow`).
test-fast: $(STAMP)
	$(PYTEST) $(PYTEST_WORKERS) -m "not slow"

# The offline demo needs forgeflare alone: a venv with `pip install -e .` (about a minute on a
# fresh clone, said before it starts), not the dev toolchain; a venv `make venv` built already
# serves too.
DEMO_STAMP := $(VENV)/.installed-demo

$(DEMO_STAMP): pyproject.toml
	test -f $(STAMP) -a $(STAMP) -nt pyproject.toml || { \
		echo "make demo: building $(VENV) with forgeflare alone (once; about a minute)" && \
		$(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install --quiet -e . ; }
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
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

claude-code: $(CLAUDE_CODE)

$(CLAUDE_CODE):
	npm install --prefix $(CLAUDE_CODE_DIR) --no-audit --no-fund --loglevel=error \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)

codex: $(CODEX)

$(CODEX):
	npm install --prefix $(CODEX_DIR) --no-audit --no-fund --loglevel=error \
		@openai/codex@$(CODEX_VERSION)

opencode: $(OPENCODE)

$(OPENCODE):
	npm install --prefix .cache/opencode --no-audit --no-fund --loglevel=error \
		opencode-ai@$(OPENCODE_VERSION)

pi: $(PI)

$(PI):
	npm install --prefix .cache/pi --no-audit --no-fund --loglevel=error \
		@mariozechner/pi-coding-agent@$(PI_VERSION)

clean:
	rm -rf $(VENV) build dist site src/*.egg-info
