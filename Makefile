# The two commands a newcomer needs: `make run` and `make test`. Everything else is a helper for them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Debug mode is make run's alone (NOTIFIER_DEBUG=1 there unless given): every other target runs a command exactly as
# `.venv/bin/python -m notifier …` does in the same shell.
# make run serves this machine only (debug pages such as /dev/outbox hold working links); WEB_HOST=0.0.0.0 to share.
WEB_HOST ?= 127.0.0.1

VNU_VERSION := 26.9.27
VNU_DIR := .cache/vnu
VNU_STAMP := $(VNU_DIR)/vnu-jar-$(VNU_VERSION).installed

.PHONY: run test test-faults lint bench clean browser java vnu

## make run: create the virtualenv, apply migrations, start the web app and the clock (Procfile, via honcho)
## PORT=5302 make run serves on another port; every link (emails, texts, snippets) follows it unless
## NOTIFIER_BASE_URL is set. Set here for both processes: honcho gives each process type a PORT of its own.
RUN_BASE_URL = $(or $(NOTIFIER_BASE_URL),http://localhost:$(or $(PORT),5000))
run: $(VENV)/.runtime
	$(BIN)/python -m notifier db upgrade
	$(BIN)/python -m notifier push keygen --instance
	WEB_HOST=$(WEB_HOST) NOTIFIER_DEBUG='$(or $(NOTIFIER_DEBUG),1)' NOTIFIER_BASE_URL='$(RUN_BASE_URL)' PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho start web clock

## make test: ruff, mypy (settings in pyproject.toml), then the whole suite but the slow fault-injection tests (the browser tests use Debian's chromium and the
## HTML validity tests the W3C Nu HTML checker, both installed here if missing)
test: $(VENV)/.dev browser vnu
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

## make test-faults: only the fault-injection tests (marker `faults`: real processes, providers and a database
## failing on purpose); same settings as make test (NOTIFIER_DATABASE_URL, NOTIFIER_TEST_REDIS_DB)
test-faults: $(VENV)/.dev browser vnu
	$(BIN)/python -m pytest -n auto -m faults $(PYTEST_ARGS)

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/mypy

## Commands for a checkout, through the project's virtualenv (nothing to activate; the database is upgraded first):
##   make staff-add EMAIL=comms@tdsb.on.ca BOARD="tdsb tcdsb"    (or ADMIN=1: every board and the accounts page)
##   make staff-list
##   make import FILE=parents.csv                                 (CONFIRMED=1 NOTE="how consent was given")
##   make notifier ARGS="status"                                  any other `python -m notifier` command
.PHONY: staff-add staff-list import notifier
staff-add: $(VENV)/.runtime
	@test -n "$(EMAIL)" || { echo 'Usage: make staff-add EMAIL=comms@board.example BOARD="tdsb" (or ADMIN=1)'; exit 2; }
	@$(BIN)/python -m notifier db upgrade >/dev/null
	$(BIN)/python -m notifier staff add '$(EMAIL)' $(foreach board,$(BOARD),--board '$(board)') $(if $(ADMIN),--admin)

staff-list: $(VENV)/.runtime
	@$(BIN)/python -m notifier db upgrade >/dev/null
	$(BIN)/python -m notifier staff list

import: $(VENV)/.runtime
	@test -n "$(FILE)" || { echo 'Usage: make import FILE=parents.csv (CONFIRMED=1 NOTE="…" if consent was given elsewhere)'; exit 2; }
	@$(BIN)/python -m notifier db upgrade >/dev/null
	$(BIN)/python -m notifier subscribers import '$(FILE)' $(if $(CONFIRMED),--confirmed --consent-note '$(NOTE)')

notifier: $(VENV)/.runtime
	$(BIN)/python -m notifier $(ARGS)

bench: $(VENV)/.dev
	$(BIN)/python bench/status_page.py

browser:
	@command -v chromium >/dev/null 2>&1 || test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then echo "Installing Debian's chromium (apt-get) for the browser tests..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Browser tests need Debian's chromium: sudo apt-get install chromium"; exit 1; fi; }

## java: a Java runtime for the W3C Nu HTML checker (Debian's default-jre-headless, installed here if missing)
java:
	@command -v java >/dev/null 2>&1 || test -x /usr/bin/java || { \
	  if [ "$$(id -u)" = 0 ]; then echo "Installing Debian's default-jre-headless (apt-get) for the W3C Nu HTML checker..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless >/dev/null; \
	  else echo "The HTML validity tests need Java: sudo apt-get install default-jre-headless"; exit 1; fi; }

## vnu: the W3C Nu HTML checker (npm vnu-jar, pinned) in .cache/vnu/, for the HTML validity tests
vnu: java $(VNU_STAMP)

$(VNU_STAMP):
	@echo "Installing the W3C Nu HTML checker (npm vnu-jar@$(VNU_VERSION)) into $(VNU_DIR)/ for the HTML validity tests..."
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then echo "Installing Debian's npm (apt-get) to fetch vnu-jar..."; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; \
	  else echo "Installing vnu-jar needs npm: sudo apt-get install npm"; exit 1; fi; }
	rm -rf $(VNU_DIR) && mkdir -p $(VNU_DIR)
	npm install --prefix $(VNU_DIR) --no-save --no-audit --no-fund --loglevel=error vnu-jar@$(VNU_VERSION)
	test -f $(VNU_DIR)/node_modules/vnu-jar/build/dist/vnu.jar
	touch $@

# pip's cache stays in the project folder too (.cache/pip), like everything `make run` writes.
$(VENV)/.runtime $(VENV)/.dev: export PIP_CACHE_DIR = $(CURDIR)/.cache/pip

$(VENV)/.runtime: requirements.txt
	@echo "Installing the runtime dependencies (requirements.txt) into $(VENV)/..."
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt
	@echo "Installing the runtime, test and lint dependencies (requirements-dev.txt) into $(VENV)/..."
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.runtime

clean:
	rm -rf $(VENV) instance .pytest_cache .ruff_cache .mypy_cache .cache
