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

echo
echo "== 2. Session histories of five agents (generated): one repository and a worktree of it,"
echo "      plus bait sessions running the same failing command in another repository"
eval "$(.venv/bin/python -m fixtures.demo_histories "$OBELISK_SESSION_EVIDENCE_HOME/histories")"
ROOTS=(--root "claude=$CLAUDE_ROOT" --root "codex=$CODEX_ROOT" --root "kimi=$KIMI_ROOT" --root "pi=$PI_ROOT" --root "dsh=$DSH_ROOT")

echo
echo "== 3. Enable one agent, project and repository (the worktree resolves to the repository)."
echo "      Without --trigger only operator requests are admitted (Stage 1) until a replay of the"
echo "      scope's history meets its targets; naming the Replan trigger is the operator's override."
"$CLI" enable --surface replan-history --agent-id agent-fixture --project-id project-fixture \
  --repository-id repo-fixture --repo-root "$REPO_ROOT" \
  --source-root "claude=$CLAUDE_ROOT" --source-root "codex=$CODEX_ROOT" --source-root "kimi=$KIMI_ROOT" \
  --source-root "pi=$PI_ROOT" --source-root "dsh=$DSH_ROOT" \
  --trigger replan_repetition --trigger operator_requested_history --format json > /dev/null
echo "enabled agent-fixture / project-fixture / repo-fixture at $REPO_ROOT"

echo
echo "== 4. Refresh the native index over the agents' session folders, then its status"
"$CLI" index refresh "${ROOTS[@]}"
"$CLI" index status --format json

echo
echo "== 5. The agent proposes re-running a test that failed before: history rejects the claimed outcome"
"$CLI" run --situation "$SITUATION"
"$CLI" run --situation "$SITUATION" --format json | .venv/bin/python -c '
import json, sys
decision = json.load(sys.stdin)
delta = decision["semantic_delta"]
print("verdict:  ", decision["comparison"]["verdict"])
print("rejection:", delta["reason_code"], "-", delta["reason"])
print("receipt:  ", json.dumps(decision["receipt"], indent=2))
'

echo
echo "== 6. Replay: every shell call of the enabled history decided on what came before it, judged by what"
echo "      it really did next, beside the naive rule (counts only; commands never printed)"
"$CLI" replay --project-id project-fixture
