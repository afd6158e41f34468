"""Codex before `exec_command`: a `shell_command` call's output opens with "Exit code: N" (0.5x-0.7x),
and a `shell` call that failed inside the sandbox answers only "failed in sandbox … with execution
error: …" (0.3x-0.5x), "sandbox denied" for any non-zero exit there, a failing test's too: both are
the call's outcome, and what the command printed is its output. `apply_patch` run through the shell
tool is an edit. Hand-written lines in the shape of real rollouts (fifth harvest: Codex 0.34-0.72);
the commands and outputs are invented."""

import json
from pathlib import Path
from typing import Any

from obelisk_session_evidence.providers.failure_causes import failure_cause
from obelisk_session_evidence.providers.native.index.refresh import refresh_index
from obelisk_session_evidence.providers.native.index.store import connect, index_file
from obelisk_session_evidence.providers.native.parsers import parse_session_file
from obelisk_session_evidence.providers.native.records import ToolCallRecord
from tests.providers.native.codex_rollouts import write_rollout
from tests.providers.native.index.older_index import before_migration, evidence_types

SESSION = "019b0000-0000-7000-8000-0000000e1c0d"
DENIED = (
    "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 1,"
    ' stdout: "", stderr: "touch: cannot touch \'/etc/hosts\': Permission denied\\n"'
)


PATCH = "*** Begin Patch\n*** Update File: src/cli.py\n@@\n-old = 1\n+new = 2\n*** End Patch"
TEST_FAILED = (
    "failed in sandbox LinuxSeccomp with execution error: sandbox denied exec error, exit code: 1,"
    " stdout: .F.\n=== FAILURES ===\nFAILED tests/test_cli.py::test_alias - AssertionError\n1 failed, 2 passed in 0.1s"
    "\n, stderr: "
)
UNCLOSED_HERE_DOCUMENT = json.dumps(
    {
        "output": "bash: line 7: warning: here-document at line 1 delimited by end-of-file (wanted `PATCH')\n"
        "Success. Updated the following files:\nM src/cli.py\n",
        "metadata": {"exit_code": 0},
    }
)


def _shell_command(call_id: str, command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command, "workdir": "/work/alpha"})
    return {"type": "function_call", "name": "shell_command", "call_id": call_id, "arguments": arguments}


def _shell(call_id: str, command: str | list[str]) -> dict[str, Any]:
    argv = ["bash", "-lc", command] if isinstance(command, str) else command
    arguments = json.dumps({"command": argv, "workdir": "/work/alpha", "timeout_ms": 120000})
    return {"type": "function_call", "name": "shell", "call_id": call_id, "arguments": arguments}


def _output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _status(code: int, body: str) -> str:
    return f"Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{body}"


def _rollout(root: Path, items: list[dict[str, Any]]) -> Path:
    return write_rollout(root, SESSION, items, version="0.72.0", day="2025-12-15")


def _calls(tmp_path: Path, items: list[dict[str, Any]]) -> list[ToolCallRecord]:
    return list(parse_session_file(_rollout(tmp_path, items), "codex").tool_calls)


def test_a_shell_command_status_line_is_its_outcome(tmp_path: Path) -> None:
    failed, passed = _calls(
        tmp_path,
        [
            _shell_command("c1", "pytest -q"),
            _output("c1", _status(1, "FAILED tests/test_cli.py::test_alias - AssertionError\n1 failed")),
            _shell_command("c2", "git status --short"),
            _output("c2", _status(0, " M src/cli.py\n")),
        ],
    )
    assert (failed.command_text, failed.exit_code, failed.outcome) == ("pytest -q", 1, "failed")
    assert (passed.exit_code, passed.outcome) == (0, "succeeded")


def test_a_status_line_in_the_printed_output_is_not_the_call_s(tmp_path: Path) -> None:
    (call,) = _calls(tmp_path, [_shell_command("c1", "cat notes.txt"), _output("c1", "Exit code: 3\n")])
    assert (call.exit_code, call.outcome) == (None, "unknown")


def test_a_command_that_failed_in_the_sandbox_failed(tmp_path: Path) -> None:
    denied, timed_out = _calls(
        tmp_path,
        [
            _shell("c1", "touch /etc/hosts"),
            _output("c1", DENIED),
            _shell("c2", "sleep 600"),
            _output("c2", "failed in sandbox None with execution error: command timed out"),
        ],
    )
    assert (denied.exit_code, denied.is_error, denied.outcome) == (1, True, "failed")
    assert (timed_out.exit_code, timed_out.is_error, timed_out.outcome) == (None, True, "failed")


def test_a_program_that_could_not_start_failed(tmp_path: Path) -> None:
    arguments = json.dumps({"command": ["rg", "-n", "docs", "-l"], "workdir": "/work/alpha"})
    started = {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": arguments}
    (call,) = _calls(tmp_path, [started, _output("c1", "execution error: No such file or directory (os error 2)")])
    assert (call.command_text, call.exit_code, call.is_error, call.outcome) == ("rg -n docs -l", None, True, "failed")


def test_an_index_that_stored_a_program_not_started_as_no_outcome_reads_it_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    arguments = json.dumps({"command": ["rg", "-n", "docs"], "workdir": "/work/alpha"})
    started = {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": arguments}
    _rollout(codex, [started, _output("c1", "execution error: No such file or directory (os error 2)")])
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})
    assert evidence_types(path) == [("rg -n docs", "prior_failure")]
    undo = ("UPDATE entries SET exit_code = NULL, is_error = NULL, evidence_type = 'tool_outcome'",)
    before_migration(path, "0020_codex_programs_not_started", undo=undo)
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert evidence_types(path) == [("rg -n docs", "prior_failure")]


