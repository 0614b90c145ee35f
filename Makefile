# Two commands are all the set-up: `make run` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
DEFAULT_RECORD := examples/game_time_limit.json

.PHONY: run test lint typecheck clean bench

$(STAMP): pyproject.toml
	bash scripts/setup-venv.sh $(VENV)
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/winkref replay $(DEFAULT_RECORD)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy rules calibration

test: $(STAMP) lint typecheck
	$(VENV)/bin/pytest

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
