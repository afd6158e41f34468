"""Codex rollouts: every real file against an independent scan; joins, folding and dedupe."""

import json
import re
from pathlib import Path

import pytest

from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.parsers.codex import read_thread_names
from tests.providers.native.conftest import json_lines, real_files, requires_real_corpus

pytestmark = requires_real_corpus

CODEX_FILES = real_files("codex-*/*.jsonl")
_RUNNING = re.compile(r"Process running with session ID (\d+)")
_EXITED = re.compile(r"Process exited with code (-?\d+)")


def _independent_scan(path: Path) -> dict[str, int]:
    """Straight from the lines: calls other than write_stdin polls, nonzero exits, visible messages."""
    records = list(json_lines(path))
    payloads = [(r["type"], r["payload"]) for r in records]
    calls = {p["call_id"]: p["name"] for t, p in payloads if p.get("type") == "function_call"}
    patches = [p for t, p in payloads if p.get("type") == "custom_tool_call"]
    polls = {cid for cid, name in calls.items() if name == "write_stdin"}
    started_by: dict[str, str] = {}
    exit_codes: dict[str, int] = {}
    poll_process = {
        p["call_id"]: str(json.loads(p["arguments"])["session_id"])
        for t, p in payloads
        if p.get("type") == "function_call" and p["name"] == "write_stdin"
    }
    for _kind, payload in payloads:
        if payload.get("type") == "function_call_output":
            call_id = payload["call_id"]
            owner = started_by.get(poll_process.get(call_id, ""), call_id) if call_id in polls else call_id
            if running := _RUNNING.search(payload["output"][:300]):
                started_by[running.group(1)] = owner
            if exited := _EXITED.search(payload["output"][:300]):
                exit_codes[owner] = int(exited.group(1))
        elif payload.get("type") == "exec_command_end":
            exit_codes[payload["call_id"]] = payload["exit_code"]
    item_texts = {
        (p["role"], "\n".join(c["text"] for c in p["content"]))
        for t, p in payloads
        if t == "response_item" and p.get("type") == "message" and p["role"] in ("user", "assistant")
    }
    events = {
        ("user" if p["type"] == "user_message" else "assistant", p["message"])
        for t, p in payloads
        if t == "event_msg" and p.get("type") in ("user_message", "agent_message")
    }
    return {
        "tool_calls": len(calls) - len(polls) + len(patches),
        "failures": sum(code != 0 for code in exit_codes.values()),
        "messages": len(item_texts | events),
    }


@pytest.mark.parametrize("path", CODEX_FILES, ids=lambda p: p.name)
def test_parse_session_file_codex_matches_independent_scan(path: Path) -> None:
    outcome = parse_session_file(path, "codex")
    expected = _independent_scan(path)
    assert outcome.skipped_total == 0, dict(outcome.skipped_records)
    assert len(outcome.tool_calls) == expected["tool_calls"]
    assert sum(call.failed for call in outcome.tool_calls) == expected["failures"]
    assert len(outcome.messages) == expected["messages"]
    assert not any(call.name == "write_stdin" for call in outcome.tool_calls)
    assert outcome.resume.process_calls == () and outcome.resume.stdin_calls == ()


def test_parse_session_file_codex_reads_session_meta_git() -> None:
    outcome = parse_session_file(CODEX_FILES[0], "codex")
    session = outcome.sessions[0]
    assert session.session_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert session.git_commit == "c8c252acd853de59c54b5c31374fec6028ee812e"
    assert session.git_branch == "feat/codex-agent-plugin"
    assert session.repository_url == "git@github.com:codemie-ai/codemie-code.git"
    assert outcome.format_version == "codex-0.125.0"


def test_parse_session_file_codex_folds_write_stdin_into_the_exec_call() -> None:
    # call_zOko…: "Process running with session ID 20936", two polls, then exit code 0.
    outcome = parse_session_file(CODEX_FILES[0], "codex")
    call = next(c for c in outcome.tool_calls if c.call_id == "call_zOko7eyx8Gir3nKA0m2HzUYU")
    assert call.name == "exec_command" and call.exit_code == 0 and not call.failed
    assert call.command_text is not None and call.command_text.startswith("sed -n '1,220p'")


def test_parse_session_file_codex_takes_apply_patch_paths_from_the_patch() -> None:
    outcome = parse_session_file(CODEX_FILES[0], "codex")
    patches = [c for c in outcome.tool_calls if c.name == "apply_patch"]
    assert [c.file_paths for c in patches] == [
        ("src/agents/plugins/__tests__/codemie-code-reasoning.test.ts",),
        ("src/agents/plugins/codemie-code.plugin.ts",),
        ("src/agents/plugins/opencode/opencode.plugin.ts",),
    ]
    assert all(c.evidence_type == "file_history" for c in patches)
    assert all((c.command_text or "").startswith("*** Update File:") for c in patches)


def test_parse_session_file_codex_exit_codes_make_prior_failures() -> None:
    outcome = parse_session_file(CODEX_FILES[0], "codex")
    failed = sorted((c.exit_code, c.command_text.split()[0]) for c in outcome.tool_calls if c.failed)
    assert failed == [(1, "npm"), (1, "rg"), (1, "rg"), (2, "rg")]
    # `rg "a|b"` exiting 1 found nothing (the `|` is inside its pattern): an answer, not a failure.
    types = sorted((c.exit_code, c.evidence_type) for c in outcome.tool_calls if c.failed)
    assert types == [(1, "prior_failure"), (1, "tool_outcome"), (1, "tool_outcome"), (2, "prior_failure")]


def test_parse_session_file_codex_keeps_one_copy_of_doubled_messages() -> None:
    outcome = parse_session_file(CODEX_FILES[0], "codex")
    texts = [m.text for m in outcome.messages]
    assert texts.count("show tools") == 1
    assert len(texts) == len(set(texts))
    injected = [m for m in outcome.messages if m.is_meta]
    assert [m.text.split("\n")[0] for m in injected] == [
        "# AGENTS.md instructions for /Users/Sample_User/repos/codemie-ai/codemie-code"
    ]


def test_read_thread_names_later_lines_win(tmp_path: Path) -> None:
    index = tmp_path / "session_index.jsonl"
    index.write_text(
        '{"id":"a","thread_name":"first","updated_at":"x"}\nnot json\n{"id":"a","thread_name":"renamed"}\n'
    )
    assert read_thread_names(index) == {"a": "renamed"}
    assert read_thread_names(tmp_path / "missing.jsonl") == {}


def test_parse_session_file_codex_names_the_thread_from_the_file_name_before_meta(tmp_path: Path) -> None:
    rollout = tmp_path / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    payload = {"type": "user_message", "message": "hi"}
    line = {"timestamp": "2026-05-11T08:27:17.490Z", "type": "event_msg", "payload": payload}
    rollout.write_text(json.dumps(line) + "\n")
    outcome = parse_session_file(rollout, "codex")
    assert outcome.sessions[0].session_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
    assert outcome.messages[0].session_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
