"""A call that asked to run outside the agent's sandbox (issue 25 item 3, route identity): Claude
Code's Bash `dangerouslyDisableSandbox`, Codex's `sandbox_permissions: "require_escalated"` (earlier
`with_escalated_permissions`). Recorded per call, stored, carried by prior calls, and part of what a
route is: after the sandbox denied a command, the same command run outside it is another route.

Shaped on a real pair (theogbrand/napoli-matcha): `rm …/plan-create.md` failed with `Operation not
permitted`, and the same `rm` with `dangerouslyDisableSandbox: true` succeeded at once."""

import json
from pathlib import Path

from obelisk_session_evidence.comparators.history import prior_steps_from_calls
from obelisk_session_evidence.comparators.route_match import route_match
from obelisk_session_evidence.contracts.situation import Revision, RouteProposal
from obelisk_session_evidence.contracts.thresholds import RouteThresholds
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.provider import NativeIndexProvider
from tests.comparators.test_cause_aware import REPO, shell
from tests.providers.native.index.older_index import before_migration
from tests.providers.native.index.transcripts import ClaudeTranscript
from tests.providers.native.test_call_places import _request
from tests.providers.native.test_kept_failure_lines import _enablement

REMOVE = "rm /Users/ob1/.claude/commands/plan-create.md"
DENIED = "rm /Users/ob1/.claude/commands/plan-create.md: Operation not permitted"


def _denied_then_escalated(claude: Path) -> ClaudeTranscript:
    transcript = ClaudeTranscript(claude, "s-sandbox", "/work/alpha")
    transcript.call("Bash", {"command": REMOVE}, f"Exit code 1\n{DENIED}", is_error=True)
    transcript.call("Bash", {"command": REMOVE, "dangerouslyDisableSandbox": True}, "")
    transcript.write()
    return transcript


def test_claude_code_calls_say_whether_they_ran_outside_the_sandbox(tmp_path):
    path = _denied_then_escalated(tmp_path / "claude").path
    calls = parse_session_file(path, "claude").tool_calls
    assert [(call.command_text, call.failed, call.escalated) for call in calls] == [
        (REMOVE, True, False),
        (REMOVE, False, True),
    ]


def test_codex_calls_say_whether_they_asked_for_escalated_permissions(tmp_path):
    path = tmp_path / "2026" / "03" / "01" / "rollout-2026-03-01T10-00-00-thread-9.jsonl"
    path.parent.mkdir(parents=True)
    arguments = {
        "plain": {"cmd": "npm install"},
        "asked": {"cmd": "npm install", "sandbox_permissions": "require_escalated", "justification": "network?"},
        "earlier": {"command": ["bash", "-lc", "npm install"], "with_escalated_permissions": True},
        "declined": {"cmd": "npm install", "sandbox_permissions": "use_default"},
    }
    records = [{"type": "session_meta", "payload": {"id": "thread-9", "cwd": "/work/alpha"}}]
    for call_id, given in arguments.items():
        call = {"type": "function_call", "name": "exec_command", "call_id": call_id, "arguments": json.dumps(given)}
        records.append({"type": "response_item", "payload": call})
    path.write_text("".join(json.dumps(record | {"timestamp": "2026-03-01T10:00:00Z"}) + "\n" for record in records))
    escalated = {call.call_id: call.escalated for call in parse_session_file(path, "codex").tool_calls}
    assert escalated == {"plain": False, "asked": True, "earlier": True, "declined": False}


def test_prior_calls_carry_the_sandbox_they_ran_in(tmp_path):
    claude = tmp_path / "claude"
    _denied_then_escalated(claude)
    provider = NativeIndexProvider(tmp_path / "state" / "index", _enablement(claude))
    calls = provider.search(_request([REMOVE])).prior_calls
    assert sorted((call.outcome, call.escalated) for call in calls) == [("failed", False), ("succeeded", True)]


def test_an_index_built_before_escalation_was_stored_reads_every_file_again(tmp_path):
    claude = tmp_path / "claude"
    _denied_then_escalated(claude)
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    before_migration(path, "0009_escalated_calls", dropped_columns=("escalated",))
    report = refresh_index(path, {"claude": [claude]})
    assert (report.files_added, report.files_reread) == (0, 1)
    connection = connect(path)
    try:
        assert sorted(connection.execute("SELECT escalated FROM call_details")) == [(0,), (1,)]
    finally:
        connection.close()


def _denied_in_the_sandbox(escalated: bool | None):
    denied = shell(REMOVE, f"Exit code 1\n{DENIED}", exit_code=1, minute=0).model_copy(update={"escalated": False})
    calls = [denied]
    steps = prior_steps_from_calls(calls, [], roots=(REPO,))
    route = RouteProposal(action_kind="shell", commands=[REMOVE], escalated=escalated)
    return route_match(route, steps, thresholds=RouteThresholds(), revision=Revision(current="c0ffee1"), roots=(REPO,))


def test_after_the_sandbox_denied_a_command_the_same_command_outside_it_is_another_route():
    assert not _denied_in_the_sandbox(escalated=True).repeats_failure
    assert _denied_in_the_sandbox(escalated=True).command_similarity == 0


def test_the_same_command_in_the_sandbox_again_repeats_the_denial():
    assert _denied_in_the_sandbox(escalated=False).repeats_failure


def test_a_route_that_does_not_say_is_compared_with_every_prior_run():
    assert _denied_in_the_sandbox(escalated=None).repeats_failure


def test_a_prior_call_that_does_not_say_is_compared_with_every_route():
    calls = [shell(REMOVE, f"Exit code 1\n{DENIED}", exit_code=1, minute=0)]  # escalated: None
    steps = prior_steps_from_calls(calls, [], roots=(REPO,))
    route = RouteProposal(action_kind="shell", commands=[REMOVE], escalated=True)
    result = route_match(
        route, steps, thresholds=RouteThresholds(), revision=Revision(current="c0ffee1"), roots=(REPO,)
    )
    assert result.repeats_failure
