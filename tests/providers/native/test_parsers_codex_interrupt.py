"""Codex: the agent stopping its own running process with Ctrl-C (`write_stdin` of "\\u0003", as
real rollouts do to end a dev server it started). The status the process then ends with (130, or 1
from a wrapper such as npm) is the agent's doing: the call's outcome is unknown, not a failure.
Hand-written lines in the shape of real rollouts; the commands and outputs are invented."""

import json
from pathlib import Path
from typing import Any

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.records import ToolCallRecord
from tests.providers.native.codex_rollouts import write_rollout
from tests.providers.native.index.older_index import before_migration, evidence_types, stored_as_failures
from tests.providers.native.test_call_places import _rollout as _plain_rollout
from tests.providers.native.test_parsers_incremental import _assert_resumed_equals_whole, _parse_in_two

SESSION = "019f0000-0000-7000-8000-0000000c7a1c"
SERVER = "npm run dev -- --host 127.0.0.1"


def _exec(call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"cmd": command, "workdir": "/work/alpha", "yield_time_ms": 1000})
    return {"type": "function_call", "name": "exec_command", "call_id": call_id, "arguments": arguments}


def _stdin(call_id: str, session: int, chars: str) -> dict[str, Any]:
    arguments = json.dumps({"session_id": session, "chars": chars, "yield_time_ms": 1000})
    return {"type": "function_call", "name": "write_stdin", "call_id": call_id, "arguments": arguments}


def _output(call_id: str, header: str, body: str) -> dict[str, Any]:
    text = f"Chunk ID: 1a2b3c\nWall time: 1.0 seconds\n{header}\nOutput:\n{body}"
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _ended(call_id: str, code: int) -> dict[str, Any]:
    return {"type": "exec_command_end", "call_id": call_id, "exit_code": code, "status": "failed"}


def _server_session(stop: str, code: int) -> list[dict[str, Any]]:
    """A dev server left running, polled once, then sent `stop`; it ends with `code`."""
    return [
        _exec("c1", SERVER),
        _output("c1", "Process running with session ID 4242", "  VITE v5.4.21  ready in 79 ms\n"),
        _stdin("c2", 4242, ""),
        _output("c2", "Process running with session ID 4242", "  Local:   http://127.0.0.1:5173/\n"),
        _stdin("c3", 4242, stop),
        _output("c3", f"Process exited with code {code}", "^C\n"),
    ]


def _rollout(root: Path, items: list[dict[str, Any]]) -> Path:
    return write_rollout(root, SESSION, items, version="0.139.0", day="2026-07-14")


def _call(tmp_path: Path, items: list[dict[str, Any]]) -> ToolCallRecord:
    outcome = parse_session_file(_rollout(tmp_path, items), "codex")
    (call,) = outcome.tool_calls
    return call


def test_a_process_the_agent_interrupted_has_no_outcome(tmp_path: Path) -> None:
    for code in (130, 1):  # SIGINT's status, and npm's own after its child was interrupted
        call = _call(tmp_path / str(code), _server_session("\u0003", code))
        assert (call.command_text, call.exit_code, call.is_error) == (SERVER, None, None)
        assert call.outcome == "unknown" and call.evidence_type == "tool_outcome"
        assert call.output_excerpt is not None and call.output_excerpt.rstrip().endswith("^C")


def test_a_process_that_failed_on_its_own_still_failed(tmp_path: Path) -> None:
    """Input other than Ctrl-C (an answer to a prompt) leaves the status the program's own."""
    call = _call(tmp_path, _server_session("y\n", 1))
    assert (call.exit_code, call.outcome, call.evidence_type) == (1, "failed", "prior_failure")


def test_the_end_event_of_an_interrupted_process_is_not_its_outcome(tmp_path: Path) -> None:
    """Some versions also write `exec_command_end` with the status (and `status: failed`)."""
    call = _call(tmp_path, [*_server_session("\u0003", 130), _ended("c1", 130)])
    assert (call.exit_code, call.is_error, call.outcome) == (None, None, "unknown")
    ended_on_its_own = _call(tmp_path / "own", [_exec("c1", "make build"), _ended("c1", 2)])
    assert (ended_on_its_own.exit_code, ended_on_its_own.is_error, ended_on_its_own.outcome) == (2, True, "failed")


def test_an_interrupt_read_in_one_parse_holds_in_the_next(tmp_path: Path) -> None:
    """The file grows between the Ctrl-C and the status it ends with."""
    path = _rollout(tmp_path / "whole", _server_session("\u0003", 130))
    parts = _parse_in_two(path, "codex", split_line=6, tmp_path=tmp_path / "parts")
    assert parts[0].resume.interrupted_calls == ("c1",)
    _assert_resumed_equals_whole(path, "codex", parts)
    (call,) = parts[1].tool_calls
    assert (call.exit_code, call.outcome) == (None, "unknown")


def test_an_index_that_stored_interrupted_processes_as_failures_reads_them_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    _rollout(codex, _server_session("\u0003", 130))
    _plain_rollout(codex, "019f0000-0000-7000-8000-0000000000aa", "/work/alpha", [("p1", "make lint", None, 2, "")])
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})
    read = [(SERVER, "tool_outcome"), ("make lint", "prior_failure")]
    assert sorted(evidence_types(path)) == sorted(read)
    stored_as_failures(path, SERVER)  # as the release before stored the server's Ctrl-C
    before_migration(path, "0017_codex_interrupted_processes")
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert sorted(evidence_types(path)) == sorted(read)