def test_a_command_s_own_failure_under_the_sandbox_wrapper_is_read_from_what_it_printed(tmp_path: Path) -> None:
    (call,) = _calls(tmp_path, [_shell("c1", "pytest -q"), _output("c1", TEST_FAILED)])
    assert (call.exit_code, call.outcome) == (1, "failed")
    assert call.output_excerpt is not None and call.output_excerpt.startswith(".F.\n=== FAILURES")
    cause = failure_cause(call.command_text or "", exit_code=call.exit_code, output=call.output_excerpt)
    assert cause is not None and cause.kind == "test_failed"  # not "permission_denied" for the wrapper's words


def test_apply_patch_through_the_shell_tool_is_an_edit(tmp_path: Path) -> None:
    as_argv, as_here_document, then_tests, malformed, unclosed = _calls(
        tmp_path,
        [
            _shell("c1", ["apply_patch", PATCH]),
            _output(
                "c1", '{"output":"Success. Updated the following files:\\nM src/cli.py\\n","metadata":{"exit_code":0}}'
            ),
            _shell("c2", f"apply_patch <<'PATCH'\n{PATCH}\nPATCH\n"),
            _output("c2", '{"output":"Success.","metadata":{"exit_code":0}}'),
            _shell("c3", f"apply_patch <<'PATCH'\n{PATCH}\nPATCH\npytest -q"),
            _output("c3", '{"output":"1 passed","metadata":{"exit_code":0}}'),
            _shell("c4", ["apply_patch", "*** Begin Patch\n*** Update File: src/cli.py\n@@\n-old = 1\n+new = 2"]),
            _output("c4", "error: Failed to find expected lines in src/cli.py"),
            # As Monotoba/OpenPrintKit's rollouts hold it: the delimiter line is missing.
            _shell("c5", f"apply_patch << 'PATCH'\n{PATCH}"),
            _output("c5", UNCLOSED_HERE_DOCUMENT),
        ],
    )
    for edit in (as_argv, as_here_document, unclosed):
        assert (edit.name, edit.command_text, edit.file_paths) == (
            "apply_patch",
            "*** Update File: src/cli.py",
            ("src/cli.py",),
        )
    assert then_tests.name == "shell"  # it runs more than the patch: a shell call still
    assert malformed.name == "apply_patch"  # a patch without its end line is a patch the tool refused


def test_an_index_that_stored_older_statuses_as_no_outcome_reads_them_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    _rollout(
        codex,
        [
            _shell_command("c1", "pytest -q"),
            _output("c1", _status(1, "1 failed")),
            _shell("c2", "touch /etc/hosts"),
            _output("c2", DENIED),
        ],
    )
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})
    read = [("pytest -q", "prior_failure"), ("touch /etc/hosts", "prior_failure")]
    assert evidence_types(path) == read
    undo = (  # as the release before stored them: no exit code, no error flag, no failure
        "UPDATE entries SET exit_code = NULL, is_error = NULL, evidence_type = 'tool_outcome' WHERE kind = 'tool_call'",
    )
    before_migration(path, "0018_codex_older_shell_calls", undo=undo)
    assert evidence_types(path) == [(command, "tool_outcome") for command, _ in read]
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert evidence_types(path) == read
    connection = connect(path)
    try:
        stored = connection.execute("SELECT exit_code, is_error FROM entries WHERE kind = 'tool_call' ORDER BY id")
        assert stored.fetchall() == [(1, None), (1, 1)]  # the status line says the exit code only
    finally:
        connection.close()


def test_an_index_that_stored_a_patch_as_a_shell_command_reads_it_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    _rollout(
        codex, [_shell("c1", ["apply_patch", PATCH]), _output("c1", '{"output":"Done","metadata":{"exit_code":0}}')]
    )
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})

    def tool_names() -> list[str]:
        connection = connect(path)
        try:
            return [name for (name,) in connection.execute("SELECT tool_name FROM entries WHERE kind = 'tool_call'")]
        finally:
            connection.close()

    assert tool_names() == ["apply_patch"]
    undo = (  # as the release before stored it: a shell call whose command is the patch's header
        "UPDATE entries SET tool_name = 'shell'",
        "UPDATE entry_text SET command = '*** Update File: src/cli.py'",
    )
    before_migration(path, "0018_codex_older_shell_calls", undo=undo)
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert tool_names() == ["apply_patch"]


def test_an_index_that_stored_an_unclosed_patch_document_as_a_shell_command_reads_it_again(tmp_path: Path) -> None:
    codex = tmp_path / "codex"
    _rollout(codex, [_shell("c1", f"apply_patch << 'PATCH'\n{PATCH}"), _output("c1", UNCLOSED_HERE_DOCUMENT)])
    path = index_file(tmp_path / "state" / "index")
    refresh_index(path, {"codex": [codex]})
    edit = [("apply_patch src/cli.py", "file_history")]
    assert evidence_types(path) == edit
    undo = (  # as the release before stored it: a shell call whose command is the patch's header
        "UPDATE entries SET tool_name = 'shell', evidence_type = 'tool_outcome'",
        "UPDATE entry_text SET command = '*** Update File: src/cli.py'",
    )
    before_migration(path, "0021_codex_unclosed_patch_documents", undo=undo)
    assert evidence_types(path) != edit
    report = refresh_index(path, {"codex": [codex]})
    assert (report.files_added, report.files_reread) == (0, 1)
    assert evidence_types(path) == edit
