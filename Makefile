# Two commands are all the set-up: `make run` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# The bundled game: a video of a still camera over seven shots, hands and all
# (tools.scenegen.game --seed 101). Blue won its squidge-off; the timed period
# is cut to 12 s so that the 24-second video shows time running out too.
DEFAULT_GAME := sample_images/game_00101/game.mp4
RUN_RECORD := $(shell mktemp -u /tmp/winkref-game-XXXXXX.json)

.PHONY: run test lint typecheck clean bench

$(STAMP): pyproject.toml
	bash scripts/setup-venv.sh $(VENV)
	@touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/winkref watch $(DEFAULT_GAME) --squidge-off blue --time-limit 0.2 --record $(RUN_RECORD)

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
