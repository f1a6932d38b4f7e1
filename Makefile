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

bench: $(VENV)/.dev
	$(BIN)/python bench/status_page.py

browser:
	@command -v chromium >/dev/null 2>&1 || test -x /usr/bin/chromium || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Browser tests need Debian's chromium: sudo apt-get install chromium"; exit 1; fi; }

$(VENV)/.runtime: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@ $(VENV)/.runtime

clean:
	rm -rf $(VENV) instance .pytest_cache .ruff_cache
