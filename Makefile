# Topolens: `make run` starts the app on its embedded default; `make test` runs the suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test install lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo --if-empty
	$(BIN)/python manage.py ensure_admin
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	@bash scripts/run.sh $(HOST) $(PORT)

test: $(STAMP)
	bash scripts/test.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	@if [ -f bench/engine.py ]; then $(BIN)/python bench/engine.py; else echo "bench/engine.py: not there yet, skipped"; fi
	$(BIN)/python bench/sync.py

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .hypothesis
