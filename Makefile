# Two commands on a fresh machine: `make demo` and `make test`. Both bootstrap .venv first.
VENV := .venv
PYTHON := $(VENV)/bin/python
CLI := $(VENV)/bin/obelisk-session-evidence
INSTALLED := $(VENV)/.installed

.PHONY: venv test test-reliability demo schema clean

include make/node.mk

$(INSTALLED): pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev,conformance,dask]'
	touch $(INSTALLED)

venv: $(INSTALLED)

test: $(INSTALLED) $(NODE_BIN)
	$(VENV)/bin/pytest

test-reliability: $(INSTALLED)
	OSE_RELIABILITY_FULL=1 $(VENV)/bin/pytest -m reliability

demo: $(INSTALLED)
	bash scripts/demo.sh

schema: $(INSTALLED)
	$(CLI) schema --out contracts/schemas

clean: clean-node
	rm -rf $(VENV) .state
