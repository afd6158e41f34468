"""Codex legacy rollouts (mid-2025, before `session_meta`): a first line `{id, timestamp,
instructions, git}`, `record_type: state` lines, and response items written as lines of their own,
without timestamps; the folder is named only by the injected `<environment_context>` message
(`Current working directory: /x`). Hand-written lines in the shape of real rollouts (JaydenXsoe/ocodex,
Apache-2.0); the commands and outputs are invented."""

import json
from pathlib import Path
from typing import Any

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from tests.providers.native.index.older_index import before_migration, evidence_types

SESSION = "3cf49b45-0000-4000-8000-00000000ab1e"
CONTEXT = (
    "<environment_context>\nCurrent working directory: /work/alpha\nApproval policy: on-request\n"
    "Sandbox mode: workspace-write\n</environment_context>"
)


def _message(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


def _shell(call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": ["bash", "-lc", command], "timeout_ms": 120000})
    return {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": call_id}


def _output(call_id: str, text: str, code: int) -> dict[str, Any]:
    output = json.dumps({"output": text, "metadata": {"exit_code": code, "duration_seconds": 1.2}})
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _legacy_rollout(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"rollout-2025-08-21T06-29-22-{SESSION}.jsonl"
    meta = {"id": SESSION, "timestamp": "2025-08-21T06:29:22.408Z", "instructions": None, "git": {"branch": "main"}}
    lines = [
        meta,
        {"record_type": "state"},
        _message("user", CONTEXT),
        _message("user", "make the build pass"),
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"},
        _shell("call_1", "cargo build"),
        _output("call_1", "error[E0425]: cannot find value `x` in this scope\n --> src/main.rs:3:5", 101),
        {"record_type": "state"},
        _shell("call_2", "git status --short"),
        _output("call_2", " M src/main.rs\n", 0),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_legacy_rollout_is_read(tmp_path: Path) -> None:
    outcome = parse_session_file(_legacy_rollout(tmp_path), "codex")
    (session,) = outcome.sessions
    assert (session.session_id, session.cwd) == (SESSION, "/work/alpha")
    failed, passed = outcome.tool_calls
    assert (failed.command_text, failed.exit_code, failed.outcome) == ("cargo build", 101, "failed")
    assert (passed.command_text, passed.exit_code, passed.outcome) == ("git status --short", 0, "succeeded")
    assert outcome.skipped_total == 0
    assert [message.text for message in outcome.messages if not message.is_meta] == ["make the build pass"]


def test_an_index_that_read_nothing_of_a_legacy_rollout_reads_it_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    _legacy_rollout(codex)
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})
    read = [("cargo build", "prior_failure"), ("git status --short", "tool_outcome")]
    assert evidence_types(path) == read
    undo = ("DELETE FROM call_sessions", "DELETE FROM call_details", "DELETE FROM entry_text", "DELETE FROM entries")
    before_migration(path, "0018_codex_older_shell_calls", undo=undo)
    assert evidence_types(path) == []  # as the release before left it: nothing read
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert evidence_types(path) == read
