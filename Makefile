# The two commands a newcomer needs: `make run` and `make test`. Everything else is a helper for them.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export NOTIFIER_DEBUG ?= 1

.PHONY: run test lint bench clean browser

## make run: create the virtualenv, apply migrations, start the web app and the clock (Procfile, via honcho)
run: $(VENV)/.runtime
	$(BIN)/python -m notifier db upgrade
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/honcho start web clock

## make test: the whole suite (the browser tests use Debian's chromium, installed here if missing)
test: $(VENV)/.dev browser
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

lint: $(VENV)/.dev
	$(BIN)/ruff check .

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
	rm -rf $(VENV) instance .pytest_cache .ruff_cache .cache
