# make test: fresh venv if needed, the test extra, compiled (non-editable) install, lint, the whole
# suite compiled, then in pure mode (BPE_CORE_PURE=1) the tests marked both_modes and only those:
# the engine and kernel tests, one end-to-end test per domain and every property test (hypothesis),
# which is what proves compiled == pure. make faults: the fault suite (tests/test_faults*.py) with
# its slow loops whole (every kill moment, every writers' race), where make test samples them.
# make demo: the runtime only, installed as a user installs it (`pip install .`).
# make docs: the documentation site into site/ (mkdocs build --strict); open site/index.html.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := $(shell find bpe_core plugins -name '*.py' -o -name '*.yaml' -o -name '*.txt*') setup.py pyproject.toml
# one requirement a line, read from pyproject.toml: the build's, the runtime's and one extra's
REQUIREMENTS = $(BIN)/python -c 'import sys, tomllib; pyproject = tomllib.load(open("pyproject.toml", "rb")); \
	print(*pyproject["build-system"]["requires"], *pyproject["project"]["dependencies"], \
	*pyproject["project"]["optional-dependencies"][sys.argv[1]], sep="\n")'

.PHONY: test lint test-compiled test-pure faults demo bench docs screenshots install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The build's requirements too: the compiled install below builds without isolation.
$(VENV)/.deps: pyproject.toml | $(BIN)/python
	$(REQUIREMENTS) test > $(VENV)/requirements-test.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/requirements-test.txt
	touch $@

# Non-editable and compiled, so no stale .so beside an edited .py can hide a change.
$(VENV)/.installed: $(VENV)/.deps $(SOURCES)
	rm -rf build
	$(BIN)/python -m pip install --quiet --no-build-isolation --no-deps --force-reinstall .
	touch $@ $(VENV)/.runtime

# The runtime dependencies only, built in isolation (mypyc, or pure Python without a C compiler).
$(VENV)/.runtime: pyproject.toml $(SOURCES) | $(BIN)/python
	rm -rf build
	$(BIN)/python -m pip install --quiet .
	touch $@

install: $(VENV)/.installed

test: lint test-compiled test-pure

# ruff's rules and line length are in pyproject.toml; the tree is kept clean, so any finding fails
lint: $(VENV)/.deps
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# one pytest worker per core, each taking whole files (a file's cached corpora and tokenizers are
# built once, in the worker that runs it)
PYTEST := $(BIN)/pytest -q -p no:cacheprovider --durations=15 -n auto --dist loadfile

test-compiled: install
	BPE_CORE_EXPECT_COMPILED=1 $(PYTEST)

# selected by the marker alone; tests/test_suite_rules.py fails when a hypothesis test lacks it
test-pure: install
	BPE_CORE_PURE=1 $(PYTEST) -m both_modes

# BPE_CORE_FAULTS=full: every kill moment and race the fault tests list (tests/helpers/faults.py)
faults: install
	BPE_CORE_FAULTS=full BPE_CORE_EXPECT_COMPILED=1 $(PYTEST) tests/test_faults*.py

demo: $(VENV)/.runtime
	$(BIN)/bpe demo

# every section of docs/benchmarks.md, each script with its defaults, on the code just installed;
# about 50 minutes on 2 idle cores (a run on a busy machine is run again: longer when busy)
bench: install
	$(REQUIREMENTS) bench > $(VENV)/requirements-bench.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/requirements-bench.txt
	$(BIN)/python benchmarks/train_text.py
	$(BIN)/python benchmarks/train_long.py
	$(BIN)/python benchmarks/encode_text.py
	$(BIN)/python benchmarks/train_dna.py
	$(BIN)/python benchmarks/dna_symmetry.py
	$(BIN)/python benchmarks/midi.py
	$(BIN)/python benchmarks/scaleout.py
	$(BIN)/python benchmarks/surgery.py
	$(BIN)/python benchmarks/fairness.py

# the documentation site (mkdocs.yml) into site/: open site/index.html, or `$(BIN)/mkdocs serve`.
# --strict fails on a broken link, anchor or API cross-reference. The API reference is read from
# the source tree (mkdocstrings, statically), so bpe-core itself is neither built nor installed:
# the docs extra is all it takes, and nothing else is fetched.
$(VENV)/.docs: pyproject.toml | $(BIN)/python
	$(REQUIREMENTS) docs > $(VENV)/requirements-docs.txt
	$(BIN)/python -m pip install --quiet -r $(VENV)/requirements-docs.txt
	touch $@

docs: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# the screenshots in docs/inspect.md: pages of `bpe inspect --html` in headless Chromium
screenshots: install
	$(BIN)/python docs/screenshots.py

clean:
	rm -rf $(VENV) build *.egg-info site
