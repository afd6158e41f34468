"""Pi sessions: the real version-1 files against an independent scan and the publisher's table."""

import json
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.parsers import parse_session_file
from tests.providers.native.conftest import REAL_CORPUS, json_lines, real_files, requires_real_corpus

pytestmark = requires_real_corpus

PI_DIR = REAL_CORPUS / "pi-badlogic" / "--Users-badlogic-workspaces-pi-mono--"


def _independent_scan(path: Path) -> dict[str, int]:
    """toolCall blocks plus user `!` commands; errored results plus nonzero user commands."""
    messages = [r["message"] for r in json_lines(path) if r["type"] == "message"]
    blocks = [b for m in messages if m["role"] == "assistant" for b in m["content"]]
    tool_calls = [b for b in blocks if b["type"] == "toolCall"]
    bash_runs = [m for m in messages if m["role"] == "bashExecution"]
    errors = sum(bool(m.get("isError")) for m in messages if m["role"] == "toolResult")
    return {
        "tool_calls": len(tool_calls),
        "bash_runs": len(bash_runs),
        "failures": errors + sum(m.get("exitCode") not in (0, None) for m in bash_runs),
        "user_texts": sum(m["role"] == "user" for m in messages),
    }


@pytest.mark.parametrize("path", real_files("pi-*/*/*.jsonl"), ids=lambda p: p.name)
def test_parse_session_file_pi_matches_independent_scan(path: Path) -> None:
    outcome = parse_session_file(path, "pi")
    expected = _independent_scan(path)
    assert outcome.skipped_total == 0, dict(outcome.skipped_records)
    assert outcome.format_version == "pi-v1"
    assert len(outcome.tool_calls) == expected["tool_calls"] + expected["bash_runs"]
    assert sum(call.failed for call in outcome.tool_calls) == expected["failures"]
    assert sum(m.role == "user" for m in outcome.messages) == expected["user_texts"]


# Publisher: pi-badlogic/SOURCE.md (file, tool calls, toolResult isError, user messages,
# bashExecution messages, compactions).
PI_COUNTS = [
    ("before-compaction.jsonl", 454, 12, 55, 3, 2),
    ("large-session.jsonl", 391, 19, 88, 0, 0),
]


@pytest.mark.parametrize(("name", "calls", "errors", "users", "bash_runs", "compactions"), PI_COUNTS)
def test_parse_session_file_pi_matches_publisher_counts(
    name: str, calls: int, errors: int, users: int, bash_runs: int, compactions: int
) -> None:
    outcome = parse_session_file(PI_DIR / name, "pi")
    # The publisher counts assistant toolCall blocks; we also record each user `!command`
    # (bashExecution: a command with an exit code, i.e. a tool outcome), so both sides agree once
    # those are added back. None of the bashExecution runs failed, so error counts are equal.
    assert len(outcome.tool_calls) == calls + bash_runs
    assert sum(call.failed for call in outcome.tool_calls) == errors
    assert sum(m.role == "user" for m in outcome.messages) == users
    assert sum(s.kind == "compaction" for s in outcome.summaries) == compactions


def test_parse_session_file_pi_reads_header_and_branch_origin() -> None:
    outcome = parse_session_file(PI_DIR / "before-compaction.jsonl", "pi")
    session = outcome.sessions[0]
    assert session.session_id == "ffae836b-9420-4060-ac13-7745215f90ff"
    assert session.cwd == "/Users/badlogic/workspaces/pi-mono"
    assert session.forked_from == "d97339c6-6c10-4827-846b-9ff1d9c3dc37"


def test_parse_session_file_pi_reads_exit_codes_of_bash_results() -> None:
    outcome = parse_session_file(PI_DIR / "large-session.jsonl", "pi")
    calls = {call.call_id: call for call in outcome.tool_calls}
    # Its result text is exactly "Command exited with code 1".
    failed = calls["toolu_01XrQPnkjYXzpzFGYHBzU2vm"]
    assert (failed.name, failed.is_error, failed.exit_code) == ("bash", True, 1)
    # It is `grep`'s exit 1: no match is an answer, not a failure of the command (issue 25).
    assert failed.outcome == "no_match" and failed.evidence_type == "tool_outcome"
    reads = [c for c in outcome.tool_calls if c.name == "read" and not c.failed]
    assert reads and all(c.file_paths and c.evidence_type == "file_history" for c in reads)


def test_parse_session_file_pi_v3_uses_entry_ids(tmp_path: Path) -> None:
    user = {"role": "user", "content": [{"type": "text", "text": "run the tests"}]}
    lines = [
        {"type": "session", "version": 3, "id": "s-1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/r"},
        {"type": "message", "id": "a1b2c3d4", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z"},
        {"type": "session_info", "id": "e5f6a7b8", "parentId": "a1b2c3d4"},
    ]
    lines[1]["message"] = user
    lines[2] |= {"timestamp": "2026-01-01T00:00:02.000Z", "name": "Test run"}
    path = tmp_path / "2026-01-01T00-00-00-000Z_s-1.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    outcome = parse_session_file(path, "pi")
    assert outcome.format_version == "pi-v3"
    assert outcome.messages[0].record_uid == "pi:a1b2c3d4:2026-01-01T00:00:01.000Z"
    assert outcome.sessions[0].title == "Test run"
