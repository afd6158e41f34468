# Two commands on a fresh machine: `make demo` and `make test`. Both bootstrap .venv first.
VENV := .venv
PYTHON := $(VENV)/bin/python
CLI := $(VENV)/bin/obelisk-session-evidence
INSTALLED := $(VENV)/.installed

.PHONY: venv lint test test-reliability demo schema clean bench bench-quick bench-setup

include make/node.mk

$(INSTALLED): pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev,conformance,dask]'
	touch $(INSTALLED)

venv: $(INSTALLED)

# The code checks itself first: lint, format and types at zero findings (config in pyproject.toml).
lint: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PYTHON) scripts/typecheck.py

test: lint $(NODE_BIN)
	$(VENV)/bin/pytest

test-reliability: $(INSTALLED)
	OSE_RELIABILITY_FULL=1 $(VENV)/bin/pytest -m reliability

demo: $(INSTALLED)
	bash scripts/demo.sh

schema: $(INSTALLED)
	$(CLI) schema --out contracts/schemas

# Benchmarks (bench/run.py): the full report goes to bench/results/latest.md, the quick one to quick.md.
bench: $(INSTALLED)
	$(PYTHON) -m bench.run --full

bench-quick: $(INSTALLED)
	$(PYTHON) -m bench.run --quick

# ripgrep, the peer the bench compares against (Debian/Ubuntu; the bench reports 'not installed' without it).
bench-setup:
	@command -v rg >/dev/null 2>&1 || { SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$SUDO apt-get install -y ripgrep || { $$SUDO apt-get update && $$SUDO apt-get install -y ripgrep; }; }
	@rg --version | head -1

clean: clean-node
	rm -rf $(VENV) .state
