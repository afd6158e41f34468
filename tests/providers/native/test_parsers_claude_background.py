"""Claude Code: a Bash call run in the background answers at once (`Command running in background
with ID: X`) and has no outcome then. A later `TaskOutput` (earlier `BashOutput`) that finds task X
completed gives it its exit code and output; a task the agent stopped (`TaskStop`, earlier
`KillShell`) leaves it with none. Lines in the shape of real transcripts (the shared corpus's
claude-spotter, and chkit's); the commands and outputs are invented."""

import json
from pathlib import Path
from typing import Any

from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import index_file
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.records import ToolCallRecord
from tests.providers.native.index.older_index import before_migration, evidence_types
from tests.providers.native.test_parsers_incremental import _assert_resumed_equals_whole, _parse_in_two

SESSION = "5d6e7f80-0000-4000-8000-00000000b6d0"
STARTED = (
    "Command running in background with ID: {task}. Output is being written to: /tmp/claude-501/tasks/{task}.output"
)


def _read(task: str, status: str, body: str, code: int | None = None) -> str:
    exit_line = f"<exit_code>{code}</exit_code>\n\n" if code is not None else ""
    return (
        f"<retrieval_status>success</retrieval_status>\n\n<task_id>{task}</task_id>\n\n"
        f"<task_type>local_bash</task_type>\n\n<status>{status}</status>\n\n{exit_line}<output>\n{body}\n</output>"
    )


def _use(use_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": use_id, "name": name, "input": arguments}


def _result(use_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": use_id, "content": text, "is_error": is_error}


def _transcript(root: Path, blocks: list[dict[str, Any]]) -> Path:
    """One line per block: a tool_use on an assistant line, a tool_result on a user line."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{SESSION}.jsonl"
    lines = []
    for number, block in enumerate(blocks):
        role = "assistant" if block["type"] == "tool_use" else "user"
        message = {"role": role, "content": [block]} | ({"id": f"msg_{number}"} if role == "assistant" else {})
        lines.append(
            {
                "type": role,
                "uuid": f"00000000-0000-4000-8000-{number:012d}",
                "sessionId": SESSION,
                "cwd": "/work/alpha",
                "version": "2.1.170",
                "timestamp": f"2026-07-14T09:00:{number:02d}.000Z",
                "message": message,
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _background_test_run(read_name: str = "TaskOutput", key: str = "task_id") -> list[dict[str, Any]]:
    """`bun run test` in the background, read once while running, then once completed with exit 1."""
    return [
        _use("u1", "Bash", {"command": "bun run test", "run_in_background": True}),
        _result("u1", STARTED.format(task="b15a2a3")),
        _use("u2", read_name, {key: "b15a2a3", "block": True, "timeout": 120000}),
        _result("u2", _read("b15a2a3", "running", "$ bun test")),
        _use("u3", read_name, {key: "b15a2a3", "block": True, "timeout": 300000}),
        _result("u3", _read("b15a2a3", "completed", "(fail) auth > refreshes the token\n 1 fail", 1)),
    ]


def _bash(path: Path) -> ToolCallRecord:
    (call,) = [call for call in parse_session_file(path, "claude").tool_calls if call.name == "Bash"]
    return call


def test_a_background_run_takes_the_outcome_its_completed_task_reports(tmp_path: Path) -> None:
    for reader, key in (("TaskOutput", "task_id"), ("BashOutput", "bash_id")):
        call = _bash(_transcript(tmp_path / reader, _background_test_run(reader, key)))
        assert (call.command_text, call.exit_code, call.is_error, call.outcome) == ("bun run test", 1, True, "failed")
        assert call.output_excerpt is not None and call.output_excerpt.startswith("(fail) auth > refreshes the token")


def test_only_the_report_s_header_is_its_status(tmp_path: Path) -> None:
    printed = "<status>completed</status>\n<exit_code>0</exit_code>\n1 fail"  # a test's fixture, echoed
    blocks = [*_background_test_run()[:4], _use("u3", "TaskOutput", {"task_id": "b15a2a3"})]
    blocks.append(_result("u3", _read("b15a2a3", "completed", printed, 1)))
    call = _bash(_transcript(tmp_path, blocks))
    assert (call.exit_code, call.outcome) == (1, "failed")
    assert call.output_excerpt == printed


def test_a_background_run_has_no_outcome_while_it_runs_or_once_stopped(tmp_path: Path) -> None:
    running = _background_test_run()[:4]
    assert _bash(_transcript(tmp_path / "running", running)).outcome == "unknown"
    server = [
        _use("u1", "Bash", {"command": "npm run dev", "run_in_background": True}),
        _result("u1", STARTED.format(task="b420c38")),
        _use("u2", "TaskStop", {"task_id": "b420c38"}),
        _result(
            "u2", json.dumps({"message": "Successfully stopped task: b420c38 (npm run dev)", "task_id": "b420c38"})
        ),
        _use("u3", "TaskOutput", {"task_id": "b420c38", "block": False}),
        _result("u3", _read("b420c38", "completed", "^C", 143)),
    ]
    call = _bash(_transcript(tmp_path / "stopped", server))
    assert (call.exit_code, call.is_error, call.outcome) == (None, None, "unknown")


def test_a_task_read_in_a_later_parse_completes_the_run(tmp_path: Path) -> None:
    path = _transcript(tmp_path / "whole", _background_test_run())
    parts = _parse_in_two(path, "claude", split_line=4, tmp_path=tmp_path / "parts")
    assert parts[0].resume.process_calls == (("b15a2a3", "u1"),)
    _assert_resumed_equals_whole(path, "claude", parts)
    (call,) = [call for call in parts[1].tool_calls if call.name == "Bash"]
    assert (call.exit_code, call.outcome) == (1, "failed")


def test_an_index_that_stored_background_runs_as_successes_reads_them_again(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    _transcript(claude / "-work-alpha", _background_test_run())
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"claude": [claude]})
    assert ("bun run test", "prior_failure") in evidence_types(path)
    undo = (  # as the release before stored it: the answer at once was a success
        "UPDATE entries SET exit_code = NULL, is_error = 0, evidence_type = 'tool_outcome'"
        " WHERE id IN (SELECT rowid FROM entry_text WHERE command = 'bun run test')",
        f"UPDATE entry_text SET body = '{STARTED.format(task='b15a2a3')}' WHERE command = 'bun run test'",
    )
    before_migration(path, "0019_claude_background_tasks", undo=undo)
    assert ("bun run test", "tool_outcome") in evidence_types(path)
    report = refresh_index(path, {"claude": [claude]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert ("bun run test", "prior_failure") in evidence_types(path)
