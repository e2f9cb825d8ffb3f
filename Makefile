# GECOBench Hub — one entry point for set-up, the demo, the tests and the docs.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-full docs bench zoo clean space browser-deps

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

bench: $(STAMP)
	$(PY) bench/run_all.py

space: $(STAMP)
	$(PY) leaderboard_space/app.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache site
