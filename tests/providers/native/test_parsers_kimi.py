"""Kimi sessions: the vendor's current-format samples and the real legacy kimi-cli session."""

import json
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.parsers import detect_source, parse_session_file
from tests.providers.native.conftest import REAL_CORPUS, json_lines, real_files, requires_real_corpus

pytestmark = requires_real_corpus

KIMI = REAL_CORPUS / "kimi-moonshotai"
LEGACY = KIMI / "legacy-kimi-cli" / "large-100msgs"
SAMPLES = KIMI / "sessions" / "wd_test_000000000000"


@pytest.mark.parametrize("path", real_files("kimi-moonshotai/**/*.json*"), ids=lambda p: str(p.relative_to(KIMI)))
def test_parse_session_file_kimi_accepts_any_file_of_a_session(path: Path) -> None:
    outcome = parse_session_file(path, "kimi")
    assert outcome.skipped_total == 0, dict(outcome.skipped_records)
    assert not outcome.resumable
    assert detect_source(path) == "kimi"


def test_parse_session_file_kimi_legacy_takes_calls_from_the_context() -> None:
    # SOURCE.md counts 28 ToolCall/ToolResult events in wire.jsonl; context.jsonl holds 34 calls
    # and 34 results. Both fixture files were cut at 130 lines, and the wire log is the shorter
    # view: it has 2 TurnBegin and 1 TurnEnd for the context's 3 user messages, and its 28 call
    # ids are a subset of the context's 34. The conversation (context) is right: 34 calls.
    context = list(json_lines(LEGACY / "context.jsonl"))
    context_calls = {c["id"] for e in context if e["role"] == "assistant" for c in e.get("tool_calls") or ()}
    wire = [line["message"] for line in json_lines(LEGACY / "wire.jsonl") if "message" in line]
    wire_calls = {m["payload"]["id"] for m in wire if m["type"] == "ToolCall"}
    assert (len(context_calls), len(wire_calls)) == (34, 28) and wire_calls < context_calls
    assert sum(m["type"] == "TurnBegin" for m in wire) == 2
    assert sum(e["role"] == "user" for e in context) == 3
    outcome = parse_session_file(LEGACY, "kimi")
    assert {c.call_id for c in outcome.tool_calls} == context_calls
    assert sum(c.failed for c in outcome.tool_calls) == 0  # no ToolResult is_error, no ERROR text
    assert outcome.format_version == "kimi-cli-1.4"
    assert all(c.timestamp is not None for c in outcome.tool_calls)


def test_parse_session_file_kimi_legacy_reads_messages_and_files() -> None:
    outcome = parse_session_file(LEGACY, "kimi")
    assert outcome.sessions[0].session_id == "large-100msgs"
    assert outcome.sessions[0].cwd is None  # the legacy layout does not record it
    assert sum(m.role == "user" for m in outcome.messages) == 3
    reads = [c for c in outcome.tool_calls if c.name == "ReadFile"]
    assert len(reads) == 11 and all(c.file_paths and c.evidence_type == "file_history" for c in reads)
    shells = [c for c in outcome.tool_calls if c.name == "Shell"]
    assert len(shells) == 14 and shells[0].command_text.startswith("git diff main --name-only")


def test_parse_session_file_kimi_current_splits_sub_agents() -> None:
    outcome = parse_session_file(SAMPLES / "sample-main" / "state.json", "kimi")
    main, sub = outcome.sessions
    assert (main.session_id, main.cwd, main.title) == ("sample-main", "/tmp/work", "fixture: hello world")
    assert (sub.session_id, sub.parent_session_id) == ("sample-main:agent-0", "sample-main")
    assert [(m.role, m.text) for m in outcome.messages] == [("user", "hi"), ("assistant", "hello")]
    assert outcome.format_version == "kimi-wire-1.1"


def test_parse_session_file_kimi_current_reads_compaction() -> None:
    outcome = parse_session_file(SAMPLES / "sample-compaction", "kimi")
    assert [(s.kind, s.text) for s in outcome.summaries] == [
        ("title", "fixture: compaction"),
        ("compaction", "compacted summary"),
    ]
    assert [m.text for m in outcome.messages] == ["before compaction", "assistant reply", "after compaction"]


def _wire(session_dir: Path, records: list[dict[str, object]]) -> Path:
    (session_dir / "agents" / "main").mkdir(parents=True)
    state = {"id": "s1", "cwd": "/repo", "createdAt": 1779256791085}
    (session_dir / "state.json").write_text(json.dumps(state))
    wire = session_dir / "agents" / "main" / "wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records))
    return session_dir


def _append(role: str, text: str, message_id: str, **fields: object) -> dict[str, object]:
    message = {"id": message_id, "role": role, "content": [{"type": "text", "text": text}]} | fields
    return {"type": "context.append_message", "message": message, "time": 1779256800000}


def test_parse_session_file_kimi_undo_drops_messages_but_keeps_calls(tmp_path: Path) -> None:
    call = {"id": "t1", "function": {"name": "Shell", "arguments": '{"command": "rm -rf build"}'}}
    session_dir = _wire(
        tmp_path / "s1",
        [
            _append("user", "keep this", "m1"),
            _append("user", "clean the build", "m2"),
            _append("assistant", "Cleaning.", "m3", toolCalls=[call]),
            _append("tool", "Command failed with exit code: 2", "m4", toolCallId="t1", isError=True),
            {"type": "context.undo", "count": 1, "time": 1779256800001},
            {"type": "context.clear", "time": 1779256800002},
        ],
    )
    outcome = parse_session_file(session_dir, "kimi")
    assert [m.text for m in outcome.messages] == ["keep this"]
    (shell,) = outcome.tool_calls
    assert (shell.command_text, shell.exit_code, shell.evidence_type) == ("rm -rf build", 2, "prior_failure")


def test_parse_session_file_kimi_counts_unknown_records(tmp_path: Path) -> None:
    session_dir = _wire(tmp_path / "s1", [{"type": "future.thing", "time": 1}, _append("user", "hi", "m1")])
    outcome = parse_session_file(session_dir, "kimi")
    assert dict(outcome.skipped_records) == {"unknown_type": 1}
    assert [m.text for m in outcome.messages] == ["hi"]


def test_parse_session_file_kimi_state_without_wire_is_the_session_alone(tmp_path: Path) -> None:
    (tmp_path / "s9").mkdir()
    (tmp_path / "s9" / "state.json").write_text(json.dumps({"id": "s9", "cwd": "/repo", "title": "new"}))
    outcome = parse_session_file(tmp_path / "s9", "kimi")
    assert [(s.session_id, s.cwd, s.title) for s in outcome.sessions] == [("s9", "/repo", "new")]
    assert outcome.messages == () and outcome.skipped_total == 0
