#!/usr/bin/env bash
# The main job on the embedded default, end to end, in a throwaway state dir.
set -euo pipefail
cd "$(dirname "$0")/.."
CLI=.venv/bin/obelisk-session-evidence
export OBELISK_SESSION_EVIDENCE_HOME="$PWD/.state/demo"
rm -rf "$OBELISK_SESSION_EVIDENCE_HOME"
mkdir -p "$OBELISK_SESSION_EVIDENCE_HOME"
SITUATION="$OBELISK_SESSION_EVIDENCE_HOME/situation.json"
.venv/bin/python -m fixtures.demo_situation > "$SITUATION"

echo "== 1. Not enabled: the provider is default-off, so nothing is looked up"
"$CLI" run --situation "$SITUATION"
