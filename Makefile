# GECOBench Hub — one entry point for set-up, the demo, the tests and the docs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup sandbox demo lint test test-full docs bench zoo reference clean space

setup: $(STAMP)

# torch first: the pinned CPU wheel is local on these machines; a plain `torch` would pull a CUDA build.
$(STAMP): setup.cfg pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev]"
	@touch $(STAMP)

# The OS sandbox for code submissions (Debian package bubblewrap); the queue worker checks for it at start.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap) \
		|| (echo "could not install bubblewrap: run 'sudo apt-get install bubblewrap'" && exit 1)
	@bwrap --version

# `python -m gecobench` is the `gecobench` command of the environment (the console script needs no PATH change)
demo: $(STAMP)
	$(PY) -m gecobench demo

# ruff's rule selection is in pyproject.toml ([tool.ruff]); `ruff check --fix .` applies the safe fixes
lint: $(STAMP)
	$(PY) -m ruff check .

test: lint
	$(PY) -m pytest -m "not slow" -q --durations=15

test-full: lint
	$(PY) -m pytest -q

docs: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir site

space: $(STAMP)
	$(PY) -m gecobench space

# The accuracy table of the model zoo in docs/models.md (6 regimes × 4 configs × 3 seeds, the schedule the table
# was made with; about 1.5 h of both cores here; resumable: finished checkpoints are skipped).
ZOO_ARGS ?= --schedule short --max-train-sentences 600 --epochs-for C=8 --seeds 0 1 2 --output-dir runs/zoo
zoo: $(STAMP)
	$(PY) -m gecobench zoo $(ZOO_ARGS) --doc docs/models.md

# The reference results (issues #20, #32): the zoo of five seeds (6 regimes x 4 configs each), the paper's shared
# filter subset per config (reference/filters/), then every built-in explainer on every test sentence with and
# without it, each finished (config, seed) unit staged in reference/staging/ (commit it), a complete seed promoted
# into reference/store. Resumable and shardable: see `gecobench reference --help` and `--plan`.
REFERENCE_ARGS ?=
reference: $(STAMP)
	$(PY) -m gecobench reference $(REFERENCE_ARGS)

# Every benchmark under bench/ that runs on its defaults (figures go to BENCHMARKS.md by hand, with machine and date);
# those that need a checkpoint (a required --model) say so and are skipped: their commands, with the models they
# were run on, are in BENCHMARKS.md.
bench: $(STAMP)
	for script in bench/bench_*.py; do \
		if grep -q "required=True" $$script; then echo "== $$script: needs a model (see --help), skipped"; continue; fi; \
		echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache site
