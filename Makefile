# The two commands a fresh machine needs are `make demo` and `make test`; each installs what it
# needs first (Debian packages when run as root, pinned Python packages in .venv/).

VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.setup-stamp
BUILD   ?= build
PYTEST_ARGS ?=

.PHONY: setup demo test test-all kernels lint bench suite clean

setup: $(STAMP)

$(STAMP): scripts/setup.sh requirements.txt requirements.lock pyproject.toml
	bash scripts/setup.sh
	@touch $@

demo: setup
	$(PY) examples/demo.py --out $(BUILD)/demo

test: setup
	$(PY) -m pytest -n auto $(PYTEST_ARGS)

test-all: setup
	$(PY) -m pytest -n auto -m "slow or not slow" $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check gpgpu_hdl trimmer boards cocotb_tests tests examples bench

bench: setup
	$(PY) bench/emu_speed.py

suite: setup
	$(PY) examples/run_suite.py --backend emu

kernels: setup
	$(PY) examples/kernels/build.py

clean:
	rm -rf $(BUILD) .pytest_cache
