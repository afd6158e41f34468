# Project-local Node.js for LoopX's effect runtime (tests/conformance). Include from the Makefile:
#     include make/node.mk
# before the rules that name $(NODE_BIN) (prerequisites expand when read), and make the test
# target depend on $(NODE_BIN). tests/conformance finds .node/bin/node itself; anything else that
# runs LoopX's effect runtime needs it first on PATH (LoopX looks Node up on PATH only):
#     PATH="$(NODE_PATH_DIR):$$PATH" loopx ...

# Including this file never changes the including Makefile's default goal.
_NODE_MK_DEFAULT_GOAL := $(.DEFAULT_GOAL)

NODE_VERSION ?= 22.22.3
NODE_DIR ?= .node
NODE_BIN := $(NODE_DIR)/bin/node
NODE_PATH_DIR := $(abspath $(NODE_DIR)/bin)

$(NODE_BIN): scripts/provision-node.sh
	NODE_VERSION=$(NODE_VERSION) NODE_DIR=$(NODE_DIR) bash scripts/provision-node.sh

.PHONY: node clean-node
node: $(NODE_BIN)

clean-node:
	rm -rf $(NODE_DIR)

.DEFAULT_GOAL := $(_NODE_MK_DEFAULT_GOAL)
