"""The tool-snippet format: writer and parser agree, and the outcome line has one grammar."""

import pytest

from obelisk_session_evidence.contracts.snippets import (
    canonical_outcome_line,
    command_of_snippet,
    outcome_line,
    parse_tool_snippet,
    tool_snippet,
)


@pytest.mark.parametrize(
    ("exit_code", "is_error", "expected"),
    [(0, None, "exit 0"), (2, True, "exit 2"), (None, True, "error"), (None, False, "ok"), (None, None, "unknown")],
)
def test_outcome_line_table(exit_code, is_error, expected: str) -> None:
    assert outcome_line(exit_code=exit_code, is_error=is_error) == expected


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        ("exit 1", "exit 1"),
        (" EXIT  01 ", "exit 1"),
        ("ok", "ok"),
        ("Error", "error"),
        ("exited with 1", "unknown"),
        ("failed: secret", "unknown"),
        ("", "unknown"),
    ],
)
def test_canonical_outcome_line_table(outcome: str, expected: str) -> None:
    assert canonical_outcome_line(outcome) == expected


@pytest.mark.parametrize(
    ("outcome", "failed"),
    [("exit 0", False), ("exit 1", True), ("exit -9", True), ("ok", False), ("error", True), ("unknown", None)],
)
def test_parse_tool_snippet_round_trip(outcome: str, failed) -> None:
    parsed = parse_tool_snippet(tool_snippet("pytest  -x\n tests/a.py", outcome, "FAILED a\nline 2"))
    assert parsed is not None
    assert parsed.command == "pytest -x tests/a.py"
    assert parsed.failed is failed
    assert parsed.output_excerpt == "FAILED a\nline 2"
    assert parsed.command_truncated is False


def test_parse_tool_snippet_not_a_tool_call() -> None:
    assert parse_tool_snippet("Decision: keep validation in auth.py") is None
    assert command_of_snippet("$ ") is None


def test_parse_tool_snippet_cut_in_command_line() -> None:
    parsed = parse_tool_snippet("$ pytest tests/test_a…")
    assert parsed is not None and parsed.command == "pytest tests/test_a"
    assert parsed.command_truncated and parsed.outcome == "unknown"


def test_parse_tool_snippet_cut_outcome_line_is_unknown() -> None:
    parsed = parse_tool_snippet("$ make test\nexi…")
    assert parsed is not None and parsed.outcome == "unknown" and parsed.failed is None


def test_command_of_snippet_reads_the_command() -> None:
    assert command_of_snippet(tool_snippet("git push", "exit 1", "rejected")) == "git push"


def test_parse_tool_snippet_cut_before_command() -> None:
    parsed = parse_tool_snippet("$ …pytest tests/test_a.py\nexit 1\n")
    assert parsed is not None and parsed.command == "pytest tests/test_a.py" and parsed.command_truncated
