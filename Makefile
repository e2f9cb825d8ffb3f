# GECOBench Hub — one entry point for set-up, the demo, the tests and the docs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-full docs bench zoo clean space

setup: $(STAMP)

# torch first: the pinned CPU wheel is local on these machines; a plain `torch` would pull a CUDA build.
$(STAMP): setup.cfg pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

demo: $(STAMP)
	$(PY) scripts/demo.py

test: $(STAMP)
	$(PY) -m pytest -m "not slow" -q

test-full: $(STAMP)
	$(PY) -m pytest -q

docs: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

space: $(STAMP)
	$(PY) leaderboard_space/app.py

# The accuracy table of the model zoo in docs/models.md (6 regimes × 4 configs × 3 seeds, the schedule the table
# was made with; about 1.5 h of both cores here; resumable: finished checkpoints are skipped).
ZOO_ARGS ?= --schedule short --max-train-sentences 600 --epochs-for C=8 --seeds 0 1 2 --output-dir runs/zoo
zoo: $(STAMP)
	$(PY) scripts/train_zoo.py $(ZOO_ARGS) --doc docs/models.md

# Every benchmark under bench/ (figures go to BENCHMARKS.md by hand, with machine and date).
bench: $(STAMP)
	for script in bench/bench_*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache site
